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
	hHTML           = []string{"text/html; charset=utf-8"}
	hPageCSP        = []string{PageCSP}
	hNoSniff        = []string{"nosniff"}
	hVary           = []string{"Accept-Encoding"}
	hCacheCatalog   = []string{CacheCatalog}
	hCacheSignal    = []string{CacheSignal}
	hCacheImmutable = []string{CacheImmutable}
)

// writeBody writes a pre-rendered body in the representation Accept-Encoding asks
// for: headers made at load time, 304 when If-None-Match names the chosen
// representation's ETag, no body for HEAD. It allocates nothing.
func writeBody(w http.ResponseWriter, r *http.Request, ed *catalog.Edition, b *catalog.Body, cache []string) {
	write(w, r, ed, b, cache, hJSON)
}

// PageCSP is the Content-Security-Policy of the HTML pages: everything from this
// server; images also over https (item icons are the data's URLs); inline styles
// and blob: workers because Redoc (the /docs renderer) injects its styles and
// runs its search index in a worker.
const PageCSP = "default-src 'self'; script-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' https: data:; font-src 'self' data:; connect-src 'self'; worker-src 'self' blob:; object-src 'none'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'"

// writePage writes a pre-rendered HTML page as writeBody writes JSON.
func writePage(w http.ResponseWriter, r *http.Request, ed *catalog.Edition, b *catalog.Body, cache []string) {
	h := w.Header()
	h["Content-Security-Policy"] = hPageCSP
	h["X-Content-Type-Options"] = hNoSniff
	write(w, r, ed, b, cache, hHTML)
}

// WriteAsset writes a body that belongs to no version (the docs page's script) as
// writeBody writes JSON: ETag, 304, the encoding Accept-Encoding asks for.
func WriteAsset(w http.ResponseWriter, r *http.Request, b *catalog.Body, contentType []string) {
	h := w.Header()
	h["X-Content-Type-Options"] = hNoSniff
	write(w, r, nil, b, hCacheCatalog, contentType)
}

func write(w http.ResponseWriter, r *http.Request, ed *catalog.Edition, b *catalog.Body, cache, contentType []string) {
	rep := b.Pick(r.Header["Accept-Encoding"])
	h := w.Header()
	h["Content-Type"] = contentType
	h["Cache-Control"] = cache
	h["Vary"] = hVary
	h["Etag"] = rep.ETagHeader
	if ed != nil {
		h["X-Data-Version"] = ed.ManifestHeader
	}
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
