package impl

import (
	"net/http"

	"github.com/refdata/refdata/edition"
	"github.com/refdata/refdata/representation"
)

// The handlers tell a server in front of the router (package edge) how they
// answered, so it can answer the same request target again without routing,
// middleware, parameter binding or handler: a caller puts a
// *Description under DescribeKey, and a handler that answered from a body its
// edition owns (the catalogs, /v1/version, /v1/locres, pinned or not) fills it. Nothing else is described: a diff's retention, the version
// list and the pages can change while an edition stays active. Which requests
// the edge may then answer itself is api.EdgeMayAnswer.

type describeKey struct{}

// DescribeKey is the context key under which a caller puts a *Description for
// the handlers to fill.
var DescribeKey any = describeKey{}

// Description is how a handler answered: the Response it wrote, and the edition
// that owns its body.
type Description struct {
	Edition *edition.Edition
	representation.Response
	// BodyByCaller, set by the caller: it sends a described answer's body
	// itself, from the edition's bytes, so the handler writes the status and
	// header fields only and names the bytes in Sent (nil: no body, as for
	// HEAD or 304). The edge asks so: through the net/http adaptor each body
	// was copied twice, and the first request for every target left that much
	// garbage.
	BodyByCaller bool
	Sent         *representation.Encoded
}

// serve writes an edition's own body at route and describes the answer to the
// request's caller, if it asked.
func serve(w http.ResponseWriter, r *http.Request, ed *edition.Edition, b *representation.Body, route *representation.Route) {
	respond(w, r, ed, representation.Response{Route: route, Version: &ed.VersionField, Body: b})
}

// serveCatalog is serve for the catalog routes and string tables, whose answers
// name their pinned URL (Content-Location): the two allocations of their
// answers, the URL and the field (a memo keeps them with the answer).
func serveCatalog(w http.ResponseWriter, r *http.Request, ed *edition.Edition, b *representation.Body, route *representation.Route) {
	loc := &location{}
	loc.value[0] = pinnedURL(ed, r)
	loc.f = representation.Field{Name: "Content-Location", Value: loc.value[:]}
	respond(w, r, ed, representation.Response{Route: route, Version: &ed.VersionField, Location: &loc.f, Body: b})
}

// location is a Content-Location field with its value's slice, allocated once.
type location struct {
	f     representation.Field
	value [1]string
}

func respond(w http.ResponseWriter, r *http.Request, ed *edition.Edition, res representation.Response) {
	if d, _ := r.Context().Value(DescribeKey).(*Description); d != nil {
		d.Edition, d.Response = ed, res
		if d.BodyByCaller {
			d.Sent = representation.WriteHeader(w, r, &res)
			return
		}
	}
	representation.Write(w, r, &res)
}
