package impl

import (
	"net/http"
	"strings"

	"github.com/refdata/refdata/catalog"
	"github.com/refdata/refdata/gen"
	"github.com/refdata/refdata/representation"
)

// Pages renders the HTML pages for people (package pages implements it). Each
// page is rendered once — per active version, or per version pair and locale —
// and kept; the methods return the kept body.
type Pages interface {
	Home() (*representation.Body, error)
	Docs() (*representation.Body, error)
	// Changes is the changelog from → to with names in locale loc; from and to
	// both "" mean the latest pair. An ENOTFOUND error says what is missing,
	// for the client; any other is internal.
	Changes(from, to string, loc int) (*representation.Body, error)
}

// The pages are not described for the edge's memo (they take the router every
// time): they are for people, not a hot path, and /changes depends on more than
// the active edition.

// GetHomePage serves the landing page.
func (s *Server) GetHomePage(w http.ResponseWriter, r *http.Request) {
	s.page(w, r, homeRoute, Pages.Home)
}

// GetDocsPage serves the rendered API reference.
func (s *Server) GetDocsPage(w http.ResponseWriter, r *http.Request) {
	s.page(w, r, docsRoute, Pages.Docs)
}

// GetChangesPage serves the changelog of the latest version pair.
func (s *Server) GetChangesPage(w http.ResponseWriter, r *http.Request, p gen.GetChangesPageParams) {
	loc, err := parseLanguage((*string)(p.Language), false)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	s.page(w, r, changesRoute, func(p Pages) (*representation.Body, error) { return p.Changes("", "", loc) })
}

// GetChangesBetweenPage serves the changelog between two retained versions. The
// versions are checked as /v1/diff/{from}/{to} checks them.
func (s *Server) GetChangesBetweenPage(w http.ResponseWriter, r *http.Request, from gen.FromVersion, to gen.ToVersion, p gen.GetChangesBetweenPageParams) {
	for _, v := range []string{from, to} {
		if err := parseManifestID(v, "/v1/versions lists them"); err != nil {
			s.fail(w, r, err)
			return
		}
	}
	loc, err := parseLanguage((*string)(p.Language), false)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	s.page(w, r, changesPairRoute, func(p Pages) (*representation.Body, error) {
		return p.Changes(strings.ToUpper(from), strings.ToUpper(to), loc)
	})
}

// page serves the body get renders with the server's Pages.
func (s *Server) page(w http.ResponseWriter, r *http.Request, route *representation.Route, get func(Pages) (*representation.Body, error)) {
	if s.Pages == nil {
		s.fail(w, r, catalog.Internal("the pages are not configured on this server", nil))
		return
	}
	b, err := get(s.Pages)
	switch catalog.ErrorCode(err) {
	case "":
		writeBody(w, r, s.Repo.Active(), b, route)
	case catalog.EINTERNAL:
		s.fail(w, r, catalog.Internal("the page could not be rendered", err))
	default:
		s.fail(w, r, err)
	}
}

// ListVersions serves the retained versions. Not described for the edge's memo:
// the list belongs to the store, not to one edition.
func (s *Server) ListVersions(w http.ResponseWriter, r *http.Request) {
	ed := s.Repo.Active()
	l := s.Repo.Versions()
	if l == nil {
		s.fail(w, r, catalog.Internal("the version list is not available on this server", nil))
		return
	}
	writeBody(w, r, ed, l.Body, versionsRoute)
}
