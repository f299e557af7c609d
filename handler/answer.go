package handler

import (
	"net/http"
	"strconv"

	"github.com/refdata/refdata/catalog"
	"github.com/refdata/refdata/edition"
	"github.com/refdata/refdata/representation"
)

// Answer is what a handler decided. Handlers return one and never write;
// Server.write alone turns it into the net/http answer, so every route's
// status, header fields and body are decided in one place.
type Answer struct {
	// Response is the answer when its Body is set. With Err, its Version
	// names the version the error is about (X-Data-Version).
	Response representation.Response
	// Edition owns Response.Body: a caller in front of the router that asked
	// (DescribeKey) may answer the same request target from it again.
	Edition *edition.Edition
	// Err is the error answered when there is no Body (the table in errors.go).
	Err error
	// Page renders Err's answer as an HTML page; nil: the JSON envelope.
	Page func(status int, msg string) []byte
	// Status, with Err, replaces its code's status (a media Range's 416).
	// Without Err or Body, it is an answer rendered for this request alone:
	// Status, Fields and Raw (no body for HEAD or a 304).
	Status int
	Raw    []byte
	// Fields are header fields beyond the Response's: Retry-After,
	// Content-Range, an export's or a probe's.
	Fields []representation.Field
	// Label records the answer under this route label instead of its
	// route template (router's metrics and log).
	Label string
	// Stream writes an answer sent as it is made (events, a media file's
	// ranges, the metrics scrape), after Fields.
	Stream func(http.ResponseWriter, *http.Request)
}

// StoredBodyFailed is the error of a body whose stored bytes failed their
// check (representation.Send), whichever server was sending it.
func StoredBodyFailed(err error) error {
	return catalog.Internal("a stored body failed its check; the store needs a look", err)
}

// failed is the answer to err.
func failed(err error) Answer { return Answer{Err: err} }

// Handlers that ask for a writer other than net/http's (the edge) tell how
// they answered from a body their edition owns (catalogs, /v1/version,
// /v1/locres), so it can answer the same target again itself
// (router.EdgeMayAnswer).

type describeKey struct{}

// DescribeKey is the context key under which a caller puts a *Description for
// the handlers to fill.
var DescribeKey any = describeKey{}

// Description is how a handler answered: the Response it described, and the
// edition that owns its body.
type Description struct {
	Edition *edition.Edition
	representation.Response
	// BodyByCaller, set by the caller: it sends the body itself, so the
	// writer writes the head only and names the bytes in Sent (nil: none).
	BodyByCaller bool
	Sent         *representation.Encoded
}

// write is the one writer of the handlers' answers.
func (s *Server) write(w http.ResponseWriter, r *http.Request, a Answer) {
	if a.Label != "" {
		if rl, ok := w.(Relabeler); ok {
			rl.Relabel(a.Label)
		}
	}
	switch {
	case a.Stream != nil:
		representation.SetFields(w.Header(), a.Fields)
		a.Stream(w, r)
	case a.Response.Body != nil:
		representation.SetFields(w.Header(), a.Fields)
		if a.Edition != nil {
			if d, _ := r.Context().Value(DescribeKey).(*Description); d != nil {
				d.Edition, d.Response = a.Edition, a.Response
				if d.BodyByCaller {
					d.Sent = representation.WriteHeader(w, r, &a.Response)
					return
				}
			}
		}
		if err := representation.Write(w, r, &a.Response); err != nil {
			s.write(w, r, failed(StoredBodyFailed(err)))
		}
	case a.Err == nil && a.Status != 0:
		h := w.Header()
		representation.SetFields(h, a.Fields)
		if a.Status != http.StatusNotModified {
			h.Set("Content-Length", strconv.Itoa(len(a.Raw)))
		}
		w.WriteHeader(a.Status)
		if a.Status != http.StatusNotModified && r.Method != http.MethodHead {
			_, _ = w.Write(a.Raw)
		}
	default:
		status, msg, id := ClientError(s.Logger, r.Method, r.URL.Path, a.Err)
		if a.Err != nil && a.Status != 0 {
			status = a.Status
		}
		h := w.Header()
		if id != "" {
			h.Set("X-Request-Id", id)
		}
		if v := a.Response.Version; v != nil {
			h[v.Name] = v.Value
		}
		representation.SetFields(h, a.Fields)
		SendError(representation.HTTPSink{W: w, Req: r}, status, msg, a.Page)
	}
}

// fail answers err in the error envelope with its code's status (ClientError).
func (s *Server) fail(w http.ResponseWriter, r *http.Request, err error) { s.write(w, r, failed(err)) }

// failedPage is the answer to err on a page's route: an HTML page when the
// server has Pages, else the envelope.
func (s *Server) failedPage(r *http.Request, err error) Answer {
	a := failed(err)
	if s.Pages != nil {
		path := r.URL.Path
		a.Page = func(status int, msg string) []byte { return s.Pages.ErrorPage(status, msg, path) }
	}
	return a
}

// body is the answer of a body of ed at route: its version named, not
// described for the edge (pages, diffs, the version list).
func body(ed *edition.Edition, b *representation.Body, route *representation.Route) Answer {
	a := Answer{Response: representation.Response{Route: route, Body: b}}
	if ed != nil {
		a.Response.Version = &ed.VersionField
	}
	return a
}

// own is the answer of an edition's own body at route, described to the
// request's caller if it asked.
func own(ed *edition.Edition, b *representation.Body, route *representation.Route) Answer {
	return Answer{Response: representation.Response{Route: route, Version: &ed.VersionField, Body: b}, Edition: ed}
}

// catalogAnswer is own for the catalog routes and string tables, whose
// answers name their pinned URL (Content-Location): their two allocations.
func catalogAnswer(r *http.Request, ed *edition.Edition, b *representation.Body, route *representation.Route) Answer {
	loc := &location{}
	loc.value[0] = pinnedURL(ed, r)
	loc.f = representation.Field{Name: "Content-Location", Value: loc.value[:]}
	a := own(ed, b, route)
	a.Response.Location = &loc.f
	return a
}

// location is a Content-Location field with its value's slice, allocated once.
type location struct {
	f     representation.Field
	value [1]string
}

// notFound is the 404 for something ed lacks, naming ed's version.
func notFound(ed *edition.Edition, format string, args ...any) Answer {
	a := failed(catalog.Errorf(catalog.ENOTFOUND, format, args...))
	a.Response.Version = &ed.VersionField
	return a
}
