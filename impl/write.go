package impl

import (
	"net/http"
	"strings"

	"github.com/refdata/refdata/catalog"
)

// Cache policies, justified in the README: catalog bodies may be reused for five
// minutes and then revalidated (a 304 is cheap, and ETags follow the bytes, so an
// unchanged body keeps its ETag across versions); the change signals (/v1/version,
// /v1/diff/latest) are revalidated on every use; a diff between two named
// versions never changes.
const (
	CacheCatalog   = "public, max-age=300, stale-while-revalidate=60"
	CacheSignal    = "public, no-cache"
	CacheImmutable = "public, max-age=31536000, immutable"
)

// Header values shared by every response, allocated once.
var (
	hJSON           = []string{"application/json"}
	hVary           = []string{"Accept-Encoding"}
	hCacheCatalog   = []string{CacheCatalog}
	hCacheSignal    = []string{CacheSignal}
	hCacheImmutable = []string{CacheImmutable}
)

// writeBody writes a pre-rendered body in the representation Accept-Encoding asks
// for: headers made at load time, 304 when If-None-Match names the chosen
// representation's ETag, no body for HEAD. It allocates nothing.
func writeBody(w http.ResponseWriter, r *http.Request, ed *catalog.Edition, b *catalog.Body, cache []string) {
	rep := b.Pick(r.Header["Accept-Encoding"])
	h := w.Header()
	h["Content-Type"] = hJSON
	h["Cache-Control"] = cache
	h["Vary"] = hVary
	h["Etag"] = rep.ETagHeader
	h["X-Data-Version"] = ed.ManifestHeader
	if b.LangHeader != nil {
		h["Content-Language"] = b.LangHeader
	}
	if inm := r.Header["If-None-Match"]; len(inm) > 0 && ETagMatch(inm, rep.ETag) {
		w.WriteHeader(http.StatusNotModified)
		return
	}
	if rep.EncodingHeader != nil {
		h["Content-Encoding"] = rep.EncodingHeader
	}
	h["Content-Length"] = rep.LengthHeader
	w.WriteHeader(http.StatusOK)
	if r.Method != http.MethodHead {
		_, _ = w.Write(rep.Bytes)
	}
}

// ETagMatch applies RFC 9110's weak comparison for If-None-Match: "*" or any listed
// tag whose opaque part equals ours.
func ETagMatch(values []string, etag string) bool {
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
