package handler

import (
	"cmp"
	"context"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/go-chi/chi/v5"

	"github.com/refdata/refdata/edition"
	"github.com/refdata/refdata/representation"
)

// PinnedPrefix starts the pinned routes: followed by a catalog route's or a
// string table's path after /v1, it serves that route as the retained version
// manifestId served it, the same bytes and ETags, cached forever.
const PinnedPrefix = "/v1/versions/{manifestId}"

// PinnedPattern is the pinned route of a current route's template, and whether
// it has one: the catalogs (lists and items) and the string tables do.
func PinnedPattern(template string) (string, bool) {
	if !pinnable[template] {
		return "", false
	}
	return PinnedPrefix + strings.TrimPrefix(template, "/v1"), true
}

// pinnable: the current templates of pinnedRoutes.
var pinnable = func() map[string]bool {
	m := map[string]bool{}
	add := func(rt *representation.Route) { m["/v1"+strings.TrimPrefix(rt.Label, PinnedPrefix)] = true }
	add(pinnedRoutes.locresList)
	add(pinnedRoutes.locres)
	add(pinnedRoutes.seasonTiers)
	for c := range pinnedRoutes.list {
		add(pinnedRoutes.list[c])
		add(pinnedRoutes.item[c])
	}
	return m
}()

type pinnedKey struct{}

// Pinned answers the pinned routes (PinnedPattern's): catalogs, the generated
// router over s, answers the rest of the path from the retained version
// manifestId names (any letter case), at the pinned routes' labels and cache.
func (s *Server) Pinned(catalogs http.Handler) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		id := chi.URLParam(r, "manifestId")
		if err := parseManifestID(id, "/v1/versions lists them"); err != nil {
			s.write(w, r, failed(err))
			return
		}
		ed, err := s.Repo.RetainedEdition(id)
		if err != nil {
			s.write(w, r, failed(err))
			return
		}
		// The path after the manifest ID, as chi routed it (escaped as sent).
		rest := "/v1/" + strings.SplitN(r.URL.EscapedPath(), "/", 5)[4]
		u := *r.URL
		u.Path, _ = url.PathUnescape(rest) // wellFormed let only good escapes in
		if r.URL.RawPath != "" {
			u.RawPath = rest
		}
		rctx := chi.NewRouteContext()
		rctx.RouteMethod = http.MethodGet // HEAD as GET, as middleware.GetHead routes it
		in := r.WithContext(context.WithValue(context.WithValue(r.Context(), chi.RouteCtxKey, rctx), pinnedKey{}, ed))
		in.URL = &u
		catalogs.ServeHTTP(w, in)
	}
}

// read is the edition a catalog handler answers from, pinned or active, and
// its routes.
func (s *Server) read(r *http.Request) (*edition.Edition, *catalogRoutes) {
	if ed, ok := r.Context().Value(pinnedKey{}).(*edition.Edition); ok {
		return ed, pinnedRoutes
	}
	s.currentOnce.Do(func() {
		fresh := cmp.Or(s.Fresh, DefaultFresh)
		s.current = newCatalogRoutes("/v1", CatalogCache(fresh), time.Duration(cacheSeconds(fresh))*time.Second)
	})
	return s.Repo.Active(), s.current
}

// pinnedURL is the pinned URL of r's answer from ed, r's query as sent.
func pinnedURL(ed *edition.Edition, r *http.Request) string {
	q := ""
	if r.URL.RawQuery != "" {
		q = "?"
	}
	return "/v1/versions/" + ed.ManifestID + strings.TrimPrefix(r.URL.EscapedPath(), "/v1") + q + r.URL.RawQuery
}
