package edge

import (
	"bufio"
	"bytes"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/refdata/refdata/edition"
	"github.com/refdata/refdata/router/apitest"
)

// malformed are request shapes a hostile or careless client sends; each must get
// its 4xx — in the error envelope, or on a page path an error page — never a 5xx
// or text/plain.
var malformed = []struct {
	name, method, target, proto string
	status                      int
}{
	{"bad escape in a catalog path", "GET", "/v1/weapons%zz", "HTTP/1.1", 400},
	{"bad escape at the root", "GET", "/%zz", "HTTP/1.1", 400},
	{"lone percent", "GET", "/v1/weapons%", "HTTP/1.1", 400},
	{"half an escape", "GET", "/v1/weapons%0", "HTTP/1.1", 400},
	{"bad escape in language", "GET", "/v1/maps?language=%zz", "HTTP/1.1", 400},
	{"bad escape in a query name", "GET", "/v1/weapons?%zz=1", "HTTP/1.1", 400},
	{"unknown language", "GET", "/v1/maps?language=xx-XX", "HTTP/1.1", 400},
	{"not a UUID", "GET", "/v1/weapons/..%2F..%2Fetc%2Fpasswd", "HTTP/1.1", 400},
	{"CONNECT", "CONNECT", "127.0.0.1:443", "HTTP/1.1", 405},
	{"DELETE", "DELETE", "/v1/weapons", "HTTP/1.1", 405},
	{"POST on an unknown path", "POST", "/nope", "HTTP/1.1", 405},
	{"TRACE", "TRACE", "/", "HTTP/1.1", 405},
	{"HTTP/2.0 request line", "GET", "/v1/version", "HTTP/2.0", 400},
	{"HTTP/9.9 request line", "GET", "/v1/version", "HTTP/9.9", 400},
	{"HTTP/0.9-ish request line", "GET", "/v1/version", "HTTP/0.9", 400},
	{"unknown route", "GET", "/v1/nothing", "HTTP/1.1", 404},
	{"PATCH", "PATCH", "/v1/maps", "HTTP/1.1", 405},
	{"trailing percent in language", "GET", "/v1/maps?language=en-US%", "HTTP/1.1", 400},
	{"bad escape in a diff", "GET", "/v1/diff/latest?x=%G0", "HTTP/1.1", 400},
	// On the pages' paths the same errors are error pages (apitest.CheckError
	// knows which path gets which).
	{"DELETE on a page", "DELETE", "/docs", "HTTP/1.1", 405},
	{"bad escape in a page's query", "GET", "/changes?language=%zz", "HTTP/1.1", 400},
	{"bad escape in a page's path", "GET", "/changes/%zz", "HTTP/1.1", 400},
	{"HTTP/2.0 request line for a page", "GET", "/", "HTTP/2.0", 400},
	{"unknown page", "GET", "/nope", "HTTP/1.1", 404},
	// net/url cannot parse these into the router's request: fasthttp refuses them
	// as it reads them (the edge's route would answer for the adaptor, whose own
	// answer is a text/plain 500, should fasthttp pass one on).
	{"absolute form with a bad port", "GET", "http://a:b/v1/version", "HTTP/1.1", 400},
	{"absolute form with an open IPv6 host", "GET", "http://[::1/v1/version", "HTTP/1.1", 400},
}

// TestMalformedAtTheEdge sends each shape as raw bytes over a real connection.
func TestMalformedAtTheEdge(t *testing.T) {
	t.Parallel()
	repo := edition.Serve(newest(t))
	h := start(t, Config{Router: testRouter(t, repo), Active: repo.Active})
	c := apitest.New(t)
	for _, tc := range malformed {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			conn, err := net.Dial("tcp", h.addr)
			if err != nil {
				t.Fatal(err)
			}
			defer conn.Close()
			raw := tc.method + " " + tc.target + " " + tc.proto + "\r\nHost: x\r\nUser-Agent: t/1\r\n\r\n"
			go func() { _, _ = io.WriteString(conn, raw) }()
			res, err := http.ReadResponse(bufio.NewReader(conn), nil)
			if err != nil {
				t.Fatal(err)
			}
			body, _ := io.ReadAll(res.Body)
			res.Body.Close()
			if res.StatusCode != tc.status {
				t.Errorf("%q: status %d, want %d: %s", raw, res.StatusCode, tc.status, body)
			}
			if tc.status == 405 && res.Header.Get("Allow") != "GET, HEAD, OPTIONS" {
				t.Errorf("405 without Allow: %q", res.Header.Get("Allow"))
			}
			c.CheckError(t, &http.Request{Method: tc.method, URL: &url.URL{Opaque: tc.target}}, res, body)
		})
	}
}

// TestMalformedAtTheRouter sends the shapes net/http can carry to the router
// alone, as a server without the edge would.
func TestMalformedAtTheRouter(t *testing.T) {
	t.Parallel()
	repo := edition.Serve(newest(t))
	r := testRouter(t, repo)
	c := apitest.New(t)
	n := 0
	for _, tc := range malformed {
		if tc.proto != "HTTP/1.1" {
			continue // net/http refuses these before any handler
		}
		u, err := url.ParseRequestURI(tc.target)
		if err != nil && tc.method != "CONNECT" {
			// net/http refuses a path escape before any handler too; the query
			// still reaches the router raw.
			path, query, _ := strings.Cut(tc.target, "?")
			if !strings.Contains(query, "%") {
				continue
			}
			u = &url.URL{Path: path, RawQuery: query}
		}
		if tc.method == "CONNECT" {
			u = &url.URL{Host: tc.target}
		}
		n++
		t.Run(tc.name, func(t *testing.T) {
			req := httptest.NewRequest("GET", "/", nil)
			req.Method, req.URL, req.RequestURI = tc.method, u, tc.target
			req.Header.Set("User-Agent", "t/1")
			rec := httptest.NewRecorder()
			r.ServeHTTP(rec, req)
			res := rec.Result()
			if res.StatusCode != tc.status {
				t.Errorf("status %d, want %d: %s", res.StatusCode, tc.status, rec.Body.Bytes())
			}
			c.CheckError(t, req, res, rec.Body.Bytes())
		})
	}
	if n < 10 {
		t.Errorf("only %d shapes reached the router", n)
	}
}

// TestUnusedConnection: a connection that never sent a byte (a client's spare)
// is closed at the read timeout without an answer, which its client would take
// for an unsolicited response on an idle connection; one that sent half a
// request gets the error envelope, a 408 (too slow, not malformed).
func TestUnusedConnection(t *testing.T) {
	t.Parallel()
	repo := edition.Serve(newest(t))
	h := start(t, Config{Router: testRouter(t, repo), Active: repo.Active, ReadTimeout: 50 * time.Millisecond})
	for _, tc := range []struct {
		name, sent string
		status     int // 0: closed without a byte
	}{
		{"nothing sent", "", 0},
		{"half a request", "GET /v1/version HTTP/1.1\r\nHost: x\r\n", http.StatusRequestTimeout},
		{"half a body", "GET /v1/version HTTP/1.1\r\nHost: x\r\nUser-Agent: t/1\r\nContent-Length: 10\r\n\r\n01234", http.StatusRequestTimeout},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, err := net.Dial("tcp", h.addr)
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			if _, err := io.WriteString(c, tc.sent); err != nil {
				t.Fatal(err)
			}
			raw, err := io.ReadAll(c)
			if err != nil {
				t.Fatalf("read: %v", err)
			}
			if tc.status == 0 {
				if len(raw) > 0 {
					t.Fatalf("a connection that sent nothing got %q", raw)
				}
				return
			}
			res, err := http.ReadResponse(bufio.NewReader(bytes.NewReader(raw)), nil)
			if err != nil {
				t.Fatalf("%q: %v", raw, err)
			}
			body, _ := io.ReadAll(res.Body)
			if res.StatusCode != tc.status {
				t.Fatalf("status %d, want %d: %s", res.StatusCode, tc.status, body)
			}
			apitest.New(t).CheckError(t, &http.Request{Method: "GET", URL: &url.URL{Path: "/v1/version"}}, res, body)
		})
	}
}
