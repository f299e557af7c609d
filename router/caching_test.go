package router_test

import (
	"bytes"
	"compress/gzip"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/refdata/refdata/edition"
	"github.com/refdata/refdata/handler"
	"github.com/refdata/refdata/pages"
	"github.com/refdata/refdata/router/apitest"
)

// TestConditionalRequests follows RFC 9110 §13.1.2 (If-None-Match, weak
// comparison), §15.4.5 (a 304 carries ETag, Cache-Control and Vary, no body) and
// §9.3.2 (HEAD: the GET headers without the body).
func TestConditionalRequests(t *testing.T) {
	t.Parallel()
	viaBoth(t, conditionalRequests)
}

func conditionalRequests(t *testing.T, build func(edition.Repository, http.Handler, ...func(*handler.Server)) http.Handler) {
	check := apitest.New(t)
	h := build(edition.Serve(active(t)), nil)
	const path = "/v1/weapons"
	plain := check.Do(t, h, get(path))
	zipped := check.Do(t, h, get(path, "Accept-Encoding", "gzip"))
	etag, gzETag := plain.Header.Get("ETag"), zipped.Header.Get("ETag")
	if etag == "" || gzETag == "" || etag == gzETag {
		t.Fatalf("identity ETag %q, gzip ETag %q: want two different strong ETags", etag, gzETag)
	}
	for _, tc := range []struct {
		name, acceptEncoding, ifNoneMatch string
		want                              int
	}{
		{"same representation", "", etag, 304},
		{"gzip representation", "gzip", gzETag, 304},
		{"other representation's tag", "gzip", etag, 200},
		{"weak form matches", "", "W/" + etag, 304},
		{"one of a list", "", `"nope", ` + etag, 304},
		{"star", "", "*", 304},
		{"stale tag", "", `"stale"`, 200},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res := check.Do(t, h, get(path, "Accept-Encoding", tc.acceptEncoding, "If-None-Match", tc.ifNoneMatch))
			if res.StatusCode != tc.want {
				t.Fatalf("status %d, want %d", res.StatusCode, tc.want)
			}
			if tc.want == 304 {
				for _, name := range []string{"ETag", "Cache-Control", "Vary"} {
					if res.Header.Get(name) == "" {
						t.Errorf("304 without %s", name)
					}
				}
			}
		})
	}

	head := get(path, "Accept-Encoding", "gzip")
	head.Method = http.MethodHead
	res := check.Do(t, h, head)
	for _, name := range []string{"ETag", "Content-Length", "Content-Encoding", "Content-Type", "X-Data-Version"} {
		if res.Header.Get(name) != zipped.Header.Get(name) {
			t.Errorf("HEAD %s = %q, GET has %q", name, res.Header.Get(name), zipped.Header.Get(name))
		}
	}

	gz, _ := io.ReadAll(zipped.Body)
	zr, err := gzip.NewReader(bytes.NewReader(gz))
	if err != nil {
		t.Fatal(err)
	}
	unzipped, _ := io.ReadAll(zr)
	identity, _ := io.ReadAll(plain.Body)
	if !bytes.Equal(unzipped, identity) {
		t.Error("the gzip body does not decode to the identity body")
	}
	if zipped.Header.Get("Vary") != "Accept-Encoding" || plain.Header.Get("Vary") != "Accept-Encoding" {
		t.Error("Vary: Accept-Encoding missing")
	}
}

func TestCORS(t *testing.T) {
	t.Parallel()
	viaBoth(t, cors)
}

// TestNoSniff: every kind of answer carries X-Content-Type-Options: nosniff on
// both stacks (the edge's memo answers and its own errors too), and /media its
// sandbox and cross-origin policy. (apitest's Checker asks it of every answer
// in every test; this walks each kind on purpose.)
func TestNoSniff(t *testing.T) {
	t.Parallel()
	viaBoth(t, noSniff)
}

func noSniff(t *testing.T, build func(edition.Repository, http.Handler, ...func(*handler.Server)) http.Handler) {
	check := apitest.New(t)
	h := build(edition.Serve(active(t)), nil)
	head, options := get("/v1/weapons"), get("/v1/weapons", "Origin", "https://app.example", "Access-Control-Request-Method", "GET")
	head.Method, options.Method = http.MethodHead, http.MethodOptions
	post := get("/v1/weapons")
	post.Method = http.MethodPost
	media := "/media/" + testMediaHash()
	for _, tc := range []struct {
		name string
		req  *http.Request
		want int
	}{
		{"catalog", get("/v1/weapons"), http.StatusOK},
		{"catalog again (the edge's memo)", get("/v1/weapons"), http.StatusOK},
		{"catalog HEAD", head, http.StatusOK},
		{"not modified", get("/v1/version", "If-None-Match", "*"), http.StatusNotModified},
		{"a rule's answer", get("/v1/levelborders?level=20"), http.StatusOK},
		{"API error", get("/v1/weapons/nope"), http.StatusBadRequest},
		{"no route", get("/v1/nope"), http.StatusNotFound},
		{"bad escape (the edge's own)", get("/v1/weapons?language=%zz"), http.StatusBadRequest},
		{"method", post, http.StatusMethodNotAllowed},
		{"preflight", options, http.StatusNoContent},
		{"redirect", get("/v1/weapons/"), http.StatusMovedPermanently},
		{"page", get("/"), http.StatusOK},
		{"page error", get("/nope"), http.StatusNotFound},
		{"spec YAML (outside the spec)", get("/openapi.yaml"), http.StatusOK},
		{"spec JSON (outside the spec)", get("/openapi.json"), http.StatusOK},
		{"docs script (outside the spec)", get(pages.RedocPath), http.StatusOK},
		{"media", get(media), http.StatusOK},
		{"media range", get(media, "Range", "bytes=0-3"), http.StatusPartialContent},
		{"media range refused", get(media, "Range", "bytes=-0"), http.StatusRequestedRangeNotSatisfiable},
		{"stream", get("/v1/version/stream"), http.StatusOK},
		{"metrics", get("/v1/metrics"), http.StatusOK},
		{"probe", get("/healthz"), http.StatusOK},
	} {
		var res *http.Response
		if strings.HasSuffix(tc.name, "(outside the spec)") {
			res = newRecorder(h, tc.req).Result()
		} else {
			res = check.Do(t, h, tc.req)
		}
		if res.StatusCode != tc.want || res.Header.Get("X-Content-Type-Options") != "nosniff" {
			t.Errorf("%s: %d with X-Content-Type-Options %q, want %d with nosniff", tc.name, res.StatusCode, res.Header.Get("X-Content-Type-Options"), tc.want)
		}
		if strings.HasPrefix(tc.name, "media") && tc.want != http.StatusRequestedRangeNotSatisfiable &&
			(res.Header.Get("Content-Security-Policy") != "default-src 'none'; sandbox" || res.Header.Get("Cross-Origin-Resource-Policy") != "cross-origin" || res.Header.Get("Content-Type") != "image/png" && tc.want == http.StatusOK) {
			t.Errorf("%s: Content-Type %q, Content-Security-Policy %q, Cross-Origin-Resource-Policy %q; want the stored type, a sandbox, cross-origin",
				tc.name, res.Header.Get("Content-Type"), res.Header.Get("Content-Security-Policy"), res.Header.Get("Cross-Origin-Resource-Policy"))
		}
	}
}

func cors(t *testing.T, build func(edition.Repository, http.Handler, ...func(*handler.Server)) http.Handler) {
	check := apitest.New(t)
	h := build(edition.Serve(active(t)), nil)
	pre := get("/v1/weapons", "Origin", "https://app.example", "Access-Control-Request-Method", "GET")
	pre.Method = http.MethodOptions
	check.Do(t, h, pre)
	for _, path := range []string{"/v1/weapons", "/v1/weapons/nope"} {
		res := check.Do(t, h, get(path, "Origin", "https://app.example"))
		if res.Header.Get("Access-Control-Allow-Origin") != "*" || res.Header.Get("Access-Control-Expose-Headers") == "" {
			t.Errorf("%s: CORS headers missing: %v", path, res.Header)
		}
	}
}
