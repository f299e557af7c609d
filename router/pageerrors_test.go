package router_test

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/refdata/refdata/edition"
	"github.com/refdata/refdata/handler"
	"github.com/refdata/refdata/router"
	"github.com/refdata/refdata/router/apitest"
)

// TestPageErrorsArePages: on the pages' paths — every path outside /v1 but
// the documents and probes — an error is an HTML page in the site's layout
// with the status, a heading, the message (escaped) and a way back: a link to
// / and, from a changelog, to /changes; whatever Accept asks for. /v1, the
// documents and the probes keep the JSON envelope. Through the router and
// through the edge, which answers some of these before routing.
func TestPageErrorsArePages(t *testing.T) {
	t.Parallel()
	viaBoth(t, pageErrors)
}

func pageErrors(t *testing.T, build func(edition.Repository, http.Handler, ...func(*handler.Server)) http.Handler) {
	full := served(t)
	check := apitest.New(t)
	h := build(full, nil)
	broken := build(faulty{Static: full, panics: true}, nil)
	newer := full.Active().ManifestID
	for _, tc := range []struct {
		name, method, target string
		header               []string // more request headers, in pairs
		h                    http.Handler
		status               int
		page                 bool     // an HTML page; else the JSON envelope
		says                 []string // in the body (a page's text, escaped)
		not                  []string // nowhere in the body
	}{
		{"unknown path", "GET", "/nope", nil, h, 404, true, []string{"<h1>Page not found</h1>", "There is no page at /nope."}, nil},
		{"unknown path asked for JSON", "GET", "/nope", []string{"Accept", "application/json"}, h, 404, true, []string{"<h1>Page not found</h1>"}, nil},
		{"unknown path, HEAD", "HEAD", "/nope", nil, h, 404, true, nil, nil},
		{"unknown path below a page", "GET", "/docs/nope", nil, h, 404, true, []string{"There is no page at /docs/nope."}, nil},
		{"unknown path below /changes", "GET", "/changes/a/b/c", nil, h, 404, true, []string{`<a href="/changes">`}, nil},
		{"a path that is markup", "GET", "/%3Cscript%3Ealert(1)%3C/script%3E", nil, h, 404, true,
			[]string{"There is no page at /&lt;script&gt;alert(1)&lt;/script&gt;."}, []string{"<script>alert"}},
		{"unknown versions", "GET", "/changes/zzz/yyy", nil, h, 404, true,
			[]string{"<h1>Page not found</h1>", "This server retains no version named &#34;zzz&#34;", `<a href="/changes">`}, nil},
		{"a version not retained", "GET", "/changes/0000000000000000/" + newer, nil, h, 404, true, []string{`<a href="/changes">`}, nil},
		{"unsupported language", "GET", "/changes?language=xx-XX", nil, h, 400, true,
			[]string{"<h1>Bad request</h1>", "Language &#34;xx-XX&#34; is not supported", `<a href="/changes">`}, nil},
		{"language given twice", "GET", "/changes?language=de-DE&language=fr-FR", nil, h, 400, true,
			[]string{`Parameter &#34;language&#34;`}, nil},
		{"malformed escape in a page's query", "GET", "/changes?language=%zz", nil, h, 400, true, []string{"malformed percent-escape"}, nil},
		{"POST to a page", "POST", "/docs", nil, h, 405, true, []string{"<h1>Method not allowed</h1>"}, nil},
		{"DELETE on an unknown path", "DELETE", "/nope", nil, h, 405, true, nil, nil},
		{"a page that fails", "GET", "/", nil, broken, 500, true, []string{"<h1>Server error</h1>", "request id "}, []string{"repository exploded", "goroutine"}},
		{"a changelog that fails", "GET", "/changes", nil, broken, 500, true, []string{"request id ", `<a href="/changes">`}, []string{"repository exploded"}},
		// The API, the documents and the probes: the envelope, as before.
		{"unknown /v1 route", "GET", "/v1/nothing", nil, h, 404, false, []string{`"status":404`}, nil},
		{"/v1 asked for HTML", "GET", "/v1/nothing", []string{"Accept", "text/html"}, h, 404, false, []string{`"status":404`}, nil},
		{"bad /v1 parameter", "GET", "/v1/weapons?language=xx-XX", nil, h, 400, false, []string{`"status":400`}, nil},
		{"the diff's malformed version", "GET", "/v1/diff/zzz/yyy", nil, h, 400, false, []string{"not a manifest ID"}, nil},
		{"POST to /v1", "POST", "/v1/weapons", nil, h, 405, false, nil, nil},
		{"POST to a document", "POST", "/openapi.yaml", nil, h, 405, false, nil, nil},
		{"POST to a probe", "POST", "/healthz", nil, h, 405, false, nil, nil},
		{"/metrics is no page", "GET", "/metrics", nil, h, 404, false, nil, nil},
		{"a /v1 route that fails", "GET", "/v1/version", nil, broken, 500, false, []string{"request id "}, []string{"repository exploded"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			req := httptest.NewRequest(tc.method, tc.target, nil)
			req.Header.Set("User-Agent", ua)
			for i := 0; i+1 < len(tc.header); i += 2 {
				req.Header.Set(tc.header[i], tc.header[i+1])
			}
			res := check.Do(t, tc.h, req)
			b, _ := io.ReadAll(res.Body)
			body := string(b)
			if res.StatusCode != tc.status {
				t.Fatalf("%s %s: %d, want %d: %.300s", tc.method, tc.target, res.StatusCode, tc.status, body)
			}
			// check.Do held the answer to the spec: a page's error to PageError
			// (or, outside the spec's paths, to what every error page is), any
			// other to the envelope. What the spec cannot say is checked here.
			ct := res.Header.Get("Content-Type")
			if tc.page && ct != "text/html; charset=utf-8" || !tc.page && ct != "application/json" {
				t.Errorf("%s %s: Content-Type %q", tc.method, tc.target, ct)
			}
			if tc.status == http.StatusMethodNotAllowed && res.Header.Get("Allow") != "GET, HEAD, OPTIONS" {
				t.Errorf("%s %s: 405 with Allow %q", tc.method, tc.target, res.Header.Get("Allow"))
			}
			if tc.page && tc.status == http.StatusInternalServerError && !strings.Contains(body, res.Header.Get("X-Request-Id")) {
				t.Errorf("%s %s: the page does not name the request id %q", tc.method, tc.target, res.Header.Get("X-Request-Id"))
			}
			if tc.method == http.MethodHead {
				if body != "" {
					t.Errorf("HEAD %s: a body", tc.target)
				}
				return
			}
			if tc.page {
				for _, want := range []string{`<html lang="en">`, `<a href="/">Back to the home page</a>`, `<p class="muted">HTTP status ` + res.Status[:3] + `.</p>`} {
					if !strings.Contains(body, want) {
						t.Errorf("%s %s: the page lacks %s", tc.method, tc.target, want)
					}
				}
			} else if !json.Valid(b) {
				t.Errorf("%s %s: not JSON: %.300s", tc.method, tc.target, body)
			}
			for _, want := range tc.says {
				if !strings.Contains(body, want) {
					t.Errorf("%s %s: the answer lacks %s\n%s", tc.method, tc.target, want, body[strings.Index(body, "<main"):])
				}
			}
			for _, bad := range tc.not {
				if strings.Contains(body, bad) {
					t.Errorf("%s %s: the answer carries %s", tc.method, tc.target, bad)
				}
			}
		})
	}
}

// TestIsPagePath: the paths whose errors are pages, and those that keep the
// envelope.
func TestIsPagePath(t *testing.T) {
	t.Parallel()
	for path, want := range map[string]bool{
		"/": true, "/nope": true, "/docs": true, "/docs/": true, "/changes/a/b": true, "/v1x": true,
		"/openapi.yaml/": true, "/favicon.ico": true,
		"/v1": false, "/v1/": false, "/v1/weapons": false, "/v1/nope": false,
		"/openapi.yaml": false, "/openapi.json": false, "/healthz": false, "/readyz": false, "/metrics": false,
		"": false, "*": false, "127.0.0.1:443": false, "http://a/b": false,
	} {
		if got := router.IsPagePath(path); got != want {
			t.Errorf("IsPagePath(%q) = %v, want %v", path, got, want)
		}
	}
}

// TestTrailingSlashRedirects: a path with a trailing slash whose path without
// it is a page's or a /v1 route's is 301 to that path, query kept, and the
// Location then answers; any other such path is the 404 it was (a page's or
// the envelope), never a redirect off the site.
func TestTrailingSlashRedirects(t *testing.T) {
	t.Parallel()
	viaBoth(t, trailingSlashes)
}

func trailingSlashes(t *testing.T, build func(edition.Repository, http.Handler, ...func(*handler.Server)) http.Handler) {
	full := served(t)
	check := apitest.New(t)
	h := build(full, nil)
	older, newer := previous(t, full), full.Active().ManifestID
	for _, tc := range []struct {
		method, target string
		userAgent      string
		status         int
		location       string
	}{
		{"GET", "/docs/", "", 301, "/docs"},
		{"GET", "/changes/", "", 301, "/changes"},
		{"GET", "/changes/?language=ja-JP", "", 301, "/changes?language=ja-JP"},
		{"GET", "/changes/" + older + "/" + newer + "/", "", 301, "/changes/" + older + "/" + newer},
		{"HEAD", "/docs/", "", 301, "/docs"},
		{"GET", "/docs//", "", 301, "/docs"},
		{"GET", "/v1/weapons/", ua, 301, "/v1/weapons"},
		{"GET", "/v1/weapons/?language=de-DE", ua, 301, "/v1/weapons?language=de-DE"},
		{"GET", "/v1/weapons/skins/", ua, 301, "/v1/weapons/skins"},
		{"GET", "/v1/diff/latest/", ua, 301, "/v1/diff/latest"},
		// The redirect comes before the User-Agent rule; the Location then has it.
		{"GET", "/v1/weapons/", "", 301, "/v1/weapons"},
		{"GET", "/nope/", "", 404, ""},
		{"GET", "/v1/nothing/", ua, 404, ""},
		{"GET", "/v1/", ua, 404, ""},
		{"GET", "/healthz/", ua, 404, ""},
		{"GET", "/openapi.json/", ua, 404, ""},
		{"GET", "//evil.example/", "", 404, ""},
		{"GET", "/", "", 200, ""},
	} {
		t.Run(tc.method+" "+tc.target, func(t *testing.T) {
			t.Parallel()
			req := httptest.NewRequest(tc.method, tc.target, nil)
			req.Header.Set("User-Agent", tc.userAgent)
			res := check.Do(t, h, req)
			if res.StatusCode != tc.status {
				t.Fatalf("%d, want %d", res.StatusCode, tc.status)
			}
			if loc := res.Header.Get("Location"); loc != tc.location {
				t.Fatalf("Location %q, want %q", loc, tc.location)
			}
			if tc.status != http.StatusMovedPermanently {
				return
			}
			next := httptest.NewRequest(tc.method, tc.location, nil)
			next.Header.Set("User-Agent", ua)
			if res := check.Do(t, h, next); res.StatusCode != http.StatusOK {
				t.Errorf("the Location %s answers %d", tc.location, res.StatusCode)
			}
		})
	}
}

// TestHomeNamesTheRequestsAddress: the landing page's example command names
// the address the request came to — its Host when that is a plain host name
// or address, https when X-Forwarded-Proto says so — and anything else in
// Host gives the default address, so nothing a client sends that could end
// the command's quotes or the page's markup reaches the page.
func TestHomeNamesTheRequestsAddress(t *testing.T) {
	t.Parallel()
	check := apitest.New(t)
	h := testRouter(t, served(t), nil)
	const path = "/v1/weapons?language=ja-JP'"
	for _, tc := range []struct {
		name, host, proto string
		says              string
	}{
		{"a host name and port", "refdata.example:8443", "", "'http://refdata.example:8443" + path},
		{"a host name", "refdata.example", "", "'http://refdata.example" + path},
		{"an IPv4 address", "192.0.2.7:8080", "", "'http://192.0.2.7:8080" + path},
		{"an IPv6 address", "[2001:db8::1]:8080", "", "'http://[2001:db8::1]:8080" + path},
		{"behind a proxy that ends TLS", "refdata.example", "https", "'https://refdata.example" + path},
		{"a proxy's list", "refdata.example", "HTTPS, http", "'https://refdata.example" + path},
		{"a proxy on plain http", "refdata.example", "http", "'http://refdata.example" + path},
		{"an unknown scheme", "refdata.example", "gopher", "'http://refdata.example" + path},
		{"markup in Host", `evil.example"><script>alert(1)</script>`, "", "'http://localhost:8080" + path},
		{"a quote in Host", `evil.example';rm -rf ~;'`, "", "'http://localhost:8080" + path},
		{"markup in Host behind a proxy", `<img src=x onerror=alert(1)>`, "https", "'https://localhost:8080" + path},
		{"a port that is not a number", "refdata.example:http", "", "'http://localhost:8080" + path},
		{"a user in Host", "user@refdata.example", "", "'http://localhost:8080" + path},
		{"no Host", "", "", "'http://localhost:8080" + path},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			req := get("/", "User-Agent", "", "X-Forwarded-Proto", tc.proto)
			req.Host = tc.host
			res := check.Do(t, h, req)
			b, _ := io.ReadAll(res.Body)
			body := string(b)
			if res.StatusCode != http.StatusOK {
				t.Fatalf("%d: %.300s", res.StatusCode, body)
			}
			if want := "curl -A 'MyApp/1.0 (+https://example.com)' " + tc.says; !strings.Contains(body, want) {
				t.Errorf("the page lacks %s", want)
			}
			for _, bad := range []string{"<script>alert", "<img src=x", "rm -rf"} {
				if strings.Contains(body, bad) {
					t.Errorf("the page carries %s", bad)
				}
			}
			if v := res.Header.Get("Vary"); v != "Accept-Encoding, X-Forwarded-Proto" {
				t.Errorf("Vary %q: the page depends on X-Forwarded-Proto", v)
			}
			if cc := res.Header.Get("Cache-Control"); cc != handler.CacheSignal {
				t.Errorf("Cache-Control %q", cc)
			}
		})
	}
}

// TestHomeThroughTheEdge: the edge hands the router the Host its client sent,
// and each address gets its own page (and ETag).
func TestHomeThroughTheEdge(t *testing.T) {
	t.Parallel()
	r := served(t)
	check := apitest.New(t)
	h := throughEdge(t, testRouter(t, r, nil), r)
	etags := map[string]string{}
	for _, host := range []string{"one.example:8080", "two.example"} {
		for range 2 {
			req := get("/")
			req.Host = host
			res := check.Do(t, h, req)
			b, _ := io.ReadAll(res.Body)
			if !strings.Contains(string(b), "http://"+host+"/v1/weapons") {
				t.Errorf("Host %s: the page does not name it", host)
			}
			if prev, ok := etags[host]; ok && prev != res.Header.Get("ETag") {
				t.Errorf("Host %s: ETag %s, then %s", host, prev, res.Header.Get("ETag"))
			}
			etags[host] = res.Header.Get("ETag")
		}
	}
	if etags["one.example:8080"] == etags["two.example"] {
		t.Error("two addresses, one ETag")
	}
}
