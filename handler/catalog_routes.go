package handler

import (
	"net/http"
	"strings"

	"github.com/refdata/refdata/catalog"
	"github.com/refdata/refdata/gen"
)

//go:generate go run ../tools/handlergen -spec ../openapi.yaml -catalog ../catalog/category.go -out catalog_methods.gen.go

// catalogList answers a plain catalog list route (catalog_methods.gen.go): c's
// list, or with q or fields the items and paths they select.
func (s *Server) catalogList(r *http.Request, c catalog.Category, lang, q, fields string) Answer {
	if p := (queryParams{q: q, fields: fields}); p.any() {
		return s.queryList(r, c, lang, p)
	}
	return s.list(r, c, lang)
}

// catalogItem answers a plain catalog item route (catalog_methods.gen.go): the
// item of c with uuid id, with fields only the paths they keep.
func (s *Server) catalogItem(r *http.Request, c catalog.Category, id, lang, fields string) Answer {
	if p := (queryParams{fields: fields}); p.any() {
		return s.itemFields(r, c, id, lang, p)
	}
	return s.item(r, c, id, lang)
}

// ListAgents serves /v1/agents.
func (s *Server) ListAgents(w http.ResponseWriter, r *http.Request, p gen.ListAgentsParams) {
	s.write(w, r, s.agents(r, p))
}

// agents is /v1/agents, filtered by isPlayableCharacter as the public API
// filters it; with q or fields, isPlayableCharacter is one more term.
func (s *Server) agents(r *http.Request, p gen.ListAgentsParams) Answer {
	qp := queryParams{q: deref(p.Q), fields: deref(p.Fields)}
	switch {
	case p.IsPlayableCharacter == nil && qp.any():
		return s.queryList(r, catalog.Agents, deref(p.Language), qp)
	case p.IsPlayableCharacter == nil:
		return s.list(r, catalog.Agents, deref(p.Language))
	case qp.any():
		v := string(*p.IsPlayableCharacter)
		if !strings.EqualFold(v, "true") && !strings.EqualFold(v, "false") {
			return s.filtered(r, catalog.Agents, "isPlayableCharacter", v, deref(p.Language)) // its error
		}
		qp.requirePath, qp.requireValue = "isPlayableCharacter", strings.ToLower(v)
		return s.queryList(r, catalog.Agents, deref(p.Language), qp)
	default:
		return s.filtered(r, catalog.Agents, "isPlayableCharacter", string(*p.IsPlayableCharacter), deref(p.Language))
	}
}

// ListEvents serves /v1/events: every event, or those active now or then.
func (s *Server) ListEvents(w http.ResponseWriter, r *http.Request, p gen.ListEventsParams) {
	s.write(w, r, s.listEvents(r, p))
}

func (s *Server) listEvents(r *http.Request, p gen.ListEventsParams) Answer {
	qp := queryParams{q: deref(p.Q), fields: deref(p.Fields)}
	switch {
	case p.Active == nil && p.At == nil && qp.any():
		return s.queryList(r, catalog.Events, deref(p.Language), qp)
	case p.Active == nil && p.At == nil:
		return s.list(r, catalog.Events, deref(p.Language))
	case qp.any():
		return failed(catalog.Errorf(catalog.EINVALID, "q and fields apply to the whole list, active and at answer from lists of their own: give one or the other (q=startTime<=2021-12-01T00:00:00Z endTime>2021-12-01T00:00:00Z asks what at does)"))
	default:
		return s.events(r, (*string)(p.Active), p.At, p.Language)
	}
}

// ListLevelBorders serves /v1/levelborders: every border, or one level's.
func (s *Server) ListLevelBorders(w http.ResponseWriter, r *http.Request, p gen.ListLevelBordersParams) {
	s.write(w, r, s.levelBorders(r, p))
}

func (s *Server) levelBorders(r *http.Request, p gen.ListLevelBordersParams) Answer {
	qp := queryParams{q: deref(p.Q), fields: deref(p.Fields)}
	switch {
	case p.Level == nil && qp.any():
		return s.queryList(r, catalog.LevelBorders, deref(p.Language), qp)
	case p.Level == nil:
		return s.list(r, catalog.LevelBorders, deref(p.Language))
	case qp.any():
		return failed(catalog.Errorf(catalog.EINVALID, "q and fields apply to the whole list, level answers with one border: give one or the other (q=startingLevel<=57 asks for the borders up to level 57)"))
	default:
		return s.levelBorder(r, *p.Level, p.Language)
	}
}
