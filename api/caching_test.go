package api_test

import (
	"bytes"
	"compress/gzip"
	"io"
	"net/http"
	"testing"

	"github.com/refdata/refdata/api/apitest"
	"github.com/refdata/refdata/edition"
)

// TestConditionalRequests follows RFC 9110 §13.1.2 (If-None-Match, weak
// comparison), §15.4.5 (a 304 carries ETag, Cache-Control and Vary, no body) and
// §9.3.2 (HEAD: the GET headers without the body).
func TestConditionalRequests(t *testing.T) {
	t.Parallel()
	viaBoth(t, conditionalRequests)
}

func conditionalRequests(t *testing.T, handler func(edition.Repository, http.Handler) http.Handler) {
	check := apitest.New(t)
	h := handler(edition.Serve(active(t)), nil)
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

func cors(t *testing.T, handler func(edition.Repository, http.Handler) http.Handler) {
	check := apitest.New(t)
	h := handler(edition.Serve(active(t)), nil)
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
