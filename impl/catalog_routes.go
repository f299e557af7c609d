package impl

import (
	"net/http"
	"net/url"
	"strings"

	"github.com/go-chi/chi/v5"

	"github.com/refdata/refdata/catalog"
	"github.com/refdata/refdata/gen"
)

// catalogRoute is what a plain catalog route answers: a category's list, or
// one of its items.
type catalogRoute struct {
	c    catalog.Category
	item bool
}

// catalogTemplates maps the templates of the catalog routes that take only
// language (and uuid) to what they answer. The lists with a filter of their
// own (agents, events, level borders) are methods of Server.
var catalogTemplates = func() map[string]catalogRoute {
	m := map[string]catalogRoute{}
	for c := range catalog.NumCategories {
		if c != catalog.Agents && c != catalog.Events && c != catalog.LevelBorders {
			m["/v1/"+c.Name()] = catalogRoute{c: c}
		}
		m["/v1/"+c.Name()+"/{uuid}"] = catalogRoute{c: c, item: true}
	}
	return m
}()

// Catalogs is the generated router's middleware, after the generated binding
// has checked the parameters' form: it answers 400 to a query parameter outside
// the limits openapi.yaml sets (limits.go), then answers the catalog routes of
// catalogTemplates; the embedded gen.Unimplemented only stands in for their
// methods. Other routes pass to next.
func (s *Server) Catalogs(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		route := chi.RouteContext(r.Context()).RoutePattern()
		if !s.withinQueryLimits(w, r, route) {
			return
		}
		rt, ok := catalogTemplates[route]
		if !ok {
			next.ServeHTTP(w, r)
			return
		}
		lang := queryValue(r.URL.RawQuery, "language")
		if !rt.item {
			s.list(w, r, rt.c, lang)
			return
		}
		id := chi.URLParam(r, "uuid")
		if r.URL.RawPath != "" {
			id, _ = url.PathUnescape(id) // the binding let only good escapes in
		}
		s.item(w, r, rt.c, id, lang)
	})
}

// queryValue is key's first value in the raw query, as url.ParseQuery reads
// it (pairs with ';' or bad escapes skipped), or ""; it allocates only to
// unescape.
func queryValue(raw, key string) string {
	for raw != "" {
		var pair string
		pair, raw, _ = strings.Cut(raw, "&")
		if strings.Contains(pair, ";") {
			continue
		}
		k, v, _ := strings.Cut(pair, "=")
		if k, err := url.QueryUnescape(k); err != nil || k != key {
			continue
		}
		if v, err := url.QueryUnescape(v); err == nil {
			return v
		}
	}
	return ""
}

// ListAgents serves /v1/agents, filtered by isPlayableCharacter as the public
// API filters it.
func (s *Server) ListAgents(w http.ResponseWriter, r *http.Request, p gen.ListAgentsParams) {
	if p.IsPlayableCharacter == nil {
		s.list(w, r, catalog.Agents, deref(p.Language))
		return
	}
	s.filtered(w, r, catalog.Agents, "isPlayableCharacter", string(*p.IsPlayableCharacter), deref(p.Language))
}

func (s *Server) ListEvents(w http.ResponseWriter, r *http.Request, p gen.ListEventsParams) {
	if p.Active == nil && p.At == nil {
		s.list(w, r, catalog.Events, deref(p.Language))
		return
	}
	s.events(w, r, (*string)(p.Active), p.At, p.Language)
}

func (s *Server) ListLevelBorders(w http.ResponseWriter, r *http.Request, p gen.ListLevelBordersParams) {
	if p.Level == nil {
		s.list(w, r, catalog.LevelBorders, deref(p.Language))
		return
	}
	s.levelBorder(w, r, *p.Level, p.Language)
}
