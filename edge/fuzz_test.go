package edge

import (
	"bufio"
	"bytes"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/refdata/refdata/edition"
	"github.com/refdata/refdata/router/apitest"
)

// FuzzRequest feeds raw bytes to the edge as one connection's input: whatever
// arrives, no answer is a 5xx, no error answer is anything but the JSON
// envelope or an error page, and nothing panics (a panic the recoverer catches is a 500, so it
// fails too). The seed corpus (testdata/fuzz/FuzzRequest and the f.Add calls)
// runs in every `go test`; `make fuzz` explores further.
func FuzzRequest(f *testing.F) {
	for _, tc := range malformed {
		f.Add([]byte(tc.method + " " + tc.target + " " + tc.proto + "\r\nHost: x\r\nUser-Agent: t/1\r\n\r\n"))
	}
	f.Add([]byte("GET /v1/version HTTP/1.1\r\nHost: x\r\nUser-Agent: t/1\r\n\r\nHEAD /v1/maps HTTP/1.1\r\nHost: x\r\nUser-Agent: t/1\r\n\r\n"))
	f.Add([]byte("OPTIONS * HTTP/1.1\r\nHost: x\r\n\r\n"))
	f.Add([]byte("GET /v1/weapons?language=de-DE HTTP/1.0\r\nUser-Agent: t/1\r\nAccept-Encoding: br;q=0.5, gzip\r\n\r\n"))

	repo := edition.Serve(newest(f))
	s := New(Config{Router: testRouter(f, repo), Active: repo.Active})
	checker := apitest.New(f)
	f.Fuzz(func(t *testing.T, in []byte) {
		c := &memConn{in: bytes.NewReader(in)}
		_ = s.http.ServeConn(c)
		out := c.out.Bytes()
		for _, bad := range []string{"HTTP/1.1 5", "HTTP/1.0 5", "text/plain"} {
			if bytes.Contains(out, []byte(bad)) {
				t.Fatalf("input %q\nanswered %q", in, out)
			}
		}
		// Every response that parses: an error is the envelope with its status.
		br := bufio.NewReader(bytes.NewReader(out))
		for {
			res, err := http.ReadResponse(br, nil)
			if err != nil {
				return // the end, or a HEAD answer's missing body: the scan above covered it
			}
			body, err := io.ReadAll(res.Body)
			res.Body.Close()
			if err != nil || res.StatusCode < 400 || len(body) == 0 {
				continue
			}
			// The request it answers is not known here (the input may hold
			// several, or none net/http reads): an error page answers a page
			// path, and is held to what every error page is.
			req := &http.Request{Method: "GET", URL: &url.URL{Opaque: "(fuzz input)"}}
			if strings.HasPrefix(res.Header.Get("Content-Type"), "text/html") {
				checker.CheckErrorPage(t, req, res, body)
				continue
			}
			var e struct {
				Status int    `json:"status"`
				Error  string `json:"error"`
			}
			if err := json.Unmarshal(body, &e); err != nil || e.Status != res.StatusCode || e.Error == "" ||
				!strings.HasPrefix(res.Header.Get("Content-Type"), "application/json") {
				t.Fatalf("input %q\nanswered %d %q: %s", in, res.StatusCode, res.Header.Get("Content-Type"), body)
			}
			// Any other error is held to the spec's Error schema.
			checker.CheckError(t, req, res, body)
		}
	})
}

// memConn is a connection whose input is fixed and whose output is kept: the
// server reads the input to EOF and answers synchronously, with no timeouts.
type memConn struct {
	in  *bytes.Reader
	out bytes.Buffer
}

func (c *memConn) Read(b []byte) (int, error)       { return c.in.Read(b) }
func (c *memConn) Write(b []byte) (int, error)      { return c.out.Write(b) }
func (c *memConn) Close() error                     { return nil }
func (c *memConn) LocalAddr() net.Addr              { return &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 80} }
func (c *memConn) RemoteAddr() net.Addr             { return &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 1} }
func (c *memConn) SetDeadline(time.Time) error      { return nil }
func (c *memConn) SetReadDeadline(time.Time) error  { return nil }
func (c *memConn) SetWriteDeadline(time.Time) error { return nil }
