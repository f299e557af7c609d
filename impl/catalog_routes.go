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
		raw := r.URL.RawQuery
		lang := queryValue(raw, "language")
		var p queryParams
		if raw != "" {
			p.fields = queryValue(raw, "fields")
			if !rt.item {
				p.q = queryValue(raw, "q")
			}
		}
		if !rt.item {
			if p.any() {
				s.queryList(w, r, rt.c, lang, p)
				return
			}
			s.list(w, r, rt.c, lang)
			return
		}
		id := chi.URLParam(r, "uuid")
		if r.URL.RawPath != "" {
			id, _ = url.PathUnescape(id) // the binding let only good escapes in
		}
		if p.any() {
			s.itemFields(w, r, rt.c, id, lang, p)
			return
		}
		s.item(w, r, rt.c, id, lang)
	})
}

// queryValue is key's first value in the raw query, as url.ParseQuery reads
// it (pairs with ';' or bad escapes skipped), or ""; it allocates only to
// unescape.
func queryValue(raw, key string) string {
	v, _ := queryLookup(raw, key)
	return v
}

// queryLookup is queryValue, and whether the query has key at all.
func queryLookup(raw, key string) (string, bool) {
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
			return v, true
		}
	}
	return "", false
}

//go:generate go run ../tools/handlergen -spec ../openapi.yaml -catalog ../catalog/category.go -out catalog_methods.gen.go

// catalogList answers a plain catalog list route (catalog_methods.gen.go): c's
// list, or with q or fields the items and paths they select.
func (s *Server) catalogList(w http.ResponseWriter, r *http.Request, c catalog.Category, lang, q, fields string) {
	if p := (queryParams{q: q, fields: fields}); p.any() {
		s.queryList(w, r, c, lang, p)
		return
	}
	s.list(w, r, c, lang)
}

// catalogItem answers a plain catalog item route (catalog_methods.gen.go): the
// item of c with uuid id, with fields only the paths they keep.
func (s *Server) catalogItem(w http.ResponseWriter, r *http.Request, c catalog.Category, id, lang, fields string) {
	if p := (queryParams{fields: fields}); p.any() {
		s.itemFields(w, r, c, id, lang, p)
		return
	}
	s.item(w, r, c, id, lang)
}

// ListAgents serves /v1/agents, filtered by isPlayableCharacter as the public
// API filters it; with q or fields, isPlayableCharacter is one more term.
func (s *Server) ListAgents(w http.ResponseWriter, r *http.Request, p gen.ListAgentsParams) {
	qp := queryParams{q: deref(p.Q), fields: deref(p.Fields)}
	switch {
	case p.IsPlayableCharacter == nil && qp.any():
		s.queryList(w, r, catalog.Agents, deref(p.Language), qp)
	case p.IsPlayableCharacter == nil:
		s.list(w, r, catalog.Agents, deref(p.Language))
	case qp.any():
		v := string(*p.IsPlayableCharacter)
		if !strings.EqualFold(v, "true") && !strings.EqualFold(v, "false") {
			s.filtered(w, r, catalog.Agents, "isPlayableCharacter", v, deref(p.Language)) // its error
			return
		}
		qp.requirePath, qp.requireValue = "isPlayableCharacter", strings.ToLower(v)
		s.queryList(w, r, catalog.Agents, deref(p.Language), qp)
	default:
		s.filtered(w, r, catalog.Agents, "isPlayableCharacter", string(*p.IsPlayableCharacter), deref(p.Language))
	}
}

func (s *Server) ListEvents(w http.ResponseWriter, r *http.Request, p gen.ListEventsParams) {
	qp := queryParams{q: deref(p.Q), fields: deref(p.Fields)}
	switch {
	case p.Active == nil && p.At == nil && qp.any():
		s.queryList(w, r, catalog.Events, deref(p.Language), qp)
	case p.Active == nil && p.At == nil:
		s.list(w, r, catalog.Events, deref(p.Language))
	case qp.any():
		s.fail(w, r, catalog.Errorf(catalog.EINVALID, "q and fields apply to the whole list, active and at answer from lists of their own: give one or the other (q=startTime<=2021-12-01T00:00:00Z endTime>2021-12-01T00:00:00Z asks what at does)"))
	default:
		s.events(w, r, (*string)(p.Active), p.At, p.Language)
	}
}

func (s *Server) ListLevelBorders(w http.ResponseWriter, r *http.Request, p gen.ListLevelBordersParams) {
	qp := queryParams{q: deref(p.Q), fields: deref(p.Fields)}
	switch {
	case p.Level == nil && qp.any():
		s.queryList(w, r, catalog.LevelBorders, deref(p.Language), qp)
	case p.Level == nil:
		s.list(w, r, catalog.LevelBorders, deref(p.Language))
	case qp.any():
		s.fail(w, r, catalog.Errorf(catalog.EINVALID, "q and fields apply to the whole list, level answers with one border: give one or the other (q=startingLevel<=57 asks for the borders up to level 57)"))
	default:
		s.levelBorder(w, r, *p.Level, p.Language)
	}
}
