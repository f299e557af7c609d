package impl

import (
	"net/http"
	"strings"

	"github.com/refdata/refdata/catalog"
)

// Header values shared by every response, allocated once.
var (
	hJSON         = []string{"application/json"}
	hCacheControl = []string{CacheControl}
)

// CacheControl lets caches keep a body briefly and then revalidate it with its
// ETag: data changes only when a version is published, and a 304 is cheap.
const CacheControl = "public, max-age=60, stale-while-revalidate=60"

// writeBody writes a pre-rendered body: headers from the body and the edition, 304
// when If-None-Match names its ETag, no body for HEAD.
func writeBody(w http.ResponseWriter, r *http.Request, ed *catalog.Edition, b *catalog.Body) {
	h := w.Header()
	h["Content-Type"] = hJSON
	h["Cache-Control"] = hCacheControl
	h["Etag"] = b.ETagHeader
	h["X-Data-Version"] = ed.ManifestHeader
	if b.LangHeader != nil {
		h["Content-Language"] = b.LangHeader
	}
	if inm := r.Header["If-None-Match"]; len(inm) > 0 && etagMatch(inm, b.ETag) {
		w.WriteHeader(http.StatusNotModified)
		return
	}
	h["Content-Length"] = b.LengthHeader
	w.WriteHeader(http.StatusOK)
	if r.Method != http.MethodHead {
		_, _ = w.Write(b.JSON)
	}
}

// etagMatch applies RFC 9110's weak comparison for If-None-Match: "*" or any listed
// tag whose opaque part equals ours.
func etagMatch(values []string, etag string) bool {
	for _, v := range values {
		for v != "" {
			var tag string
			tag, v, _ = strings.Cut(v, ",")
			tag = strings.TrimSpace(tag)
			if tag == "*" || strings.TrimPrefix(tag, "W/") == etag {
				return true
			}
		}
	}
	return false
}
