package apitest_test

import (
	"bytes"
	"compress/gzip"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/refdata/refdata/router/apitest"
)

// recorder is a testing.TB that keeps the failures a Checker reports instead of
// failing the test, so each case can say whether the Checker caught it.
type recorder struct {
	testing.TB
	mu     sync.Mutex
	errors []string
}

func (r *recorder) Helper() {}
func (r *recorder) Errorf(format string, args ...any) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.errors = append(r.errors, fmt.Sprintf(format, args...))
}
func (r *recorder) Error(args ...any) { r.Errorf("%s", fmt.Sprint(args...)) }

// answer is a handler that writes a fixed response.
func answer(status int, header map[string]string, body []byte) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("X-Content-Type-Options", "nosniff") // every answer's; a header below may blank it
		for k, v := range header {
			w.Header().Set(k, v)
		}
		w.WriteHeader(status)
		_, _ = w.Write(body)
	})
}

// theme is a theme's JSON with the displayName given (JSON) and a field the
// contract does not name.
func theme(displayName string) string {
	return `{"uuid":"83815add-44a4-d508-47c7-0e81755fb716","displayName":` + displayName + `,"displayIcon":null,"storeFeaturedImage":null,"assetPath":"Themes/x","newField":{"any":[1,"shape"]}}`
}

func gz(t *testing.T, b []byte) []byte {
	t.Helper()
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	_, _ = zw.Write(b)
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// TestCheckerCatches: each kind of deviation from openapi.yaml is reported, and
// an answer that follows it is not — the validation every test relies on can fail.
func TestCheckerCatches(t *testing.T) {
	t.Parallel()
	const version = `{"status":200,"data":{"manifestId":"05E83EB5E32657B9","branch":"release-03.10","version":"03.10.00.639263","buildVersion":"39","buildDate":"2026-11-01T00:00:00Z","engineVersion":"","riotClientVersion":"","riotClientBuild":"","publisherClientVersion":"","publisherClientBuild":""}}`
	okHeaders := map[string]string{
		"Content-Type":                  "application/json",
		"Cache-Control":                 "public, no-cache",
		"ETag":                          `"v1"`,
		"Vary":                          "Accept-Encoding",
		"X-Data-Version":                "05E83EB5E32657B9",
		"Access-Control-Allow-Origin":   "*",
		"Access-Control-Expose-Headers": "ETag, X-Data-Version, Content-Language, Content-Location",
	}
	with := func(k, v string) map[string]string {
		h := map[string]string{}
		for a, b := range okHeaders {
			h[a] = b
		}
		h[k] = v
		return h
	}
	// A catalog item's: its locale and its pinned URL.
	item := with("Content-Language", "en-US")
	item["Content-Location"] = "/v1/versions/05E83EB5E32657B9/themes/83815add-44a4-d508-47c7-0e81755fb716"
	errJSON := map[string]string{"Content-Type": "application/json"}
	errHTML := map[string]string{
		"Content-Type":                  "text/html; charset=utf-8",
		"Cache-Control":                 "no-store",
		"X-Content-Type-Options":        "nosniff",
		"Content-Security-Policy":       "default-src 'self'",
		"Access-Control-Allow-Origin":   "*",
		"Access-Control-Expose-Headers": "ETag, X-Data-Version, Content-Language, Content-Location",
	}
	page := func(status, links string) []byte {
		return []byte(`<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1"><title>Error · refdata</title></head>
<body><main><h1>Error</h1><p>HTTP status ` + status + `.</p>` + links + `</main></body></html>`)
	}
	home := `<a href="/">Home</a>`
	for _, tc := range []struct {
		name    string
		method  string
		target  string
		header  map[string]string // request headers beyond User-Agent
		handler http.Handler
		want    string // in a reported failure; "" for none
	}{
		{"bad body", "GET", "/v1/version", nil,
			answer(200, okHeaders, []byte(`{"status":200,"data":{"manifestId":7}}`)), "does not match openapi.yaml"},
		{"undocumented status", "GET", "/v1/version", nil,
			answer(418, errJSON, []byte(`{"status":418,"error":"teapot"}`)), "does not match openapi.yaml"},
		{"outside the spec, 500", "GET", "/v1/nothing", nil,
			answer(500, errJSON, []byte(`{"status":500,"error":"x"}`)), "outside the spec"},
		{"error body not JSON", "GET", "/v1/nothing", nil,
			answer(404, map[string]string{"Content-Type": "text/plain"}, []byte("404 page not found")), "not JSON"},
		{"error status disagrees", "GET", "/v1/nothing", nil,
			answer(404, errJSON, []byte(`{"status":400,"error":"x"}`)), "does not carry status 404"},
		{"a page's error as JSON", "GET", "/nope", nil,
			answer(404, errJSON, []byte(`{"status":404,"error":"no route"}`)), `Content-Type "application/json", want "text/html`},
		{"an API error as a page", "GET", "/v1/nothing", nil,
			answer(404, errHTML, page("404", home)), "want application/json"},
		{"an error page without the way back", "GET", "/nope", nil,
			answer(404, errHTML, page("404", "")), `no <a href="/">`},
		{"a changelog's error page without /changes", "GET", "/changes/zzz/yyy", nil,
			answer(404, errHTML, page("404", home)), `no <a href="/changes">`},
		{"an error page that does not say its status", "GET", "/nope", nil,
			answer(404, errHTML, page("400", home)), "has no 404"},
		{"an error page that is no HTML document", "GET", "/nope", nil,
			answer(404, errHTML, []byte("<h1>404</h1>"+home)), "error page: the page"},
		{"a documented page error as JSON", "GET", "/changes?language=xx", nil,
			answer(400, errJSON, []byte(`{"status":400,"error":"x"}`)), "does not match openapi.yaml"},
		{"a redirect elsewhere", "GET", "/docs/", nil,
			answer(301, map[string]string{"Location": "/"}, nil), `want a redirect only from a trailing slash, to "/docs"`},
		{"a redirect without the query", "GET", "/v1/weapons/?language=de-DE", nil,
			answer(301, map[string]string{"Location": "/v1/weapons"}, nil), `to "/v1/weapons?language=de-DE"`},
		{"a redirect to no route", "GET", "/v1/nothing/", nil,
			answer(301, map[string]string{"Location": "/v1/nothing"}, nil), "not a route of the spec"},
		{"a redirect of a probe", "GET", "/healthz/", nil,
			answer(301, map[string]string{"Location": "/healthz"}, nil), "from a document or probe"},
		{"HEAD with a body", "HEAD", "/v1/version", nil,
			answer(200, okHeaders, []byte(version)), "HEAD answered with"},
		{"gzip not asked for", "GET", "/v1/version", nil,
			answer(200, with("Content-Encoding", "gzip"), gz(t, []byte(version))), "not asked for"},
		{"gzip refused with q=0", "GET", "/v1/version", map[string]string{"Accept-Encoding": "gzip;q=0, br"},
			answer(200, with("Content-Encoding", "gzip"), gz(t, []byte(version))), "not asked for"},
		{"corrupt gzip", "GET", "/v1/version", map[string]string{"Accept-Encoding": "gzip"},
			answer(200, with("Content-Encoding", "gzip"), []byte("not gzip")), "gzip body"},
		{"unknown coding", "GET", "/v1/version", map[string]string{"Accept-Encoding": "*"},
			answer(200, with("Content-Encoding", "zstd"), []byte(version)), "unknown Content-Encoding"},
		{"304 with a body", "GET", "/v1/version", map[string]string{"If-None-Match": `"v1"`},
			answer(304, okHeaders, []byte(version)), "304 with a body"},
		{"request the spec refuses, answered 200", "GET", "/v1/weapons?language=xx", nil,
			answer(200, okHeaders, []byte(`{"status":200,"data":[]}`)), "the spec rejects this request"},
		{"export not an archive", "GET", "/v1/export", nil,
			answer(200, map[string]string{"Content-Type": "application/gzip", "Cache-Control": "public, no-cache", "ETag": `"x"`, "X-Data-Version": "05E83EB5E32657B9", "Access-Control-Allow-Origin": "*", "Access-Control-Expose-Headers": "ETag, X-Data-Version, Content-Language, Content-Location", "Content-Disposition": `attachment; filename="refdata-05E83EB5E32657B9.tar.gz"`}, []byte("{}")), "not gzip"},
		{"preflight without CORS", "OPTIONS", "/v1/version", map[string]string{"Origin": "https://a.example", "Access-Control-Request-Method": "GET"},
			answer(200, nil, nil), "want 204"},
		{"an answer the browser may sniff", "GET", "/v1/version", nil,
			answer(200, with("X-Content-Type-Options", ""), []byte(version)), "every answer has nosniff"},
		{"an error the browser may sniff", "GET", "/v1/nothing", nil,
			answer(404, map[string]string{"Content-Type": "application/json", "X-Content-Type-Options": ""}, []byte(`{"status":404,"error":"no route"}`)), "every answer has nosniff"},
		{"a good answer", "GET", "/v1/version", nil,
			answer(200, okHeaders, []byte(version)), ""},
		{"a good gzip answer", "GET", "/v1/version", map[string]string{"Accept-Encoding": "br;q=0.5, gzip"},
			answer(200, with("Content-Encoding", "gzip"), gz(t, []byte(version))), ""},
		{"an item with a field the upstream added", "GET", "/v1/themes/83815add-44a4-d508-47c7-0e81755fb716", nil,
			answer(200, item, []byte(`{"status":200,"data":`+theme(`"Theme"`)+`}`)), ""},
		{"an item without its pinned URL", "GET", "/v1/themes/83815add-44a4-d508-47c7-0e81755fb716", nil,
			answer(200, with("Content-Language", "en-US"), []byte(`{"status":200,"data":`+theme(`"Theme"`)+`}`)), `"Content-Location" missing`},
		{"an item with a known field of the wrong type", "GET", "/v1/themes/83815add-44a4-d508-47c7-0e81755fb716", nil,
			answer(200, item, []byte(`{"status":200,"data":`+theme(`7`)+`}`)), `"displayName"`},
		{"an item without a known field", "GET", "/v1/themes/83815add-44a4-d508-47c7-0e81755fb716", nil,
			answer(200, item, []byte(`{"status":200,"data":{"uuid":"83815add-44a4-d508-47c7-0e81755fb716","newField":1}}`)), "does not match openapi.yaml"},
		{"a good 404", "GET", "/v1/nothing", nil,
			answer(404, errJSON, []byte(`{"status":404,"error":"no route"}`)), ""},
		{"a good 404 page", "GET", "/nope", nil,
			answer(404, errHTML, page("404", home)), ""},
		{"a good changelog 404 page", "GET", "/changes/zzz/yyy", nil,
			answer(404, errHTML, page("404", home+`<a href="/changes">Changes</a>`)), ""},
		{"a good 301", "GET", "/v1/weapons/?language=de-DE", nil,
			answer(301, map[string]string{"Location": "/v1/weapons?language=de-DE"}, nil), ""},
		{"a good 301 from a page", "GET", "/docs/", nil,
			answer(301, map[string]string{"Location": "/docs"}, nil), ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			c := apitest.New(t)
			req := httptest.NewRequest(tc.method, tc.target, nil)
			req.Header.Set("User-Agent", "apitest-test/1")
			for k, v := range tc.header {
				req.Header.Set(k, v)
			}
			rec := &recorder{TB: t}
			c.Do(rec, tc.handler, req)
			got := strings.Join(rec.errors, "\n")
			switch {
			case tc.want == "" && got != "":
				t.Errorf("a conforming answer was reported:\n%s", got)
			case tc.want != "" && !strings.Contains(got, tc.want):
				t.Errorf("not caught (want a report containing %q); reports:\n%s", tc.want, got)
			}
		})
	}
}

// TestUnexercised: the statuses no request produced are listed, and one that a
// request produced is not.
func TestUnexercised(t *testing.T) {
	t.Parallel()
	c := apitest.New(t)
	before := c.Unexercised()
	if len(before) < 50 {
		t.Fatalf("only %d statuses before any request", len(before))
	}
	req := httptest.NewRequest("GET", "/v1/nothing", nil)
	req.Header.Set("User-Agent", "apitest-test/1")
	c.Do(t, answer(404, map[string]string{"Content-Type": "application/json"}, []byte(`{"status":404,"error":"no route"}`)), req)
	if len(c.Unexercised()) != len(before) {
		t.Error("a request outside the spec changed what is exercised")
	}
	req = httptest.NewRequest("GET", "/healthz", nil)
	req.Header.Set("User-Agent", "apitest-test/1")
	c.Do(t, answer(200, map[string]string{"Content-Type": "application/json", "Cache-Control": "no-store"}, []byte(`{"status":200,"data":{"serving":"05E83EB5E32657B9"}}`)), req)
	after := c.Unexercised()
	for _, m := range after {
		if strings.HasPrefix(m, "getHealth 200") {
			t.Errorf("getHealth 200 still unexercised: %q", after)
		}
	}
	if len(after) != len(before)-1 {
		t.Errorf("%d unexercised after one new status, %d before", len(after), len(before))
	}
}
