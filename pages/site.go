package pages

import (
	"bytes"
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
	"github.com/refdata/refdata/impl"
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

// maxPairs bounds the changelogs kept: each pair holds 18 pages (one per locale).
// Beyond it the least recently rendered pair is dropped and rendered again when
// asked for.
const maxPairs = 16

// Site renders and keeps the pages of one server.
type Site struct {
	// Media is the mirror the catalog pages load images from when it holds
	// them (else from the data's URLs); nil: no mirror.
	Media media.Library

	repo edition.Repository
	log  *slog.Logger

	docs *representation.Body

	home   atomic.Pointer[homePage]
	latest atomic.Pointer[latestPair]

	rendering sync.Mutex // one changelog render at a time: each loads two editions
	mu        sync.Mutex // guards pairs and order; never held while rendering
	pairs     map[pairKey]*changesPages
	order     []pairKey // oldest render first

	browsing    sync.Mutex                // one catalog or item page render at a time
	browsed     map[browseKey]*browsePage // guarded by mu, as are the two below
	browseOrder []browseKey               // oldest render first
	browseBytes int                       // of the kept pages' text
}

var _ impl.Pages = (*Site)(nil)

// homePage and latestPair know their edition by a weak pointer: held, it kept
// a swapped-out edition, all of it, live until the page's next request.
type homePage struct {
	ed   weak.Pointer[edition.Edition]
	list *edition.VersionList
	data homeData // without Origin

	mu     sync.Mutex // guards bodies and order; held while rendering one
	bodies map[string]*representation.Body
	order  []string // origins, oldest render first
}

// maxOrigins bounds the landing pages kept per version: one per address the
// server is reached by (the example command names it), which is a handful
// (localhost, a host name, a proxy's). Beyond it the oldest is dropped and
// rendered again when asked for.
const maxOrigins = 8

type latestPair struct {
	ed       weak.Pointer[edition.Edition]
	from, to string
}

type pairKey struct{ from, to string }

// New renders the pages that do not depend on data (the docs page); the others
// are rendered on their first request and kept.
func New(repo edition.Repository, logger *slog.Logger) (*Site, error) {
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	s := &Site{repo: repo, log: logger, pairs: map[pairKey]*changesPages{}, browsed: map[browseKey]*browsePage{}}
	b, err := render("docs", docsData{Redoc: RedocPath}, "en")
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

// ErrorPage is the package's ErrorPage, for impl's page handlers.
func (s *Site) ErrorPage(status int, message, path string) []byte {
	return ErrorPage(status, message, path)
}

// Docs is the API reference page.
func (s *Site) Docs() (*representation.Body, error) { return s.docs, nil }

// Home is the landing page of the active version for a request that came to
// origin ("http://localhost:8080": scheme and host, which the caller has
// checked), whose "Try it" command names that address. It is rendered once per
// active version, version list and origin.
func (s *Site) Home(origin string) (*representation.Body, error) {
	return s.homePage().body(origin, s.log)
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
	h := &homePage{ed: weak.Make(ed), list: list, data: data, bodies: map[string]*representation.Body{}}
	s.home.Store(h)
	return h
}

// body is the landing page for origin, rendered on its first request.
func (h *homePage) body(origin string, log *slog.Logger) (*representation.Body, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if b := h.bodies[origin]; b != nil {
		return b, nil
	}
	data := h.data
	data.Origin = origin
	// Fast, not Best: a client naming a new Host each time makes this run per
	// request once maxOrigins are kept, and the page is a few KB.
	b, err := renderAt("home", data, "en", representation.Fast)
	if err != nil {
		log.Error("render the landing page", "origin", origin, "err", err)
		return nil, err
	}
	if len(h.order) >= maxOrigins {
		delete(h.bodies, h.order[0])
		h.order = h.order[1:]
	}
	h.bodies[origin] = b
	h.order = append(h.order, origin)
	return b, nil
}

// Changes is the changelog from → to in locale loc; "" and "" is the latest pair.
// All 18 locales of a pair are rendered on its first request, with the two
// editions loaded once, and kept.
func (s *Site) Changes(from, to string, loc int) (*representation.Body, error) {
	if from == "" && to == "" {
		var err error
		if from, to, err = s.latestPair(); err != nil {
			return nil, err
		}
	}
	key := pairKey{from, to}
	if p := s.kept(key); p != nil {
		return p.bodies[loc], nil
	}
	s.rendering.Lock()
	defer s.rendering.Unlock()
	if p := s.kept(key); p != nil {
		return p.bodies[loc], nil // rendered while this request waited
	}
	p, err := s.renderChanges(from, to)
	if err != nil {
		if catalog.ErrorCode(err) == catalog.EINTERNAL {
			s.log.Error("render a changelog", "from", from, "to", to, "err", err)
		}
		return nil, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, again := s.pairs[key]; !again {
		if len(s.order) >= maxPairs {
			delete(s.pairs, s.order[0])
			s.order = s.order[1:]
		}
		s.order = append(s.order, key)
	}
	s.pairs[key] = p
	return p.bodies[loc], nil
}

// changesPages are a pair's changelogs, one per locale, and the icon URLs
// they show that the mirror did not hold (as browsePage's).
type changesPages struct {
	bodies  [catalog.NumLocales]*representation.Body
	lacking *lacking
}

// kept is the pair's changelogs unless the mirror now holds an icon they lack.
func (s *Site) kept(key pairKey) *changesPages {
	s.mu.Lock()
	p := s.pairs[key]
	s.mu.Unlock()
	if p == nil || p.lacking.held(s.Media) {
		return nil
	}
	return p
}

// render executes a template into a page body whose Content-Language is
// lang, in every encoding: a page is rendered once and served many times.
func render(name string, data any, lang string) (*representation.Body, error) {
	return renderAt(name, data, lang, representation.Best)
}

func renderAt(name string, data any, lang string, effort representation.Effort) (*representation.Body, error) {
	var buf bytes.Buffer
	if err := templates.ExecuteTemplate(&buf, name, data); err != nil {
		return nil, fmt.Errorf("render page %s: %w", name, err)
	}
	return representation.Encode(buf.Bytes(), lang, effort), nil
}

type docsData struct{ Redoc string }

type homeData struct {
	// Origin is the address the request came to, for the example command.
	Origin        string
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
