package impl_test

import (
	"go/parser"
	"go/token"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/refdata/refdata/catalog"
	"github.com/refdata/refdata/fixtures"
	"github.com/refdata/refdata/gen"
	"github.com/refdata/refdata/impl"
)

var newest = sync.OnceValues(fixtures.Newest)

func server(t testing.TB) (*impl.Server, *catalog.Edition) {
	t.Helper()
	ed, err := newest()
	if err != nil {
		t.Fatal(err)
	}
	return &impl.Server{Repo: impl.Static{Edition: ed}}, ed
}

// TestNoMarshalingOnCatalogRoutes: the only JSON encoding in impl is the error
// envelope and the probes' live state (/healthz, /readyz: a few requests a second
// at most, answering what no pre-rendered body could hold); catalog bodies come
// rendered from the edition.
func TestNoMarshalingOnCatalogRoutes(t *testing.T) {
	files, _ := filepath.Glob("*.go")
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") || f == "errors.go" || f == "probes.go" {
			continue
		}
		file, err := parser.ParseFile(token.NewFileSet(), f, nil, parser.ImportsOnly)
		if err != nil {
			t.Fatal(err)
		}
		for _, imp := range file.Imports {
			if p, _ := strconv.Unquote(imp.Path.Value); p == "encoding/json" || p == "encoding/gob" || p == "encoding/xml" {
				t.Errorf("%s imports %s: catalog routes must write pre-rendered bytes", f, p)
			}
		}
	}
}

// discard is a ResponseWriter that allocates nothing, so AllocsPerRun counts only
// the handler.
type discard struct{ h http.Header }

func (d *discard) Header() http.Header         { return d.h }
func (d *discard) Write(b []byte) (int, error) { return len(b), nil }
func (d *discard) WriteHeader(int)             {}

// TestHandlersDoNotAllocate: list, by-UUID and 304 answers allocate nothing in the
// handler — they look up bytes and write them.
func TestHandlersDoNotAllocate(t *testing.T) {
	s, ed := server(t)
	skin := ed.UUIDs(catalog.WeaponSkins)[0].String()
	ja, all := gen.Language("ja-JP"), gen.Language("all")
	etag := ed.List(catalog.Weapons, catalog.DefaultLocale).ETag()
	for _, tc := range []struct {
		name string
		req  *http.Request
		call func(w http.ResponseWriter, r *http.Request)
	}{
		{"list", httptest.NewRequest("GET", "/v1/weapons", nil), func(w http.ResponseWriter, r *http.Request) {
			s.ListWeapons(w, r, gen.ListWeaponsParams{})
		}},
		{"list ja-JP", httptest.NewRequest("GET", "/v1/weapons/skins?language=ja-JP", nil), func(w http.ResponseWriter, r *http.Request) {
			s.ListWeaponSkins(w, r, gen.ListWeaponSkinsParams{Language: &ja})
		}},
		{"list all", httptest.NewRequest("GET", "/v1/weapons?language=all", nil), func(w http.ResponseWriter, r *http.Request) {
			s.ListWeapons(w, r, gen.ListWeaponsParams{Language: &all})
		}},
		{"by uuid", httptest.NewRequest("GET", "/v1/weapons/skins/"+skin, nil), func(w http.ResponseWriter, r *http.Request) {
			s.GetWeaponSkin(w, r, skin, gen.GetWeaponSkinParams{})
		}},
		{"304", func() *http.Request {
			r := httptest.NewRequest("GET", "/v1/weapons", nil)
			r.Header.Set("If-None-Match", etag)
			return r
		}(), func(w http.ResponseWriter, r *http.Request) {
			s.ListWeapons(w, r, gen.ListWeaponsParams{})
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w := &discard{h: http.Header{}}
			allocs := testing.AllocsPerRun(200, func() {
				clear(w.h)
				tc.call(w, tc.req)
			})
			if allocs != 0 {
				t.Errorf("%v allocations per request, want 0", allocs)
			}
		})
	}
}

func BenchmarkHandlers(b *testing.B) {
	s, ed := server(b)
	skin := ed.UUIDs(catalog.WeaponSkins)[0].String()
	etag := ed.List(catalog.Weapons, catalog.DefaultLocale).ETag()
	notModified := httptest.NewRequest("GET", "/v1/weapons", nil)
	notModified.Header.Set("If-None-Match", etag)
	for _, bc := range []struct {
		name string
		req  *http.Request
		call func(w http.ResponseWriter, r *http.Request)
	}{
		{"list", httptest.NewRequest("GET", "/v1/weapons", nil), func(w http.ResponseWriter, r *http.Request) { s.ListWeapons(w, r, gen.ListWeaponsParams{}) }},
		{"uuid", httptest.NewRequest("GET", "/v1/weapons/skins/"+skin, nil), func(w http.ResponseWriter, r *http.Request) {
			s.GetWeaponSkin(w, r, skin, gen.GetWeaponSkinParams{})
		}},
		{"304", notModified, func(w http.ResponseWriter, r *http.Request) { s.ListWeapons(w, r, gen.ListWeaponsParams{}) }},
	} {
		b.Run(bc.name, func(b *testing.B) {
			w := &discard{h: http.Header{}}
			b.ReportAllocs()
			for b.Loop() {
				clear(w.h)
				bc.call(w, bc.req)
			}
		})
	}
}
