package handler

import (
	"fmt"
	"strings"
	"time"

	"github.com/refdata/refdata/catalog"
	"github.com/refdata/refdata/edition"
	"github.com/refdata/refdata/representation"
)

// Cache policies (docs/decisions.md): the change signals are revalidated on
// every use, what never changes is immutable, the binary's documents may be
// reused for five minutes.
const (
	CacheDocument  = "public, max-age=300, stale-while-revalidate=60"
	CacheSignal    = "public, no-cache"
	CacheImmutable = "public, max-age=31536000, immutable"
)

// DefaultFresh is Server.Fresh when unset: serve's default --poll.
const DefaultFresh = time.Second

// CatalogCache is the Cache-Control of the current catalog routes on a server
// whose store is read every fresh: max-age and stale-while-revalidate that
// many seconds (rounded up, at least 1).
func CatalogCache(fresh time.Duration) string {
	s := cacheSeconds(fresh)
	return fmt.Sprintf("public, max-age=%d, stale-while-revalidate=%d", s, s)
}

// cacheSeconds is CatalogCache's max-age: fresh in seconds, rounded up, at least 1.
func cacheSeconds(fresh time.Duration) int64 {
	return max(1, int64((fresh+time.Second-1)/time.Second))
}

// PageCSP is the Content-Security-Policy of the HTML pages: images also over
// https (the data's icons); inline styles and blob: workers for Redoc.
const PageCSP = "default-src 'self'; script-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' https: data:; font-src 'self' data:; connect-src 'self'; worker-src 'self' blob:; object-src 'none'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'"

const (
	contentJSON = "application/json"
	contentHTML = "text/html; charset=utf-8"
)

// The routes' shared parts of every answer: label, cache policy, header fields.
var (
	versionRoute    = representation.NewRoute("/v1/version", contentJSON, CacheSignal)
	waitRoute       = representation.NewRoute(waitLabel, contentJSON, CacheSignal) // the version record, held
	versionsRoute   = representation.NewRoute("/v1/versions", contentJSON, CacheSignal)
	latestDiffRoute = representation.NewRoute("/v1/diff/latest", contentJSON, CacheSignal)
	diffRoute       = representation.NewRoute("/v1/diff/{from}/{to}", contentJSON, CacheImmutable)

	noSniff = representation.NewField("X-Content-Type-Options", "nosniff")
	pageCSP = representation.NewField("Content-Security-Policy", PageCSP)
	// A page's links and images out (the data's icons, where not mirrored)
	// do not tell their hosts which page of this server they were on.
	pageReferrer = representation.NewField("Referrer-Policy", "same-origin")
	// The landing page names the scheme X-Forwarded-Proto tells; this Vary
	// replaces the route's own (the last field set wins).
	homeRoute        = representation.NewRoute("/", contentHTML, CacheSignal, pageCSP, pageReferrer, noSniff, representation.NewField("Vary", "Accept-Encoding, X-Forwarded-Proto"))
	docsRoute        = representation.NewRoute("/docs", contentHTML, CacheDocument, pageCSP, pageReferrer, noSniff)
	changesRoute     = representation.NewRoute("/changes", contentHTML, CacheSignal, pageCSP, pageReferrer, noSniff)
	changesPairRoute = representation.NewRoute("/changes/{from}/{to}", contentHTML, CacheDocument, pageCSP, pageReferrer, noSniff)
	// The catalog pages follow the active version, like /changes.
	browseRoute        = representation.NewRoute("/browse", contentHTML, CacheSignal, pageCSP, pageReferrer, noSniff)
	browseCatalogRoute = representation.NewRoute("/browse/{catalog}", contentHTML, CacheSignal, pageCSP, pageReferrer, noSniff)
	browseItemRoute    = representation.NewRoute("/browse/{catalog}/{uuid}", contentHTML, CacheSignal, pageCSP, pageReferrer, noSniff)
)

// catalogRoutes are the routes that serve an edition's catalogs and string
// tables: the current ones (under /v1) or the pinned ones (PinnedPrefix).
type catalogRoutes struct {
	list, item         [catalog.NumCategories]*representation.Route
	locresList, locres *representation.Route
	seasonTiers        *representation.Route
	// maxAge is the longest max-age an answer that changes with the clock
	// (/v1/events?active=true) may have at these routes.
	maxAge time.Duration
}

// listURL is where c's items of ed are listed.
func (rs *catalogRoutes) listURL(c catalog.Category, ed *edition.Edition) string {
	return strings.Replace(rs.list[c].Label, "{manifestId}", ed.ManifestID, 1)
}

func newCatalogRoutes(prefix, cache string, maxAge time.Duration) *catalogRoutes {
	rs := &catalogRoutes{
		locresList:  representation.NewRoute(prefix+"/locres", contentJSON, cache),
		locres:      representation.NewRoute(prefix+"/locres/{locale}", contentJSON, cache),
		seasonTiers: representation.NewRoute(prefix+"/seasons/competitive/{uuid}/tiers", contentJSON, cache),
		maxAge:      maxAge,
	}
	for c := range catalog.NumCategories {
		name := prefix + "/" + c.Name()
		rs.list[c] = representation.NewRoute(name, contentJSON, cache)
		rs.item[c] = representation.NewRoute(name+"/{uuid}", contentJSON, cache)
	}
	return rs
}

// pinnedRoutes are every server's: a pinned answer never changes.
var pinnedRoutes = newCatalogRoutes(PinnedPrefix, CacheImmutable, 365*24*time.Hour)

// AssetRoute describes a route that serves a body of no version (the docs
// page's script) as contentType: cached as the catalog is, never sniffed.
func AssetRoute(label, contentType string) *representation.Route {
	return representation.NewRoute(label, contentType, CacheDocument, noSniff)
}
