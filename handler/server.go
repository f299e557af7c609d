package handler

import (
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/refdata/refdata/catalog"
	"github.com/refdata/refdata/edition"
	"github.com/refdata/refdata/gen"
	"github.com/refdata/refdata/media"
	"github.com/refdata/refdata/representation"
)

// Server answers the API's routes from a Repository.
type Server struct {
	Repo edition.Repository
	// Metrics serves /v1/metrics.
	Metrics http.Handler
	// Fresh is how long a replica may take to see a new version: the catalog
	// routes' Cache-Control follows (CatalogCache). 0 means DefaultFresh.
	Fresh time.Duration
	// Logger records the errors behind 5xx answers; router.New sets it when nil.
	Logger *slog.Logger
	// Pages renders /, /docs, /changes and /browse; nil answers them 500.
	Pages Pages
	// Media is the mirror of the data's images and videos; nil: none.
	Media media.Library
	// MaxWaiters bounds the requests held at once (waits and streams); past
	// it they are 503. 0 means DefaultMaxWaiters.
	MaxWaiters int
	// MaxHeldPerClient bounds the requests one client address holds at once
	// (waits and streams); past it they are 429. 0 means DefaultMaxHeldPerClient.
	MaxHeldPerClient int
	// MaxRecolorsPerClient bounds the logo recolorings one client address
	// has running or waiting at once; past it they are 429. 0 means
	// DefaultMaxRecolorsPerClient.
	MaxRecolorsPerClient int
	// StreamFor is how long a stream lasts; 0 means DefaultStreamFor.
	StreamFor time.Duration
	// Now is the clock of /v1/events?active=true; nil means time.Now.
	Now func() time.Time
	// QueryCacheBytes bounds the lists decoded for queries (q, fields) kept in
	// memory; 0 means DefaultQueryCacheBytes. QueryMemoBytes bounds their
	// answers kept; 0 means DefaultQueryMemoBytes.
	QueryCacheBytes, QueryMemoBytes int64

	held        held
	archives    archives
	logos       logoCache
	currentOnce sync.Once
	current     *catalogRoutes // made at first use, from Fresh
	queriesOnce sync.Once
	queries     *queries // made at first use (query.go)
}

// Every route of the spec is a method: the plain catalog routes' are
// generated (catalog_methods.gen.go), the rest written by hand; a route added
// to openapi.yaml without one fails to compile here.
var _ gen.ServerInterface = (*Server)(nil)

// parseLanguage resolves a language parameter to a locale index, or to
// catalog.AllLocales for "all" (any letter case) when all is allowed.
func parseLanguage(lang string, all bool) (int, error) {
	if lang == "" {
		return catalog.DefaultLocale, nil
	}
	if loc, ok := catalog.ParseLocale(lang); ok {
		return loc, nil
	}
	if all && strings.EqualFold(lang, "all") {
		return catalog.AllLocales, nil
	}
	return 0, unsupportedLanguage(lang, all)
}

// unsupportedLanguage is the 400 of a language parameter that is not one of
// the locales (or all, when all is allowed).
func unsupportedLanguage(lang string, all bool) error {
	also := ", or all for every locale at once"
	if !all {
		also = "; a page shows one language, so all is not accepted here"
	}
	return catalog.Errorf(catalog.EINVALID, "language %q is not supported; use one of %s (any letter case)%s, or leave it out for en-US", lang, catalog.SupportedLocales, also)
}

// deref is *p, or "" for nil: what an optional parameter left out means.
func deref[T ~string](p *T) string {
	if p == nil {
		return ""
	}
	return string(*p)
}

// parseManifestID checks a manifest ID from a path: it is only ever compared
// with the retained versions, never used as a path.
func parseManifestID(id, listed string) error {
	if !catalog.IsManifestID(strings.ToUpper(id)) {
		return catalog.Errorf(catalog.EINVALID, "%q is not a manifest ID; use 16 hexadecimal digits as %s, e.g. 05E83EB5E32657B9", id, listed)
	}
	return nil
}

func (s *Server) list(r *http.Request, c catalog.Category, lang string) Answer {
	loc, err := parseLanguage(lang, true)
	if err != nil {
		return failed(err)
	}
	ed, rs := s.read(r)
	return catalogAnswer(r, ed, ed.List(c, loc), rs.list[c])
}

// filtered answers a list filtered by a boolean field: value is "true" or
// "false" in any letter case.
func (s *Server) filtered(r *http.Request, c catalog.Category, field, value, lang string) Answer {
	var want bool
	switch {
	case strings.EqualFold(value, "true"):
		want = true
	case strings.EqualFold(value, "false"):
	default:
		return failed(catalog.Errorf(catalog.EINVALID, "%s %q is not supported; use true or false (any letter case), or leave it out for every %s", field, value, c.Noun()))
	}
	loc, err := parseLanguage(lang, true)
	if err != nil {
		return failed(err)
	}
	ed, rs := s.read(r)
	return catalogAnswer(r, ed, ed.Filtered(c, field, want, loc), rs.list[c])
}

// parseItem reads an item route's uuid, of an item of c, and language.
func parseItem(c catalog.Category, id, lang string) (catalog.UUID, int, error) {
	u, ok := catalog.ParseUUID(id)
	if !ok {
		return u, 0, catalog.Errorf(catalog.EINVALID, "%q is not a UUID; the items of %s are named by 8-4-4-4-12 hexadecimal digits, e.g. 63e6c2b6-4a8e-869c-3d4c-e38355226584", id, "/v1/"+c.Name())
	}
	loc, err := parseLanguage(lang, true)
	return u, loc, err
}

func (s *Server) item(r *http.Request, c catalog.Category, id, lang string) Answer {
	u, loc, err := parseItem(c, id, lang)
	if err != nil {
		return failed(err)
	}
	ed, rs := s.read(r)
	b := ed.Item(c, u, loc)
	if b == nil {
		return notFound(ed, "no %s with uuid %s in version %s; list them at %s", c.Noun(), u, ed.ManifestID, rs.listURL(c, ed))
	}
	return catalogAnswer(r, ed, b, rs.item[c])
}

// ListLocres serves the locale summary.
func (s *Server) ListLocres(w http.ResponseWriter, r *http.Request) {
	ed, rs := s.read(r)
	s.write(w, r, catalogAnswer(r, ed, ed.LocresList(), rs.locresList))
}

// GetLocres serves one string table.
func (s *Server) GetLocres(w http.ResponseWriter, r *http.Request, locale string) {
	s.write(w, r, s.locres(r, locale))
}

// locres is one string table. The segment is only compared with the list of
// supported codes; it never reaches the filesystem.
func (s *Server) locres(r *http.Request, locale string) Answer {
	loc, ok := catalog.ParseLocale(locale)
	if !ok {
		return failed(catalog.Errorf(catalog.ENOTFOUND, "no string table for locale %q; use one of %s (any letter case)", locale, catalog.SupportedLocales))
	}
	ed, rs := s.read(r)
	return catalogAnswer(r, ed, ed.Locres(loc), rs.locres)
}

// GetLatestDiff serves the diff that came with the active version.
func (s *Server) GetLatestDiff(w http.ResponseWriter, r *http.Request) {
	ed := s.Repo.Active()
	b, err := s.Repo.LatestDiff()
	s.write(w, r, diffAnswer(ed, b, err, latestDiffRoute))
}

// GetDiff serves the diff between two retained versions.
func (s *Server) GetDiff(w http.ResponseWriter, r *http.Request, from gen.FromVersion, to gen.ToVersion) {
	s.write(w, r, s.diff(from, to))
}

func (s *Server) diff(from, to string) Answer {
	for _, v := range []string{from, to} {
		if err := parseManifestID(v, "/v1/version's manifestId gives them"); err != nil {
			return failed(err)
		}
	}
	ed := s.Repo.Active()
	b, err := s.Repo.Diff(from, to)
	return diffAnswer(ed, b, err, diffRoute)
}

func diffAnswer(ed *edition.Edition, b *representation.Body, err error, route *representation.Route) Answer {
	switch catalog.ErrorCode(err) {
	case "":
		return body(ed, b, route)
	case catalog.ENOTFOUND:
		return failed(catalog.Errorf(catalog.ENOTFOUND, "no diff: %s", catalog.ErrorMessage(err)))
	case catalog.EINTERNAL:
		return failed(catalog.Internal("the stored diff cannot be read; the catalog routes are unaffected", err))
	default:
		return failed(err)
	}
}

// GetMetrics serves the Prometheus scrape.
func (s *Server) GetMetrics(w http.ResponseWriter, r *http.Request) {
	if s.Metrics == nil {
		s.write(w, r, failed(catalog.Internal("metrics are not configured", nil)))
		return
	}
	s.write(w, r, Answer{Stream: s.Metrics.ServeHTTP})
}
