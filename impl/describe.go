package impl

import (
	"net/http"

	"github.com/refdata/refdata/catalog"
	"github.com/refdata/refdata/edition"
	"github.com/refdata/refdata/representation"
)

// The handlers tell a server in front of the router (package edge) how they
// answered from a body their edition owns (catalogs, /v1/version, /v1/locres),
// so it can answer the same target again itself (api.EdgeMayAnswer).

type describeKey struct{}

// DescribeKey is the context key under which a caller puts a *Description for
// the handlers to fill.
var DescribeKey any = describeKey{}

// Description is how a handler answered: the Response it wrote, and the edition
// that owns its body.
type Description struct {
	Edition *edition.Edition
	representation.Response
	// BodyByCaller, set by the caller: it sends the body itself, so the
	// handler writes the head only and names the bytes in Sent (nil: none).
	BodyByCaller bool
	Sent         *representation.Encoded
}

// serve writes an edition's own body at route and describes the answer to the
// request's caller, if it asked.
func (s *Server) serve(w http.ResponseWriter, r *http.Request, ed *edition.Edition, b *representation.Body, route *representation.Route) {
	s.respond(w, r, ed, representation.Response{Route: route, Version: &ed.VersionField, Body: b})
}

// serveCatalog is serve for the catalog routes and string tables, whose answers
// name their pinned URL (Content-Location): their two allocations.
func (s *Server) serveCatalog(w http.ResponseWriter, r *http.Request, ed *edition.Edition, b *representation.Body, route *representation.Route) {
	loc := &location{}
	loc.value[0] = pinnedURL(ed, r)
	loc.f = representation.Field{Name: "Content-Location", Value: loc.value[:]}
	s.respond(w, r, ed, representation.Response{Route: route, Version: &ed.VersionField, Location: &loc.f, Body: b})
}

// location is a Content-Location field with its value's slice, allocated once.
type location struct {
	f     representation.Field
	value [1]string
}

func (s *Server) respond(w http.ResponseWriter, r *http.Request, ed *edition.Edition, res representation.Response) {
	if d, _ := r.Context().Value(DescribeKey).(*Description); d != nil {
		d.Edition, d.Response = ed, res
		if d.BodyByCaller {
			d.Sent = representation.WriteHeader(w, r, &res)
			return
		}
	}
	s.write(w, r, &res)
}

// write writes res; stored bytes that fail their check are a 500, with
// nothing of the body written.
func (s *Server) write(w http.ResponseWriter, r *http.Request, res *representation.Response) {
	if err := representation.Write(w, r, res); err != nil {
		s.fail(w, r, catalog.Internal("a stored body failed its check; the store needs a look", err))
	}
}
