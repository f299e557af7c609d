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
	if s.Pages == nil {
		s.noPages(w, r)
		return
	}
	b, err := s.Pages.Home()
	s.page(w, r, b, err, homeRoute)
}

// GetDocsPage serves the rendered API reference.
func (s *Server) GetDocsPage(w http.ResponseWriter, r *http.Request) {
	if s.Pages == nil {
		s.noPages(w, r)
		return
	}
	b, err := s.Pages.Docs()
	s.page(w, r, b, err, docsRoute)
}

// GetChangesPage serves the changelog of the latest version pair.
func (s *Server) GetChangesPage(w http.ResponseWriter, r *http.Request, p gen.GetChangesPageParams) {
	loc, err := parseLanguage((*string)(p.Language), false)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	if s.Pages == nil {
		s.noPages(w, r)
		return
	}
	b, err := s.Pages.Changes("", "", loc)
	s.page(w, r, b, err, changesRoute)
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
	if s.Pages == nil {
		s.noPages(w, r)
		return
	}
	b, err := s.Pages.Changes(strings.ToUpper(from), strings.ToUpper(to), loc)
	s.page(w, r, b, err, changesPairRoute)
}

func (s *Server) page(w http.ResponseWriter, r *http.Request, b *representation.Body, err error, route *representation.Route) {
	switch catalog.ErrorCode(err) {
	case "":
		writeBody(w, r, s.Repo.Active(), b, route)
	case catalog.EINTERNAL:
		s.fail(w, r, catalog.Internal("the page could not be rendered", err))
	default:
		s.fail(w, r, err)
	}
}

func (s *Server) noPages(w http.ResponseWriter, r *http.Request) {
	s.fail(w, r, catalog.Internal("the pages are not configured on this server", nil))
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
