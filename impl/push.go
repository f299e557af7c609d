package impl

import (
	"bufio"
	"cmp"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httputil"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/refdata/refdata/catalog"
	"github.com/refdata/refdata/edition"
	"github.com/refdata/refdata/gen"
	"github.com/refdata/refdata/representation"
)

// Change push: /v1/version?wait= holds a request while its answer would be
// 304, and /v1/version/stream sends an event per activation (by the
// repository's OnSwap). A held request shares the edition's body and event.

const (
	// MaxWait is the longest wait a request may ask for.
	MaxWait = 120 * time.Second
	// DefaultMaxWaiters is Server.MaxWaiters when unset.
	DefaultMaxWaiters = 10000
	// DefaultMaxHeldPerClient is Server.MaxHeldPerClient when unset: a client
	// needs one stream, or a wait per replica it follows; a hundred leaves room
	// for clients behind one NAT address.
	DefaultMaxHeldPerClient = 100
	// DefaultStreamFor is Server.StreamFor when unset.
	DefaultStreamFor = 15 * time.Minute
	// heartbeat is how often a stream sends a comment, so proxies keep it open.
	heartbeat = 25 * time.Second
	// streamWriteTimeout drops a stream whose client reads nothing.
	streamWriteTimeout = 30 * time.Second
	// retryAfter is Retry-After past MaxWaiters or MaxHeldPerClient, in seconds.
	retryAfter = "5"
	waitLabel  = "/v1/version?wait"
)

// push is a Server's broadcast of activations and its count of held requests.
type push struct {
	once sync.Once
	mu   sync.Mutex
	// next is closed at the next activation, made on demand, per kind.
	next [2]chan struct{}
	held atomic.Int64
	// clients counts the held requests by client (MaxHeldPerClient).
	clients perClient
	event   atomic.Pointer[versionEvent]
	build   sync.Mutex // one event rendered at a time
}

// Kinds of held request, in the order an activation wakes them.
const (
	streams = iota
	waits
)

// changed wakes every held request: another edition is active.
func (p *push) changed() {
	p.mu.Lock()
	for i, c := range p.next {
		if c != nil {
			close(c)
			p.next[i] = nil
		}
	}
	p.mu.Unlock()
}

// wake returns a channel closed at the next activation; take it before
// reading the active edition, so an activation in between is not missed.
func (p *push) wake(kind int) <-chan struct{} {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.next[kind] == nil {
		p.next[kind] = make(chan struct{})
	}
	return p.next[kind]
}

// Held is the number of requests held now (waits and streams).
func (s *Server) Held() int { return int(s.push.held.Load()) }

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
	if s.push.held.Add(1) > s.maxWaiters() {
		s.push.held.Add(-1)
		return catalog.Errorf(catalog.EUNAVAILABLE, "this server holds %d waiting requests and streams, its limit; retry after %s seconds, or poll /v1/version without wait", s.maxWaiters(), retryAfter)
	}
	if perClient := cmp.Or(s.MaxHeldPerClient, DefaultMaxHeldPerClient); !s.push.clients.acquire(client, perClient) {
		s.push.held.Add(-1)
		return catalog.Errorf(catalog.ELIMIT, "this client holds %d waiting requests and streams, the most one client may; retry after %s seconds, once one has ended, or poll /v1/version without wait", perClient, retryAfter)
	}
	s.push.once.Do(func() {
		if sw, ok := s.Repo.(edition.Swapping); ok {
			sw.OnSwap(s.swapped)
		}
	})
	return nil
}

// swapped renders the new edition's event, then wakes the held requests; on
// a goroutine, as OnSwap's functions must not call the repository.
func (s *Server) swapped() {
	go func() {
		s.versionEvent()
		s.push.changed()
	}()
}

func (s *Server) release(client string) {
	s.push.clients.release(client)
	s.push.held.Add(-1)
}

// Relabeler is a ResponseWriter that records each answer under its route
// (api's metrics and log): a held request is recorded under a label of its own.
type Relabeler interface{ Relabel(route string) }

// GetVersion serves the active version record; with wait and an If-None-Match
// that names it, it answers once another version is active, or at the end of
// the wait (304), or when the server shuts down (304).
func (s *Server) GetVersion(w http.ResponseWriter, r *http.Request, params gen.GetVersionParams) {
	s.write(w, r, s.version(r, params))
}

func (s *Server) version(r *http.Request, params gen.GetVersionParams) Answer {
	wait, err := parseWait(params.Wait)
	if err != nil {
		return failed(err)
	}
	ed := s.Repo.Active()
	label := ""
	if wait > 0 && unchanged(ed, r.Header["Accept-Encoding"], r.Header["If-None-Match"]) {
		client, refused, ok := s.hold(r)
		if !ok {
			return refused
		}
		defer s.release(client)
		label = waitLabel
		ed = s.waitForChange(r.Context().Done(), wait, r.Header["Accept-Encoding"], r.Header["If-None-Match"])
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
	d, err := parseWait(&wait)
	client := clientKey(remoteAddr)
	if err != nil || d == 0 || withinLimits(versionRoute.Label, "query", "wait", wait) != nil || !unchanged(s.Repo.Active(), acceptEncoding, ifNoneMatch) || s.tryHold(client) != nil {
		return representation.Response{}, false
	}
	defer s.release(client)
	ed := s.waitForChange(ctx.Done(), d, acceptEncoding, ifNoneMatch)
	return representation.Response{Route: waitRoute, Version: &ed.VersionField, Body: ed.VersionBody()}, true
}

// unchanged says whether the version record of ed would be answered 304.
func unchanged(ed *edition.Edition, acceptEncoding, ifNoneMatch []string) bool {
	if len(ifNoneMatch) == 0 {
		return false
	}
	res := representation.Response{Route: versionRoute, Body: ed.VersionBody()}
	status, _ := res.Negotiate(acceptEncoding, ifNoneMatch)
	return status == http.StatusNotModified
}

// waitForChange returns the active edition once its version record is no
// longer the one the request names, at the end of wait, or when done is closed.
func (s *Server) waitForChange(done <-chan struct{}, wait time.Duration, acceptEncoding, ifNoneMatch []string) *edition.Edition {
	timer := time.NewTimer(wait)
	defer timer.Stop()
	for {
		next := s.push.wake(waits)
		ed := s.Repo.Active()
		if !unchanged(ed, acceptEncoding, ifNoneMatch) {
			return ed
		}
		select {
		case <-next:
		case <-timer.C:
			return ed
		case <-done:
			return ed
		}
	}
}

// parseWait reads the wait parameter: a Go duration or whole seconds, 0 to
// MaxWait.
func parseWait(v *string) (time.Duration, error) {
	if v == nil || *v == "" {
		return 0, nil
	}
	d, err := time.ParseDuration(*v)
	if err != nil {
		n, nerr := strconv.ParseUint(*v, 10, 16)
		d, err = time.Duration(n)*time.Second, nerr
	}
	switch {
	case err != nil || d < 0:
		return 0, catalog.Errorf(catalog.EINVALID, "wait %q is not a duration; give whole seconds (60) or a Go duration (60s, 2m), at most %s", *v, durationText(MaxWait))
	case d > MaxWait:
		return 0, catalog.Errorf(catalog.EINVALID, "wait %s is longer than %s, the longest this server holds a request; ask for at most wait=%s", durationText(d), durationText(MaxWait), durationText(MaxWait))
	}
	return d, nil
}

// durationText writes whole seconds as "120s", not Go's "2m0s".
func durationText(d time.Duration) string {
	if d%time.Second == 0 {
		return strconv.FormatInt(int64(d/time.Second), 10) + "s"
	}
	return d.String()
}

// streamHeader is what a stream's answer carries besides CORS.
var streamHeader = []representation.Field{
	representation.NewField("Content-Type", "text/event-stream"),
	representation.NewField("Cache-Control", "no-store"),
	representation.NewField("X-Accel-Buffering", "no"),
}

var keepAlive = []byte(": keep-alive\n\n")

// StreamVersions sends an event for the active version (unless Last-Event-ID
// names it) and one per activation after, a comment every heartbeat, until
// StreamFor has passed, the client leaves or the request's context ends.
func (s *Server) StreamVersions(w http.ResponseWriter, r *http.Request, params gen.StreamVersionsParams) {
	s.write(w, r, s.streamVersions(r, params))
}

func (s *Server) streamVersions(r *http.Request, params gen.StreamVersionsParams) Answer {
	s.versionEvent() // rendered before anything is written: a failure is still an answer
	if r.Method == http.MethodHead {
		return Answer{Fields: streamHeader, Stream: func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusOK) }}
	}
	client, refused, ok := s.hold(r)
	if !ok {
		return refused
	}
	return Answer{Fields: streamHeader, Stream: func(w http.ResponseWriter, r *http.Request) {
		defer s.release(client)
		s.stream(w, r, params)
	}}
}

// stream sends the events on w.
func (s *Server) stream(w http.ResponseWriter, r *http.Request, params gen.StreamVersionsParams) {
	out, err := openStream(w, r)
	if err != nil {
		return
	}
	defer out.close()
	last := deref(params.LastEventID)
	if withinLimits("/v1/version/stream", "header", "Last-Event-ID", last) != nil {
		last = "" // no manifest ID: what a client that sends none gets
	}
	done := r.Context().Done()
	end := time.NewTimer(cmp.Or(s.StreamFor, DefaultStreamFor))
	defer end.Stop()
	beat := time.NewTicker(heartbeat)
	defer beat.Stop()
	for {
		next := s.push.wake(streams)
		if ev := s.versionEvent(); !strings.EqualFold(ev.id, last) {
			if out.write(ev.bytes) != nil {
				return
			}
			last = ev.id
		}
		select {
		case <-next:
		case <-beat.C:
			if out.write(keepAlive) != nil {
				return
			}
		case <-end.C:
			return
		case <-done:
			return
		case <-out.gone:
			return
		}
	}
}

// versionEvent is one edition's event, shared by every stream.
type versionEvent struct {
	ed    *edition.Edition
	id    string
	bytes []byte
}

// versionEvent returns the active edition's event.
func (s *Server) versionEvent() *versionEvent {
	ed := s.Repo.Active()
	if e := s.push.event.Load(); e != nil && e.ed == ed {
		return e
	}
	s.push.build.Lock()
	defer s.push.build.Unlock()
	if e := s.push.event.Load(); e != nil && e.ed == ed {
		return e
	}
	latest, err := s.Repo.LatestDiff()
	if err != nil && catalog.ErrorCode(err) != catalog.ENOTFOUND && s.Logger != nil {
		s.Logger.Warn("the latest diff cannot be read; the version event goes without it", "manifest_id", ed.ManifestID, "err", err)
	}
	e := &versionEvent{ed: ed, id: ed.ManifestID, bytes: edition.Event(ed, latest)}
	s.push.event.Store(e)
	return e
}

// stream is where a stream's events go: the connection itself when the
// server hands it over, so a stream holds no response buffer and sets its own
// write deadlines; else the ResponseWriter, flushed after each event.
type stream struct {
	w     io.Writer
	flush func() error
	conn  net.Conn
	buf   *bufio.Writer
	gone  chan struct{} // closed when the client closes the connection it handed over
}

// watch closes gone when the connection's reading side ends: the client left,
// or the stream closed it. Whatever the client sends is dropped.
func (s *stream) watch() {
	var b [1]byte
	for {
		if _, err := s.conn.Read(b[:]); err != nil {
			close(s.gone)
			return
		}
	}
}

// openStream writes the answer's head: 200 and the header fields set on w.
func openStream(w http.ResponseWriter, r *http.Request) (*stream, error) {
	rc := http.NewResponseController(w)
	conn, rw, err := rc.Hijack()
	if err != nil {
		w.WriteHeader(http.StatusOK)
		return &stream{w: w, flush: rc.Flush}, rc.Flush()
	}
	out := &stream{w: rw.Writer, flush: rw.Writer.Flush, conn: conn, buf: rw.Writer, gone: make(chan struct{})}
	fmt.Fprintf(rw.Writer, "HTTP/%d.%d 200 OK\r\n", min(r.ProtoMajor, 1), min(r.ProtoMinor, 1))
	h := w.Header().Clone()
	h.Set("Connection", "close")
	if r.ProtoAtLeast(1, 1) {
		h.Set("Transfer-Encoding", "chunked")
		out.w = httputil.NewChunkedWriter(rw.Writer)
	}
	_ = h.Write(rw.Writer)
	rw.Writer.WriteString("\r\n")
	if err := out.write(nil); err != nil {
		_ = conn.Close()
		return nil, err
	}
	_ = conn.SetReadDeadline(time.Time{}) // the server's, for reading the request
	go out.watch()
	return out, nil
}

func (s *stream) write(b []byte) error {
	if s.conn != nil {
		_ = s.conn.SetWriteDeadline(time.Now().Add(streamWriteTimeout))
	}
	if len(b) > 0 {
		if _, err := s.w.Write(b); err != nil {
			return err
		}
	}
	return s.flush()
}

// close ends a stream on a connection it was handed: the last chunk, then
// the connection.
func (s *stream) close() {
	if s.conn == nil {
		return
	}
	if c, ok := s.w.(io.Closer); ok && c.Close() == nil {
		s.buf.WriteString("\r\n")
	}
	_ = s.write(nil)
	_ = s.conn.Close()
}
