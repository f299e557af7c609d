package router_test

import (
	"context"
	"net"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/refdata/refdata/edge"
	"github.com/refdata/refdata/edition"
	"github.com/refdata/refdata/handler"
	"github.com/refdata/refdata/router/apitest"
)

func newRecorder(h http.Handler, req *http.Request) *httptest.ResponseRecorder {
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	return rec
}

// throughEdge serves router behind an edge server on a loopback listener and
// returns a handler that forwards each request to it over a connection, so tests
// written against an http.Handler exercise the real server. (fasthttputil's
// in-memory connections set deadlines unsynchronized, which a stream's writes
// and fasthttp's own race on; a socket's are safe, as in a server.)
func throughEdge(t testing.TB, router http.Handler, r edition.Repository) http.Handler {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	es := edge.New(edge.Config{Router: router, Active: r.Active})
	go func() { _ = es.Serve(ln) }()
	client := &http.Client{Transport: &http.Transport{DisableCompression: true},
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	t.Cleanup(func() {
		// The client leaves first: a keep-alive connection still open when
		// shutdown begins is given the edge's drain grace (a second) to
		// send a last request, and the test would wait it out.
		client.CloseIdleConnections()
		_ = es.Shutdown(context.Background())
		_ = ln.Close()
	})
	return apitest.Forward(t, client, "http://"+ln.Addr().String())
}

// viaBoth runs a test against the router itself and through the edge server (over a
// connection, where the first request for a target is routed and the rest are
// answered from the edge's memo): both must behave the same and satisfy the spec.
// The test builds its handlers with the function it is given.
func viaBoth(t *testing.T, test func(*testing.T, func(edition.Repository, http.Handler, ...func(*handler.Server)) http.Handler)) {
	for _, via := range []struct {
		name string
		wrap func(testing.TB, http.Handler, edition.Repository) http.Handler
	}{
		{"router", func(_ testing.TB, h http.Handler, _ edition.Repository) http.Handler { return h }},
		{"edge", throughEdge},
	} {
		t.Run(via.name, func(t *testing.T) {
			t.Parallel()
			test(t, func(r edition.Repository, metrics http.Handler, opts ...func(*handler.Server)) http.Handler {
				return via.wrap(t, testRouter(t, r, metrics, opts...), r)
			})
		})
	}
}
