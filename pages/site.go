package pages

import (
	"bytes"
	"cmp"
	"embed"
	"fmt"
	"html/template"
	"log/slog"
	"sync"
	"sync/atomic"
	"weak"

	"github.com/refdata/refdata/catalog"
	"github.com/refdata/refdata/edition"
	"github.com/refdata/refdata/gen"
	"github.com/refdata/refdata/handler"
	"github.com/refdata/refdata/media"
	"github.com/refdata/refdata/representation"
)

//go:embed templates/*.html
var templateFS embed.FS

//go:embed vendor/redoc/redoc.standalone.js
var redocJS []byte

// RedocPath is where /docs loads the Redoc bundle from.
const RedocPath = "/docs/redoc.standalone.js"

var templates = template.Must(template.New("").Funcs(template.FuncMap{
	"short": func(s string) string {
		if len(s) > 19 {
			return s[:19] + "…"
		}
		return s
	},
}).ParseFS(templateFS, "templates/*.html"))

// The bounds of the kept pages: changelog pairs (18 pages each), landing pages
// per version (one per address the server is reached by: a handful), and
// catalog and item pages, in number and bytes of text (encodings add a fifth).
const (
	maxPairs       = 16
	maxOrigins     = 8
	maxBrowse      = 256
	maxBrowseBytes = 32 << 20
	// Search pages, one per query as typed: apart from the catalog pages, so
	// a crawl of queries does not push those out.
	maxSearches    = 64
	maxSearchBytes = 8 << 20
)

// Site renders and keeps the pages of one server.
type Site struct {
	// Media is the mirror the catalog pages load images from when it holds
	// them (else from the data's URLs); nil: no mirror.
	Media media.Library

	repo     edition.Repository
	log      *slog.Logger
	docs     *representation.Body
	home     atomic.Pointer[homePage]
	latest   atomic.Pointer[latestPair]
	changes  *pageCache[[2]string] // by from and to; each render loads two editions
	browsed  *pageCache[browseKey]
	searched *pageCache[searchKey]
}

var _ handler.Pages = (*Site)(nil)

// homePage and latestPair know their edition by a weak pointer: held, it kept
// a swapped-out edition, all of it, live until the page's next request.
type homePage struct {
	ed     weak.Pointer[edition.Edition]
	list   *edition.VersionList
	data   homeData           // without Origin
	bodies *pageCache[string] // by origin
}

type latestPair struct {
	ed       weak.Pointer[edition.Edition]
	from, to string
}

// New renders the docs page; the others are rendered on first request and kept.
func New(repo edition.Repository, logger *slog.Logger) (*Site, error) {
	s := &Site{repo: repo, log: cmp.Or(logger, slog.New(slog.DiscardHandler)), changes: newPageCache[[2]string](maxPairs, 0),
		browsed: newPageCache[browseKey](maxBrowse, maxBrowseBytes), searched: newPageCache[searchKey](maxSearches, maxSearchBytes)}
	b, err := render("docs", docsData{Redoc: RedocPath}, "en", representation.Best)
	if err != nil {
		return nil, err
	}
	s.docs = b
	return s, nil
}

// Redoc is the Redoc bundle /docs loads, compressed on first use (about a
// megabyte: a tenth of a second, once).
var Redoc = sync.OnceValue(func() *representation.Body {
	return representation.Encode(redocJS, "", representation.Best)
})

// ErrorPage is the package's ErrorPage, for handler's page handlers.
func (s *Site) ErrorPage(status int, message, path string) []byte {
	return ErrorPage(status, message, path)
}

// Docs is the API reference page.
func (s *Site) Docs() (*representation.Body, error) { return s.docs, nil }

// Home is the landing page of the active version for a request that came to
// origin ("http://localhost:8080", checked by the caller), which its "Try it"
// command names.
func (s *Site) Home(origin string) (*representation.Body, error) {
	h := s.homePage()
	k, err := h.bodies.get(origin, func() (*kept, error) {
		data := h.data
		data.Origin = origin
		// Fast, not Best: a client naming a new Host each time makes this run
		// per request once maxOrigins are kept, and the page is a few KB.
		b, err := render("home", data, "en", representation.Fast)
		return &kept{bodies: []*representation.Body{b}}, err
	})
	if err != nil {
		s.log.Error("render the landing page", "origin", origin, "err", err)
		return nil, err
	}
	return k.bodies[0], nil
}

// homePage is the landing page's model for the active version and version list.
func (s *Site) homePage() *homePage {
	ed, list := s.repo.Active(), s.repo.Versions()
	if h := s.home.Load(); h != nil && h.ed == weak.Make(ed) && h.list == list {
		return h
	}
	data := homeData{Active: ed.Version, ManifestID: ed.ManifestID}
	if list != nil {
		for i, v := range list.Versions {
			row := versionRow{RetainedVersion: v}
			if i+1 < len(list.Versions) {
				row.ChangesURL = "/changes/" + list.Versions[i+1].ManifestId + "/" + v.ManifestId
			}
			if v.Active {
				data.PublishedAt = v.PublishedAt
			}
			data.Versions = append(data.Versions, row)
		}
	}
	if from, to, err := s.latestPair(); err == nil {
		data.LatestChanges = fmt.Sprintf("/changes/%s/%s", from, to)
	}
	h := &homePage{ed: weak.Make(ed), list: list, data: data, bodies: newPageCache[string](maxOrigins, 0)}
	s.home.Store(h)
	return h
}

// Changes is the changelog from → to in locale loc; "" and "" is the latest
// pair. A pair's 18 locales are rendered at once, loading its editions once.
func (s *Site) Changes(from, to string, loc int) (*representation.Body, error) {
	if from == "" && to == "" {
		var err error
		if from, to, err = s.latestPair(); err != nil {
			return nil, err
		}
	}
	k, err := s.changes.get([2]string{from, to}, func() (*kept, error) { return s.renderChanges(from, to) })
	if err != nil {
		if catalog.ErrorCode(err) == catalog.EINTERNAL {
			s.log.Error("render a changelog", "from", from, "to", to, "err", err)
		}
		return nil, err
	}
	return k.bodies[loc], nil
}

// render executes a template into a page body whose Content-Language is lang,
// in every encoding at effort: a page is rendered once and served many times.
func render(name string, data any, lang string, effort representation.Effort) (*representation.Body, error) {
	var buf bytes.Buffer
	if err := templates.ExecuteTemplate(&buf, name, data); err != nil {
		return nil, fmt.Errorf("render page %s: %w", name, err)
	}
	return representation.Encode(buf.Bytes(), lang, effort), nil
}

type docsData struct{ Redoc string }

type homeData struct {
	Origin        string // the address the request came to, for the example command
	Active        gen.Version
	ManifestID    string
	PublishedAt   *string
	Versions      []versionRow
	LatestChanges string
}

type versionRow struct {
	gen.RetainedVersion
	ChangesURL string // the changelog from the version retained before; "" for the oldest
}
