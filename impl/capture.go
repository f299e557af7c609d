package impl

import (
	"context"
	"net/http"

	"github.com/refdata/refdata/catalog"
)

// Capture tells a server in front of the router (package edge) which pre-rendered
// body answered a request, so it can answer the same request target again without
// routing, parameter binding or handler. Only bodies an edition owns are captured:
// the catalogs, /v1/version and /v1/locres. Diffs are not: whether one is retained
// can change while an edition stays active.
type Capture struct {
	Edition *catalog.Edition
	Body    *catalog.Body
	Cache   string // the Cache-Control value sent
	Route   string // the route template, set by the router's middleware
}

type captureKey struct{}

// CaptureKey is the context key under which a caller puts a *Capture for the
// handlers to fill.
var CaptureKey any = captureKey{}

// CaptureFrom returns the request's *Capture, or nil when nobody asked.
func CaptureFrom(ctx context.Context) *Capture {
	c, _ := ctx.Value(CaptureKey).(*Capture)
	return c
}

// serve writes an edition's own body and records it in the request's Capture.
func serve(w http.ResponseWriter, r *http.Request, ed *catalog.Edition, b *catalog.Body, cache []string) {
	if c := CaptureFrom(r.Context()); c != nil {
		c.Edition, c.Body, c.Cache = ed, b, cache[0]
	}
	writeBody(w, r, ed, b, cache)
}
