package router_test

import (
	"bufio"
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/refdata/refdata/edge"
	"github.com/refdata/refdata/edition"
	"github.com/refdata/refdata/router/apitest"
)

// TestSmuggling: a request framed by Transfer-Encoding (with a Content-Length
// too, RFC 9112 § 6.1's smuggling case, or alone) is answered 400 and its
// connection closed, so the request hidden after it gets no answer; on the
// edge and on net/http, for an API route, a page and a preflight.
func TestSmuggling(t *testing.T) {
	t.Parallel()
	repo := edition.Serve(active(t))
	router := testRouter(t, repo, nil)
	servers := map[string]string{}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	es := edge.New(edge.Config{Router: router, Active: repo.Active})
	go func() { _ = es.Serve(ln) }()
	t.Cleanup(func() { _ = es.Shutdown(context.Background()) })
	servers["edge"] = ln.Addr().String()
	hs := httptest.NewServer(router)
	t.Cleanup(hs.Close)
	servers["net/http"] = strings.TrimPrefix(hs.URL, "http://")

	const hidden = "GET /v1/version HTTP/1.1\r\nHost: x\r\nUser-Agent: t/1\r\n\r\n"
	for name, addr := range servers {
		for _, tc := range []struct {
			name, method, target, framing string
		}{
			{"CL then TE", "GET", "/v1/version", "Content-Length: 5\r\nTransfer-Encoding: chunked\r\n"},
			{"TE then CL", "GET", "/v1/weapons", "Transfer-Encoding: chunked\r\nContent-Length: 5\r\n"},
			{"TE alone", "GET", "/v1/weapons", "Transfer-Encoding: chunked\r\n"},
			{"on a page", "GET", "/", "Content-Length: 5\r\nTransfer-Encoding: chunked\r\n"},
			{"preflight", "OPTIONS", "/v1/weapons", "Content-Length: 5\r\nTransfer-Encoding: chunked\r\nOrigin: https://a.example\r\nAccess-Control-Request-Method: GET\r\n"},
		} {
			t.Run(name+"/"+tc.name, func(t *testing.T) {
				t.Parallel()
				conn, err := net.Dial("tcp", addr)
				if err != nil {
					t.Fatal(err)
				}
				defer conn.Close()
				_ = conn.SetDeadline(time.Now().Add(time.Minute))
				raw := tc.method + " " + tc.target + " HTTP/1.1\r\nHost: x\r\nUser-Agent: t/1\r\n" + tc.framing + "\r\n0\r\n\r\n" + hidden
				go func() { _, _ = io.WriteString(conn, raw) }()
				br := bufio.NewReader(conn)
				res, err := http.ReadResponse(br, nil)
				if err != nil {
					t.Fatal(err)
				}
				body, _ := io.ReadAll(res.Body)
				res.Body.Close()
				req := get(tc.target)
				req.Method = tc.method
				if res.StatusCode != http.StatusBadRequest || !res.Close {
					t.Errorf("%d, Connection %q; want 400, closed", res.StatusCode, res.Header.Get("Connection"))
				}
				apitest.New(t).CheckError(t, req, res, body)
				if b, err := br.ReadByte(); !errors.Is(err, io.EOF) {
					t.Errorf("after the 400: %q, %v; want the connection closed, the hidden request unanswered", b, err)
				}
			})
		}
	}
}
