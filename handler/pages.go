package handler

import (
	"net/http"
	"strings"

	"github.com/refdata/refdata/catalog"
	"github.com/refdata/refdata/edition"
	"github.com/refdata/refdata/gen"
	"github.com/refdata/refdata/representation"
)

// Pages renders the HTML pages for people (package pages implements it) and
// keeps them. An ENOTFOUND error says what is missing, for the client; any
// other is internal. The pages are not described for the edge's memo.
type Pages interface {
	// Home is the landing page for a request that came to origin (scheme and host).
	Home(origin string) (*representation.Body, error)
	Docs() (*representation.Body, error)
	// Changes is the changelog from → to in locale loc; both "" mean the latest pair.
	Changes(from, to string, loc int) (*representation.Body, error)
	Catalogs() (*representation.Body, error)
	Catalog(c catalog.Category, loc int) (*representation.Body, error)
	// Search is c's page in ed listing the items of answer, the list body of
	// those query q (as typed, kept in the search box) selects in locale loc;
	// answer is called only when the page is not kept.
	Search(ed *edition.Edition, c catalog.Category, loc int, q string, answer func() (*representation.Body, error)) (*representation.Body, error)
	// SearchError is c's page in ed for a query q that cannot be answered:
	// q in its box, message saying why, no items.
	SearchError(ed *edition.Edition, c catalog.Category, loc int, q, message string) []byte
	Item(c catalog.Category, u catalog.UUID, loc int) (*representation.Body, error)
	// ErrorPage is the HTML page answering an error on a request for path.
	ErrorPage(status int, message, path string) []byte
}

// GetHomePage serves the landing page.
func (s *Server) GetHomePage(w http.ResponseWriter, r *http.Request) {
	origin := requestOrigin(r)
	s.write(w, r, s.page(r, homeRoute, func(p Pages) (*representation.Body, error) { return p.Home(origin) }))
}

// GetDocsPage serves the rendered API reference.
func (s *Server) GetDocsPage(w http.ResponseWriter, r *http.Request) {
	s.write(w, r, s.page(r, docsRoute, Pages.Docs))
}

// GetChangesPage serves the changelog of the latest version pair.
func (s *Server) GetChangesPage(w http.ResponseWriter, r *http.Request, p gen.GetChangesPageParams) {
	loc, err := parseLanguage(deref(p.Language), false)
	if err != nil {
		s.write(w, r, s.failedPage(r, err))
		return
	}
	s.write(w, r, s.page(r, changesRoute, func(p Pages) (*representation.Body, error) { return p.Changes("", "", loc) }))
}

// GetChangesBetweenPage serves the changelog between two retained versions.
func (s *Server) GetChangesBetweenPage(w http.ResponseWriter, r *http.Request, from gen.FromVersion, to gen.ToVersion, p gen.GetChangesBetweenPageParams) {
	s.write(w, r, s.changesBetween(r, from, to, deref(p.Language)))
}

// changesBetween: a segment that is not a manifest ID is a page that does
// not exist (404).
func (s *Server) changesBetween(r *http.Request, from, to, lang string) Answer {
	for _, v := range []string{from, to} {
		if !catalog.IsManifestID(strings.ToUpper(v)) {
			return s.failedPage(r, catalog.Errorf(catalog.ENOTFOUND, "this server retains no version named %q; a version is named by its manifest ID, 16 hexadecimal digits, and the home page lists the retained ones", v))
		}
	}
	loc, err := parseLanguage(lang, false)
	if err != nil {
		return s.failedPage(r, err)
	}
	return s.page(r, changesPairRoute, func(p Pages) (*representation.Body, error) {
		return p.Changes(strings.ToUpper(from), strings.ToUpper(to), loc)
	})
}

// GetBrowsePage serves the list of catalogs.
func (s *Server) GetBrowsePage(w http.ResponseWriter, r *http.Request) {
	s.write(w, r, s.page(r, browseRoute, Pages.Catalogs))
}

// GetBrowseCatalogPage serves one catalog's items; with q, those it selects.
func (s *Server) GetBrowseCatalogPage(w http.ResponseWriter, r *http.Request, name gen.BrowseCatalog, p gen.GetBrowseCatalogPageParams) {
	s.write(w, r, s.browseCatalog(r, name, p))
}

func (s *Server) browseCatalog(r *http.Request, name string, p gen.GetBrowseCatalogPageParams) Answer {
	c, loc, err := browseTarget(name, (*string)(p.Language))
	if err != nil {
		return s.failedPage(r, err)
	}
	if q := deref(p.Q); strings.TrimSpace(q) != "" {
		a := s.searchPage(r, c, loc, q)
		a.Label = browseCatalogRoute.Label + "?q"
		return a
	}
	return s.page(r, browseCatalogRoute, func(p Pages) (*representation.Body, error) { return p.Catalog(c, loc) })
}

// searchPage is c's page listing the items q selects, answered as the list
// route answers q (the same kept answers); a q that cannot be answered is 400
// with the page saying why. Its requests are timed apart, as the list's.
func (s *Server) searchPage(r *http.Request, c catalog.Category, loc int, q string) Answer {
	if s.Pages == nil {
		return failed(catalog.Internal("the pages are not configured on this server", nil))
	}
	ed := s.Repo.Active()
	parsed, _, err := queryParams{q: q}.read(c, ed)
	if catalog.ErrorCode(err) == catalog.EINVALID {
		a := failed(err)
		a.Page = func(_ int, msg string) []byte { return s.Pages.SearchError(ed, c, loc, q, msg) }
		return a
	}
	if err != nil {
		return s.failedPage(r, err)
	}
	b, err := s.Pages.Search(ed, c, loc, q, func() (*representation.Body, error) { return s.answerList(ed, c, loc, parsed, nil) })
	switch catalog.ErrorCode(err) {
	case "":
		return body(ed, b, browseCatalogRoute)
	case catalog.EINTERNAL:
		return s.failedPage(r, catalog.Internal("the page could not be rendered", err))
	default:
		return s.failedPage(r, err)
	}
}

// GetBrowseItemPage serves one item's fields.
func (s *Server) GetBrowseItemPage(w http.ResponseWriter, r *http.Request, name gen.BrowseCatalog, id gen.Uuid, p gen.GetBrowseItemPageParams) {
	s.write(w, r, s.browseItem(r, name, id, p))
}

// browseItem: a uuid that is not a UUID is 404, not the API's 400: to a
// person it is a page that does not exist.
func (s *Server) browseItem(r *http.Request, name, id string, p gen.GetBrowseItemPageParams) Answer {
	c, loc, err := browseTarget(name, (*string)(p.Language))
	if err != nil {
		return s.failedPage(r, err)
	}
	u, ok := catalog.ParseUUID(strings.ToLower(id))
	if !ok {
		return s.failedPage(r, catalog.Errorf(catalog.ENOTFOUND, "there is no %s %q; an item is named by its UUID, and %s lists them", c.Noun(), id, BrowsePath(c)))
	}
	return s.page(r, browseItemRoute, func(p Pages) (*representation.Body, error) { return p.Item(c, u, loc) })
}

// BrowsePath is the page of catalog c: its name after /v1/ with '/' as '-'
// (no catalog's name has a '-'), so a path segment names it.
func BrowsePath(c catalog.Category) string {
	return "/browse/" + strings.ReplaceAll(c.Name(), "/", "-")
}

// browseTarget resolves a catalog page's catalog segment and language.
func browseTarget(name string, lang *string) (catalog.Category, int, error) {
	c, ok := catalog.CategoryNamed(strings.ReplaceAll(name, "-", "/"))
	if !ok || strings.Contains(name, "/") {
		return 0, 0, catalog.Errorf(catalog.ENOTFOUND, "there is no catalog %q; /browse lists them", name)
	}
	loc, err := parseLanguage(deref(lang), false)
	return c, loc, err
}

// page is the body get renders with the server's Pages.
func (s *Server) page(r *http.Request, route *representation.Route, get func(Pages) (*representation.Body, error)) Answer {
	if s.Pages == nil {
		return failed(catalog.Internal("the pages are not configured on this server", nil))
	}
	b, err := get(s.Pages)
	switch catalog.ErrorCode(err) {
	case "":
		return body(s.Repo.Active(), b, route)
	case catalog.EINTERNAL:
		return s.failedPage(r, catalog.Internal("the page could not be rendered", err))
	default:
		return s.failedPage(r, err)
	}
}

// ListVersions serves the retained versions.
func (s *Server) ListVersions(w http.ResponseWriter, r *http.Request) {
	ed := s.Repo.Active()
	l := s.Repo.Versions()
	if l == nil {
		s.write(w, r, failed(catalog.Internal("the version list is not available on this server", nil)))
		return
	}
	s.write(w, r, body(ed, l.Body, versionsRoute))
}

// defaultOrigin is the landing page's address when the Host is not plain.
const defaultOrigin = "localhost:8080"

// requestOrigin is the address a request came to, for the landing page's
// example command: https when TLS or X-Forwarded-Proto say so, and the Host
// when it is plain (defaultOrigin otherwise).
func requestOrigin(r *http.Request) string {
	scheme := "http://"
	if r.TLS != nil {
		scheme = "https://"
	} else if p := r.Header["X-Forwarded-Proto"]; len(p) > 0 {
		first, _, _ := strings.Cut(p[0], ",")
		if strings.EqualFold(strings.TrimSpace(first), "https") {
			scheme = "https://"
		}
	}
	host := r.Host
	if !plainHost(host) {
		host = defaultOrigin
	}
	return scheme + host
}

// plainHost reports whether h is a host name, IPv4 or bracketed IPv6 address
// with an optional port: nothing that could end a quoted string.
func plainHost(h string) bool {
	name, chars := h, hostChars
	if rest, ok := strings.CutPrefix(h, "["); ok {
		var port string
		if name, port, ok = strings.Cut(rest, "]"); !ok || !portOK(port) {
			return false
		}
		chars = ipv6Chars
	} else if i := strings.LastIndexByte(h, ':'); i >= 0 {
		if !portOK(h[i:]) {
			return false
		}
		name = h[:i]
	}
	return name != "" && len(name) <= 253 && strings.Trim(name, chars) == ""
}

const (
	hostChars = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789.-_"
	ipv6Chars = "0123456789abcdefABCDEF:."
)

// portOK: none, or ':' and 1 to 5 digits.
func portOK(p string) bool {
	if p == "" {
		return true
	}
	d, ok := strings.CutPrefix(p, ":")
	return ok && d != "" && len(d) <= 5 && strings.Trim(d, "0123456789") == ""
}
