package impl

import (
	"net/http"
	"strings"

	"github.com/refdata/refdata/catalog"
	"github.com/refdata/refdata/gen"
)

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
