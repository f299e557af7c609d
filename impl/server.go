package impl

import (
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"strings"

	"github.com/refdata/refdata/catalog"
	"github.com/refdata/refdata/gen"
)

// Server answers the API's routes from a Repository.
type Server struct {
	Repo Repository
	// Metrics serves /v1/metrics.
	Metrics http.Handler
	// Logger records the errors behind 5xx answers; api.New sets it when nil.
	Logger *slog.Logger
	// Pages renders /, /docs and /changes; nil answers them 500.
	Pages Pages
}

var _ gen.ServerInterface = (*Server)(nil)

// locale resolves the language parameter, writing a 400 when it is not supported.
func locale(w http.ResponseWriter, lang *string) (int, bool) {
	if lang == nil || *lang == "" {
		return catalog.DefaultLocale, true
	}
	if loc, ok := catalog.ParseLocale(*lang); ok {
		return loc, true
	}
	WriteError(w, http.StatusBadRequest, fmt.Sprintf("language %q is not supported; use one of %s (any letter case), or leave it out for en-US", *lang, catalog.SupportedLocales))
	return 0, false
}

func (s *Server) list(w http.ResponseWriter, r *http.Request, c catalog.Category, lang *string) {
	loc, ok := locale(w, lang)
	if !ok {
		return
	}
	ed := s.Repo.Active()
	serve(w, r, ed, ed.List(c, loc), hCacheCatalog)
}

func (s *Server) item(w http.ResponseWriter, r *http.Request, c catalog.Category, id string, lang *string) {
	u, ok := catalog.ParseUUID(id)
	if !ok {
		WriteError(w, http.StatusBadRequest, fmt.Sprintf("%q is not a UUID; a %s UUID is 8-4-4-4-12 hexadecimal digits, e.g. 63e6c2b6-4a8e-869c-3d4c-e38355226584", id, c.Noun()))
		return
	}
	loc, ok := locale(w, lang)
	if !ok {
		return
	}
	ed := s.Repo.Active()
	b := ed.Item(c, u, loc)
	if b == nil {
		w.Header()["X-Data-Version"] = ed.ManifestHeader
		WriteError(w, http.StatusNotFound, fmt.Sprintf("no %s with uuid %s in version %s; list them at /v1/%s", c.Noun(), u, ed.ManifestID, c.Name()))
		return
	}
	serve(w, r, ed, b, hCacheCatalog)
}

// GetVersion serves the active version record.
func (s *Server) GetVersion(w http.ResponseWriter, r *http.Request) {
	ed := s.Repo.Active()
	serve(w, r, ed, ed.VersionBody(), hCacheSignal)
}

// ListLocres serves the locale summary.
func (s *Server) ListLocres(w http.ResponseWriter, r *http.Request) {
	ed := s.Repo.Active()
	serve(w, r, ed, ed.LocresList(), hCacheCatalog)
}

// GetLocres serves one string table. The segment is only compared with the list of
// supported codes; it never reaches the filesystem.
func (s *Server) GetLocres(w http.ResponseWriter, r *http.Request, locale string) {
	loc, ok := catalog.ParseLocale(locale)
	if !ok {
		WriteError(w, http.StatusNotFound, fmt.Sprintf("no string table for locale %q; use one of %s (any letter case)", locale, catalog.SupportedLocales))
		return
	}
	ed := s.Repo.Active()
	serve(w, r, ed, ed.Locres(loc), hCacheCatalog)
}

// GetLatestDiff serves the diff that came with the active version.
func (s *Server) GetLatestDiff(w http.ResponseWriter, r *http.Request) {
	ed := s.Repo.Active()
	b, err := s.Repo.LatestDiff()
	s.writeDiff(w, r, ed, b, err, hCacheSignal)
}

// GetDiff serves the diff between two retained versions.
func (s *Server) GetDiff(w http.ResponseWriter, r *http.Request, from gen.FromVersion, to gen.ToVersion) {
	for _, v := range []string{from, to} {
		if !catalog.IsManifestID(strings.ToUpper(v)) {
			WriteError(w, http.StatusBadRequest, fmt.Sprintf("%q is not a manifest ID; use 16 hexadecimal digits as /v1/version's manifestId gives them, e.g. 05E83EB5E32657B9", v))
			return
		}
	}
	ed := s.Repo.Active()
	b, err := s.Repo.Diff(from, to)
	s.writeDiff(w, r, ed, b, err, hCacheImmutable)
}

func (s *Server) writeDiff(w http.ResponseWriter, r *http.Request, ed *catalog.Edition, b *catalog.Body, err error, cache []string) {
	switch {
	case errors.Is(err, ErrNotFound):
		WriteError(w, http.StatusNotFound, "no diff: "+err.Error())
	case err != nil:
		WriteInternal(w, r, s.Logger, http.StatusInternalServerError, "the stored diff cannot be read; the catalog routes are unaffected", err)
	default:
		writeBody(w, r, ed, b, cache)
	}
}

// GetMetrics serves the Prometheus scrape.
func (s *Server) GetMetrics(w http.ResponseWriter, r *http.Request) {
	if s.Metrics == nil {
		WriteError(w, http.StatusInternalServerError, "metrics are not configured")
		return
	}
	s.Metrics.ServeHTTP(w, r)
}
