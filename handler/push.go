package handler

import (
	"cmp"
	"context"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"github.com/refdata/refdata/catalog"
	"github.com/refdata/refdata/gen"
	"github.com/refdata/refdata/push"
	"github.com/refdata/refdata/representation"
)

// Change push (package push holds the requests): which waits and streams
// are held, within MaxWaiters and MaxHeldPerClient, and their answers.

const (
	// DefaultMaxWaiters is Server.MaxWaiters when unset.
	DefaultMaxWaiters = 10000
	// DefaultMaxHeldPerClient is Server.MaxHeldPerClient when unset: a client
	// needs one stream, or a wait per replica it follows; a hundred leaves room
	// for clients behind one NAT address.
	DefaultMaxHeldPerClient = 100
	// DefaultStreamFor is Server.StreamFor when unset.
	DefaultStreamFor = 15 * time.Minute
	// retryAfter is Retry-After past MaxWaiters or MaxHeldPerClient, in seconds.
	retryAfter = "5"
	waitLabel  = "/v1/version?wait"
)

// held counts a Server's held requests, by client too (MaxHeldPerClient).
type held struct {
	n       atomic.Int64
	clients perClient
	hubOnce sync.Once
	hub     *push.Hub
}

// hub is the Server's push.Hub, made at first use (Logger is set by then).
func (s *Server) hub() *push.Hub {
	s.held.hubOnce.Do(func() { s.held.hub = push.New(s.Repo, s.Logger) })
	return s.held.hub
}

// Held is the number of requests held now (waits and streams).
func (s *Server) Held() int { return int(s.held.n.Load()) }

// retryLater is the Retry-After of an answer past MaxWaiters, MaxHeldPerClient
// or MaxRecolorsPerClient.
var retryLater = []representation.Field{representation.NewField("Retry-After", retryAfter)}

// hold counts a request about to be held, or is the answer past MaxWaiters
// (503) or MaxHeldPerClient (429). A true return must be paired with
// release(client).
func (s *Server) hold(r *http.Request) (client string, refused Answer, ok bool) {
	client = clientKey(r.RemoteAddr)
	why := s.tryHold(client)
	if why == nil {
		return client, Answer{}, true
	}
	a := failed(why)
	a.Fields = retryLater
	return "", a, false
}

func (s *Server) maxWaiters() int64 { return int64(cmp.Or(s.MaxWaiters, DefaultMaxWaiters)) }

// tryHold counts a request of client about to be held; past MaxWaiters or
// MaxHeldPerClient, the error to answer with.
func (s *Server) tryHold(client string) error {
	if s.held.n.Add(1) > s.maxWaiters() {
		s.held.n.Add(-1)
		return catalog.Errorf(catalog.EUNAVAILABLE, "this server holds %d waiting requests and streams, its limit; retry after %s seconds, or poll /v1/version without wait", s.maxWaiters(), retryAfter)
	}
	if perClient := cmp.Or(s.MaxHeldPerClient, DefaultMaxHeldPerClient); !s.held.clients.acquire(client, perClient) {
		s.held.n.Add(-1)
		return catalog.Errorf(catalog.ELIMIT, "this client holds %d waiting requests and streams, the most one client may; retry after %s seconds, once one has ended, or poll /v1/version without wait", perClient, retryAfter)
	}
	s.hub().Watch()
	return nil
}

func (s *Server) release(client string) {
	s.held.clients.release(client)
	s.held.n.Add(-1)
}

// Relabeler is a ResponseWriter that records each answer under its route
// (router's metrics and log): a held request is recorded under a label of its own.
type Relabeler interface{ Relabel(route string) }

// GetVersion serves the active version record; with wait and an If-None-Match
// that names it, it answers once another version is active, or at the end of
// the wait (304), or when the server shuts down (304).
func (s *Server) GetVersion(w http.ResponseWriter, r *http.Request, params gen.GetVersionParams) {
	s.write(w, r, s.version(r, params))
}

func (s *Server) version(r *http.Request, params gen.GetVersionParams) Answer {
	wait, err := push.ParseWait(deref(params.Wait))
	if err != nil {
		return failed(err)
	}
	ed := s.Repo.Active()
	label := ""
	if wait > 0 && push.Unchanged(ed, r.Header["Accept-Encoding"], r.Header["If-None-Match"]) {
		client, refused, ok := s.hold(r)
		if !ok {
			return refused
		}
		defer s.release(client)
		label = waitLabel
		ed = s.hub().Wait(r.Context().Done(), wait, r.Header["Accept-Encoding"], r.Header["If-None-Match"])
	}
	a := own(ed, ed.VersionBody(), versionRoute)
	a.Label = label
	return a
}

// HoldForChange is GetVersion's wait for a caller that writes the answer
// itself (the edge), for a client at remoteAddr ("host:port"); ctx should end
// when the client leaves. It returns false, having held nothing, when
// GetVersion would not hold the request or would refuse it (MaxWaiters,
// MaxHeldPerClient): GetVersion answers those. Else, once due, it returns the
// version record to answer with.
func (s *Server) HoldForChange(ctx context.Context, remoteAddr, wait string, acceptEncoding, ifNoneMatch []string) (representation.Response, bool) {
	d, err := push.ParseWait(wait)
	client := clientKey(remoteAddr)
	if err != nil || d == 0 || withinLimits(versionRoute.Label, "query", "wait", wait) != nil || !push.Unchanged(s.Repo.Active(), acceptEncoding, ifNoneMatch) || s.tryHold(client) != nil {
		return representation.Response{}, false
	}
	defer s.release(client)
	ed := s.hub().Wait(ctx.Done(), d, acceptEncoding, ifNoneMatch)
	return representation.Response{Route: waitRoute, Version: &ed.VersionField, Body: ed.VersionBody()}, true
}

// streamHeader is what a stream's answer carries besides CORS.
var streamHeader = []representation.Field{
	representation.NewField("Content-Type", "text/event-stream"),
	representation.NewField("Cache-Control", "no-store"),
	representation.NewField("X-Accel-Buffering", "no"),
}

// StreamVersions sends an event for the active version (unless Last-Event-ID
// names it) and one per activation after, a comment every heartbeat, until
// StreamFor has passed, the client leaves or the request's context ends.
func (s *Server) StreamVersions(w http.ResponseWriter, r *http.Request, params gen.StreamVersionsParams) {
	s.write(w, r, s.streamVersions(r, params))
}

func (s *Server) streamVersions(r *http.Request, params gen.StreamVersionsParams) Answer {
	s.hub().Event() // rendered before anything is written: a failure is still an answer
	if r.Method == http.MethodHead {
		return Answer{Fields: streamHeader, Stream: func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusOK) }}
	}
	client, refused, ok := s.hold(r)
	if !ok {
		return refused
	}
	return Answer{Fields: streamHeader, Stream: func(w http.ResponseWriter, r *http.Request) {
		defer s.release(client)
		last := deref(params.LastEventID)
		if withinLimits("/v1/version/stream", "header", "Last-Event-ID", last) != nil {
			last = "" // no manifest ID: what a client that sends none gets
		}
		s.hub().Stream(w, r, last, cmp.Or(s.StreamFor, DefaultStreamFor))
	}}
}
