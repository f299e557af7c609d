// Package upstreamtest is a stand-in upstream in the public API's shape, for
// tests (the public API cannot be reached from CI): it serves versions (of
// snapshots, such as the embedded sample data, or as a test builds them),
// switches between them on Publish, and lets a test inject faults.
package upstreamtest

import (
	"cmp"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io/fs"
	"net/http"
	"os"
	"path"
	"slices"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/refdata/refdata/catalog"
	"github.com/refdata/refdata/envelope"
)

// Version is one upstream version (Name: its manifestId): the /v1/version body and, per catalog path
// after /v1/ ("weapons/skins"), its body per locale ("*": every locale).
type Version struct {
	Name     string
	Record   []byte
	Catalogs map[string]map[string][]byte
}

// Server serves one Version at a time.
type Server struct {
	mu       sync.Mutex
	versions []Version
	cur      int

	// AdvertiseAll makes /openapi.json list language=all (it is answered either way).
	AdvertiseAll atomic.Bool
	// Fault, when set, sees every request first and answers it when it returns true.
	Fault atomic.Pointer[func(w http.ResponseWriter, r *http.Request) bool]

	// Media, when set before serving, makes the stand-in serve the media its
	// catalogs reference (media.go).
	Media *Media

	requests atomic.Int64
}

// New serves versions, the first one published.
func New(versions ...Version) *Server { return &Server{versions: versions} }

// Publish makes version i the one served.
func (s *Server) Publish(i int) {
	s.mu.Lock()
	s.cur = i
	s.mu.Unlock()
}

// Requests is the number of requests answered so far.
func (s *Server) Requests() int64 { return s.requests.Load() }

// SetFault installs f (nil removes it).
func (s *Server) SetFault(f func(w http.ResponseWriter, r *http.Request) bool) {
	if f == nil {
		s.Fault.Store(nil)
		return
	}
	s.Fault.Store(&f)
}

// Current is the version served.
func (s *Server) Current() Version {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.versions[s.cur]
}

func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	s.requests.Add(1)
	if f := s.Fault.Load(); f != nil && (*f)(w, r) {
		return
	}
	v := s.Current()
	p := r.URL.Path
	switch {
	case p == "/openapi.json":
		if !s.AdvertiseAll.Load() {
			writeErr(w, http.StatusNotFound, "no spec here")
			return
		}
		_, _ = w.Write([]byte(`{"openapi":"3.0.3","paths":{},"components":{"parameters":{"Language":{"name":"language","in":"query","schema":{"type":"string","enum":["all","en-US"]}}}}}`))
	case p == "/v1/version":
		sum := sha256.Sum256(v.Record)
		etag := `"` + hex.EncodeToString(sum[:8]) + `"`
		w.Header().Set("ETag", etag)
		if r.Header.Get("If-None-Match") == etag {
			w.WriteHeader(http.StatusNotModified)
			return
		}
		w.Header().Set("Content-Type", "application/json; charset=utf-8")
		_, _ = w.Write(v.Record)
	case strings.HasPrefix(p, "/v1/"):
		bodies, ok := v.Catalogs[strings.TrimPrefix(p, "/v1/")]
		if !ok {
			writeErr(w, http.StatusNotFound, "not found")
			return
		}
		lang := cmp.Or(r.URL.Query().Get("language"), "en-US")
		if lang != "all" && !slices.Contains(catalog.Locales[:], lang) {
			// The public API: codes are case-sensitive; an unknown one is a 404.
			writeErr(w, http.StatusNotFound, "the requested language was not found")
			return
		}
		b, ok := bodies[lang]
		if !ok {
			b = bodies["*"]
		}
		if s.Media != nil {
			b = s.Media.here(b, r)
		}
		w.Header().Set("Content-Type", "application/json; charset=utf-8")
		_, _ = w.Write(b)
	case s.Media != nil && strings.HasPrefix(p, "/media/"):
		s.Media.serve(w, r)
	default:
		writeErr(w, http.StatusNotFound, "not found")
	}
}

func writeErr(w http.ResponseWriter, code int, msg string) {
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.WriteHeader(code)
	fmt.Fprintf(w, `{"status":%d,"error":%q}`, code, msg)
}

// FromSnapshotDirs reads each snapshot directory as FromSnapshot does.
func FromSnapshotDirs(dirs []string) ([]Version, error) {
	var vs []Version
	for _, dir := range dirs {
		v, err := FromSnapshot(os.DirFS(dir), ".")
		if err != nil {
			return nil, fmt.Errorf("%s: %w", dir, err)
		}
		vs = append(vs, v)
	}
	return vs, nil
}

// FromSnapshot makes a version of a snapshot-layout directory (the embedded
// sample data): each catalog's en-US file as it is, each locale's the en-US
// items with that locale's translation laid over them (what the public API
// sends: source data, not refdata's rendering, whose callouts are already
// normalized), language=all with each text that differs between locales as an
// object of the 18, and the string tables at /v1/locres/{locale}.
func FromSnapshot(fsys fs.FS, dir string) (Version, error) {
	v := Version{Name: path.Base(dir), Catalogs: map[string]map[string][]byte{}}
	var err error
	if v.Record, err = fs.ReadFile(fsys, path.Join(dir, "version.json")); err != nil {
		return v, err
	}
	v.Name = catalog.ManifestIDOf(v.Record)
	for _, c := range catalog.SourceCategories() {
		en, err := fs.ReadFile(fsys, path.Join(dir, "en-US", c.File()))
		if err != nil {
			continue // the upstream lacks it
		}
		items, err := envelope.DecodeArray(en)
		if err != nil {
			return v, fmt.Errorf("%s: %w", c.File(), err)
		}
		if _, err := envelope.Raw(en, envelope.Array); err != nil {
			// Bare data in the snapshot: an upstream answers with an envelope.
			if en, err = envelope.Marshal(items); err != nil {
				return v, err
			}
		}
		byLang := map[string][]byte{"en-US": en}
		trees := make([]any, len(catalog.Locales))
		for i, loc := range catalog.Locales {
			trees[i] = items
			b, err := fs.ReadFile(fsys, path.Join(dir, loc, c.File()))
			if err != nil || loc == "en-US" {
				continue
			}
			var over []any
			if err := json.Unmarshal(b, &over); err != nil {
				return v, fmt.Errorf("%s/%s: %w", loc, c.File(), err)
			}
			trees[i] = catalog.Translate(items, over) // items stays as it is
			if byLang[loc], err = envelope.Marshal(trees[i]); err != nil {
				return v, err
			}
		}
		byLang["*"] = en
		if byLang["all"], err = envelope.Marshal(combine(trees)); err != nil {
			return v, err
		}
		v.Catalogs[c.Name()] = byLang
	}
	for _, loc := range catalog.Locales {
		b, err := fs.ReadFile(fsys, path.Join(dir, "locres", loc+".json"))
		if err != nil {
			continue
		}
		var table any
		if err := json.Unmarshal(b, &table); err != nil {
			return v, err
		}
		if b, err = envelope.Marshal(table); err != nil {
			return v, err
		}
		v.Catalogs["locres/"+loc] = map[string][]byte{"*": b}
	}
	return v, nil
}

// combine merges the 18 locales' values: strings that differ become an object
// keyed by locale.
func combine(trees []any) any {
	// at is every locale's value at one key or index of the en-US value.
	at := func(get func(t any) any) any {
		sub := make([]any, len(trees))
		for i, t := range trees {
			sub[i] = get(t)
		}
		return combine(sub)
	}
	switch x := trees[catalog.DefaultLocale].(type) {
	case map[string]any:
		out := map[string]any{}
		for k := range x {
			out[k] = at(func(t any) any {
				m, _ := t.(map[string]any)
				return m[k]
			})
		}
		return out
	case []any:
		out := make([]any, len(x))
		for j := range x {
			out[j] = at(func(t any) any {
				if a, ok := t.([]any); ok && j < len(a) {
					return a[j]
				}
				return nil
			})
		}
		return out
	case nil:
		// en-US has no text here (null) but a locale may: the public API then
		// sends the object of the 18, null where a locale has none.
		if slices.ContainsFunc(trees, func(t any) bool {
			_, ok := t.(string)
			return ok
		}) {
			return byLocale(trees)
		}
		return nil
	case string:
		if slices.ContainsFunc(trees, func(t any) bool { return t != x }) {
			return byLocale(trees)
		}
		return x
	}
	return trees[catalog.DefaultLocale]
}

// byLocale is the object of the 18 locales' values.
func byLocale(values []any) map[string]any {
	m := map[string]any{}
	for i, v := range values {
		m[catalog.Locales[i]] = v
	}
	return m
}
