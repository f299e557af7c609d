package impl

import (
	"net/http"

	"github.com/refdata/refdata/catalog"
	"github.com/refdata/refdata/edition"
	"github.com/refdata/refdata/representation"
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

// PageCSP is the Content-Security-Policy of the HTML pages: everything from this
// server; images also over https (item icons are the data's URLs); inline styles
// and blob: workers because Redoc (the /docs renderer) injects its styles and
// runs its search index in a worker.
const PageCSP = "default-src 'self'; script-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' https: data:; font-src 'self' data:; connect-src 'self'; worker-src 'self' blob:; object-src 'none'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'"

const (
	contentJSON = "application/json"
	contentHTML = "text/html; charset=utf-8"
)

// The routes' shared parts of every answer, made once: label (the route
// template, as chi names it), cache policy, header fields.
var (
	listRoutes, itemRoutes [catalog.NumCategories]*representation.Route

	versionRoute    = representation.NewRoute("/v1/version", contentJSON, CacheSignal)
	locresListRoute = representation.NewRoute("/v1/locres", contentJSON, CacheCatalog)
	locresRoute     = representation.NewRoute("/v1/locres/{locale}", contentJSON, CacheCatalog)
	versionsRoute   = representation.NewRoute("/v1/versions", contentJSON, CacheSignal)
	latestDiffRoute = representation.NewRoute("/v1/diff/latest", contentJSON, CacheSignal)
	diffRoute       = representation.NewRoute("/v1/diff/{from}/{to}", contentJSON, CacheImmutable)

	noSniff = representation.NewField("X-Content-Type-Options", "nosniff")
	pageCSP = representation.NewField("Content-Security-Policy", PageCSP)
	// The landing page's example command names the request's scheme, which a
	// proxy tells in X-Forwarded-Proto (requestOrigin); this Vary replaces
	// the route's own (fields are set in order, the last one wins).
	homeRoute        = representation.NewRoute("/", contentHTML, CacheSignal, pageCSP, noSniff, representation.NewField("Vary", "Accept-Encoding, X-Forwarded-Proto"))
	docsRoute        = representation.NewRoute("/docs", contentHTML, CacheCatalog, pageCSP, noSniff)
	changesRoute     = representation.NewRoute("/changes", contentHTML, CacheSignal, pageCSP, noSniff)
	changesPairRoute = representation.NewRoute("/changes/{from}/{to}", contentHTML, CacheCatalog, pageCSP, noSniff)
)

func init() {
	for c := range catalog.NumCategories {
		name := "/v1/" + c.Name()
		listRoutes[c] = representation.NewRoute(name, contentJSON, CacheCatalog)
		itemRoutes[c] = representation.NewRoute(name+"/{uuid}", contentJSON, CacheCatalog)
	}
}

// AssetRoute describes a route that serves a body of no version (the docs
// page's script) as contentType: cached as the catalog is, never sniffed.
func AssetRoute(label, contentType string) *representation.Route {
	return representation.NewRoute(label, contentType, CacheCatalog, noSniff)
}

// WriteAsset writes a body that belongs to no version as the handlers write
// theirs: ETag, 304, the encoding Accept-Encoding asks for.
func WriteAsset(w http.ResponseWriter, r *http.Request, route *representation.Route, b *representation.Body) {
	representation.Write(w, r, &representation.Response{Route: route, Body: b})
}

// writeBody writes a pre-rendered body of ed at route; it allocates nothing.
func writeBody(w http.ResponseWriter, r *http.Request, ed *edition.Edition, b *representation.Body, route *representation.Route) {
	res := representation.Response{Route: route, Body: b}
	if ed != nil {
		res.Version = &ed.VersionField
	}
	representation.Write(w, r, &res)
}
