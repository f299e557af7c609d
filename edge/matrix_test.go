package edge

import (
	"bufio"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/refdata/refdata/catalog"
	"github.com/refdata/refdata/router/apitest"
)

// TestBothStacksAnswerAlike holds the two HTTP stacks to one policy: each
// request of the matrix goes to the router alone (net/http, as a server
// without the edge serves it) and, three times, to the edge on a real socket
// in front of the same router (routed first, then from the memo where it
// keeps the target), and gets the same status, header fields (but Date and
// the per-request ones) and body, which the spec allows.
func TestBothStacksAnswerAlike(t *testing.T) {
	t.Parallel()
	s := loadSample(t)
	ed := s.newest
	r := testRouter(t, s.repo)
	h := start(t, Config{Router: r, Active: s.repo.Active})
	c := apitest.New(t)
	etag := direct(r, request("GET", "/v1/weapons")).header.Get("ETag")
	id := ed.ManifestID
	item := "/v1/weapons/" + ed.UUIDs(catalog.Weapons)[0].String()
	const agent = "User-Agent: matrix/1.0 (+http://localhost)"
	for _, tc := range []struct {
		name, method, target string
		header               []string // "Name: value" lines; the User-Agent among them
		body                 string
		// memo: after the first send, the edge's memo holds the target, so
		// the later sends are answered by the edge alone.
		memo bool
	}{
		{"GET", "GET", "/v1/weapons", []string{agent}, "", true},
		{"GET an item", "GET", item, []string{agent}, "", true},
		{"GET in a language", "GET", "/v1/weapons?language=ja-JP", []string{agent, "Accept-Encoding: gzip"}, "", true},
		{"HEAD", "HEAD", "/v1/weapons", []string{agent}, "", true},
		{"HEAD gzip", "HEAD", "/v1/weapons", []string{agent, "Accept-Encoding: gzip, br"}, "", true},
		// The User-Agent rule, on a target the memo holds and on one it does not.
		{"no User-Agent", "GET", "/v1/weapons", nil, "", true},
		{"blank User-Agent", "GET", "/v1/weapons", []string{"User-Agent:    "}, "", true},
		{"empty User-Agent", "GET", "/v1/weapons", []string{"User-Agent:"}, "", true},
		{"no User-Agent, HEAD", "HEAD", item, nil, "", true},
		{"no User-Agent, not memoized", "GET", "/v1/maps", nil, "", false},
		{"no User-Agent, no route", "GET", "/v1/nothing", nil, "", false},
		{"no User-Agent, a page", "GET", "/docs", nil, "", false},
		{"no User-Agent, a probe", "GET", "/healthz", nil, "", false},
		// Every method.
		{"preflight", "OPTIONS", "/v1/weapons", []string{agent, "Origin: https://app.example", "Access-Control-Request-Method: GET"}, "", true},
		{"OPTIONS without Origin", "OPTIONS", "/v1/weapons", []string{agent}, "", true},
		{"OPTIONS without a User-Agent", "OPTIONS", "/v1/maps", []string{"Origin: https://app.example"}, "", false},
		{"OPTIONS on a page", "OPTIONS", "/browse", nil, "", false},
		{"POST", "POST", "/v1/weapons", []string{agent, "Content-Length: 2"}, "{}", true},
		{"PUT", "PUT", "/v1/weapons", []string{agent, "Content-Length: 0"}, "", true},
		{"DELETE", "DELETE", "/v1/weapons", []string{agent}, "", true},
		{"PATCH", "PATCH", item, []string{agent}, "", true},
		{"unknown method", "BREW", "/v1/weapons", []string{agent}, "", true},
		{"DELETE a page", "DELETE", "/docs", nil, "", false},
		// Escapes.
		{"bad escape in the query", "GET", "/v1/weapons?language=%zz", []string{agent}, "", false},
		{"bad escape in a query name", "GET", "/v1/weapons?%zz=1", []string{agent}, "", false},
		{"bad escape in the path", "GET", "/v1/weap%zzons", []string{agent}, "", false},
		{"lone percent in the path", "GET", "/v1/weapons%", []string{agent}, "", false},
		{"bad escape in a page's path", "GET", "/changes/%zz", nil, "", false},
		{"bad escape, no User-Agent", "GET", "/v1/weapons?language=%G0", nil, "", false},
		// Framing: a body by Transfer-Encoding is refused, the connection closed.
		{"chunked", "GET", "/v1/weapons", []string{agent, "Transfer-Encoding: chunked"}, "0\r\n\r\n", true},
		{"chunked with a length", "GET", "/v1/weapons", []string{agent, "Content-Length: 5", "Transfer-Encoding: chunked"}, "0\r\n\r\n", true},
		{"chunked OPTIONS", "OPTIONS", "/v1/weapons", []string{agent, "Transfer-Encoding: chunked"}, "0\r\n\r\n", true},
		// Conditional requests.
		{"If-None-Match its ETag", "GET", "/v1/weapons", []string{agent, "If-None-Match: " + etag}, "", true},
		{"If-None-Match another", "GET", "/v1/weapons", []string{agent, `If-None-Match: "nope"`}, "", true},
		{"If-None-Match weak", "GET", "/v1/weapons", []string{agent, "If-None-Match: W/" + etag}, "", true},
		{"If-None-Match *", "GET", "/v1/weapons", []string{agent, "If-None-Match: *"}, "", true},
		{"If-None-Match a list", "GET", "/v1/weapons", []string{agent, `If-None-Match: "a", ` + etag + `, "b"`}, "", true},
		{"If-None-Match lines", "GET", "/v1/weapons", []string{agent, `If-None-Match: "a"`, "If-None-Match: " + etag}, "", true},
		{"If-None-Match of identity, gzip asked", "GET", "/v1/weapons", []string{agent, "Accept-Encoding: gzip", "If-None-Match: " + etag}, "", true},
		{"HEAD If-None-Match", "HEAD", "/v1/weapons", []string{agent, "If-None-Match: " + etag}, "", true},
		// Pinned routes.
		{"pinned", "GET", "/v1/versions/" + id + "/weapons", []string{agent}, "", true},
		{"pinned in a language", "GET", "/v1/versions/" + id + "/weapons?language=de-DE", []string{agent}, "", true},
		{"pinned, lower case", "GET", "/v1/versions/" + strings.ToLower(id) + "/weapons", []string{agent}, "", true},
		{"pinned item", "GET", "/v1/versions/" + id + strings.TrimPrefix(item, "/v1"), []string{agent}, "", true},
		{"pinned, not retained", "GET", "/v1/versions/0000000000000000/weapons", []string{agent}, "", false},
		{"pinned, not an ID", "GET", "/v1/versions/nope/weapons", []string{agent}, "", false},
		{"pinned, no User-Agent", "GET", "/v1/versions/" + id + "/weapons", nil, "", true},
		// Errors.
		{"no route", "GET", "/v1/nothing", []string{agent}, "", false},
		{"no item", "GET", "/v1/weapons/00000000-0000-0000-0000-000000000000", []string{agent}, "", false},
		{"not a UUID", "GET", "/v1/weapons/nope", []string{agent}, "", false},
		{"unknown language", "GET", "/v1/weapons?language=xx-XX", []string{agent}, "", false},
		{"parameter twice", "GET", "/v1/weapons?language=de-DE&language=fr-FR", []string{agent}, "", false},
		{"no page", "GET", "/nope", nil, "", false},
		{"no catalog page", "GET", "/browse/nope", nil, "", false},
		{"a page's bad parameter", "GET", "/changes?language=all", nil, "", false},
		{"HEAD no page", "HEAD", "/nope", nil, "", false},
		{"trailing slash", "GET", "/v1/weapons/", []string{agent}, "", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			raw := tc.method + " " + tc.target + " HTTP/1.1\r\nHost: x\r\n" + strings.Join(append(tc.header, ""), "\r\n") + "\r\n" + tc.body
			for i := range 3 {
				want := direct(r, routerRequest(t, raw))
				got := h.raw(t, raw, tc.method)
				what := tc.method + " " + tc.target
				if i > 0 {
					what += " (again)"
				}
				for _, res := range []*response{&got, &want} {
					res.header.Del("X-Request-Id")
					res.header.Del("Server-Timing")
				}
				same(t, what, got, want)
				validate(t, c, tc.method, tc.target, raw, got)
				if i == 0 && h.memoized(tc.target) != tc.memo {
					t.Errorf("%s: in the memo = %v, want %v", what, h.memoized(tc.target), tc.memo)
				}
			}
		})
	}
}

// raw sends a request as raw bytes on a connection of its own and reads the
// answer (without Date).
func (h *harness) raw(t *testing.T, raw, method string) response {
	t.Helper()
	conn, err := net.Dial("tcp", h.addr)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if _, err := io.WriteString(conn, raw); err != nil {
		t.Fatal(err)
	}
	res, err := http.ReadResponse(bufio.NewReader(conn), &http.Request{Method: method})
	if err != nil {
		t.Fatalf("%q: %v", raw, err)
	}
	body, err := io.ReadAll(res.Body)
	res.Body.Close()
	if err != nil {
		t.Fatalf("%q: %v", raw, err)
	}
	res.Header.Del("Date")
	if res.Close { // the reader takes the field out
		res.Header.Set("Connection", "close")
	}
	return response{res.StatusCode, res.Header, body}
}

// routerRequest is raw as net/http's server would hand it to the router; a
// target net/url cannot parse (a bad escape in the path, which net/http
// itself refuses) is handed over as sent.
func routerRequest(t *testing.T, raw string) *http.Request {
	t.Helper()
	req, err := http.ReadRequest(bufio.NewReader(strings.NewReader(raw)))
	if err == nil {
		return req
	}
	line, rest, _ := strings.Cut(raw, "\r\n")
	method, target, _ := strings.Cut(line, " ")
	target, _, _ = strings.Cut(target, " ")
	req, err = http.ReadRequest(bufio.NewReader(strings.NewReader(method + " / HTTP/1.1\r\n" + rest)))
	if err != nil {
		t.Fatalf("%q: %v", raw, err)
	}
	path, query, _ := strings.Cut(target, "?")
	req.URL, req.RequestURI = &url.URL{Path: path, RawQuery: query}, target
	return req
}

// validate checks an answer against openapi.yaml: as the client saw it, or,
// for a target net/url cannot parse or a body the policy refuses, as an
// error answer of its path.
func validate(t *testing.T, c *apitest.Checker, method, target, raw string, res response) {
	t.Helper()
	req, err := http.ReadRequest(bufio.NewReader(strings.NewReader(raw)))
	if err != nil || len(req.TransferEncoding) > 0 {
		c.CheckError(t, &http.Request{Method: method, URL: &url.URL{Opaque: target}}, &http.Response{StatusCode: res.status, Header: res.header}, res.body)
		return
	}
	check(t, c, req, res)
}
