package handler_test

import (
	"go/parser"
	"go/token"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/refdata/refdata/catalog"
	"github.com/refdata/refdata/edition"
	"github.com/refdata/refdata/fixtures"
	"github.com/refdata/refdata/gen"
	"github.com/refdata/refdata/handler"
	"github.com/refdata/refdata/router/apitest"
)

// newest is the newest sample version as the service first serves it:
// rendered, not compressed (edition.New).
var newest = sync.OnceValues(func() (*edition.Edition, error) {
	r, err := fixtures.Newest()
	if err != nil {
		return nil, err
	}
	return edition.New(r), nil
})

func server(t testing.TB) (*handler.Server, *edition.Edition) {
	t.Helper()
	ed, err := newest()
	if err != nil {
		t.Fatal(err)
	}
	return &handler.Server{Repo: edition.Serve(ed)}, ed
}

// compressed is the trimmed newest version with every body compressed, for
// the answers that pick an encoding.
func compressed(t testing.TB) (*handler.Server, *edition.Edition) {
	t.Helper()
	r, err := fixtures.Small("15")
	if err != nil {
		t.Fatal(err)
	}
	ed, err := edition.Build(r, edition.Options{Effort: apitest.Effort()})
	if err != nil {
		t.Fatal(err)
	}
	return &handler.Server{Repo: edition.Serve(ed)}, ed
}

// TestNoMarshalingOnCatalogRoutes: the only JSON encoding in handler is the error
// envelope and the probes' live state (/healthz, /readyz: a few requests a second
// at most, answering what no pre-rendered body could hold) and the one field a
// recolored logo reads; catalog bodies come rendered from the edition.
func TestNoMarshalingOnCatalogRoutes(t *testing.T) {
	t.Parallel()
	exempt := map[string]bool{"errors.go": true, "probes.go": true}
	for f := range exempt {
		if _, err := os.Stat(f); err != nil {
			t.Errorf("exempt file %s: %v; update the exemption", f, err)
		}
	}
	files, _ := filepath.Glob("*.go")
	if len(files) < 5 {
		t.Fatalf("only %d Go files found", len(files))
	}
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") || exempt[f] {
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
type discard struct {
	h      http.Header
	status int
}

func (d *discard) Header() http.Header         { return d.h }
func (d *discard) Write(b []byte) (int, error) { return len(b), nil }
func (d *discard) WriteHeader(status int)      { d.status = status }

// TestHandlersDoNotAllocate: list, by-UUID and 304 answers allocate nothing in the
// handler but their Content-Location (its URL and field: contentLocationAllocs)
// — they look up bytes and write them. Not parallel: AllocsPerRun counts the
// whole process's allocations.
func TestHandlersDoNotAllocate(t *testing.T) {
	s, ed := server(t)
	skin := ed.UUIDs(catalog.WeaponSkins)[0].String()
	ptBR, jaJP, all, playable := gen.Language("pt-BR"), gen.Language("ja-JP"), gen.Language("all"), gen.ListAgentsParamsIsPlayableCharacter("TRUE")
	etag := ed.List(catalog.Weapons, catalog.DefaultLocale).ETag()
	cs, ced := compressed(t)
	br := ced.List(catalog.Weapons, catalog.DefaultLocale).Brotli()
	if br == nil {
		t.Fatal("the compressed weapons list has no brotli encoding")
	}
	withHeader := func(r *http.Request, name, value string) *http.Request {
		r.Header.Set(name, value)
		return r
	}
	for _, tc := range []struct {
		name string
		req  *http.Request
		call func(w http.ResponseWriter, r *http.Request)
	}{
		{"list", get("/v1/weapons"), func(w http.ResponseWriter, r *http.Request) { s.ListWeapons(w, r, gen.ListWeaponsParams{}) }},
		{"list ja-JP", get("/v1/weapons/skins?language=ja-JP"), func(w http.ResponseWriter, r *http.Request) {
			s.ListWeaponSkins(w, r, gen.ListWeaponSkinsParams{Language: &jaJP})
		}},
		{"list all", get("/v1/weapons?language=all"), func(w http.ResponseWriter, r *http.Request) {
			s.ListWeapons(w, r, gen.ListWeaponsParams{Language: &all})
		}},
		{"list filtered", get("/v1/agents?isPlayableCharacter=TRUE&language=pt-BR"), func(w http.ResponseWriter, r *http.Request) {
			s.ListAgents(w, r, gen.ListAgentsParams{IsPlayableCharacter: &playable, Language: &ptBR})
		}},
		{"by uuid", get("/v1/weapons/skins/" + skin), func(w http.ResponseWriter, r *http.Request) {
			s.GetWeaponSkin(w, r, skin, gen.GetWeaponSkinParams{})
		}},
		{"304", withHeader(get("/v1/weapons"), "If-None-Match", etag), func(w http.ResponseWriter, r *http.Request) { s.ListWeapons(w, r, gen.ListWeaponsParams{}) }},
		{"list br", withHeader(get("/v1/weapons"), "Accept-Encoding", "gzip, br"), func(w http.ResponseWriter, r *http.Request) { cs.ListWeapons(w, r, gen.ListWeaponsParams{}) }},
		{"304 br", withHeader(withHeader(get("/v1/weapons"), "Accept-Encoding", "br"), "If-None-Match", br.ETag()), func(w http.ResponseWriter, r *http.Request) {
			cs.ListWeapons(w, r, gen.ListWeaponsParams{})
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w := &discard{h: http.Header{}}
			tc.call(w, tc.req)
			if w.status != http.StatusOK && w.status != http.StatusNotModified || w.h.Get("ETag") == "" {
				t.Fatalf("answered %d with ETag %q: not the answer whose allocations are counted", w.status, w.h.Get("ETag"))
			}
			if want := strings.HasPrefix(tc.name, "304"); want != (w.status == http.StatusNotModified) {
				t.Fatalf("answered %d", w.status)
			}
			if got := w.h.Get("ETag"); tc.name == "list br" && (w.h.Get("Content-Encoding") != "br" || got != br.ETag()) {
				t.Fatalf("answered %q with ETag %s, want br with %s", w.h.Get("Content-Encoding"), got, br.ETag())
			}
			allocs := testing.AllocsPerRun(200, func() {
				clear(w.h)
				tc.call(w, tc.req)
			})
			if allocs != contentLocationAllocs {
				t.Errorf("%v allocations per request, want %d", allocs, contentLocationAllocs)
			}
		})
	}
}

// get is a request for target, as the generated binding hands it to a method
// with the parameters it read from it.
func get(target string) *http.Request { return httptest.NewRequest("GET", target, nil) }

// contentLocationAllocs: a catalog answer's pinned URL and its field.
const contentLocationAllocs = 2

func BenchmarkHandlers(b *testing.B) {
	s, ed := server(b)
	skin := ed.UUIDs(catalog.WeaponSkins)[0].String()
	etag := ed.List(catalog.Weapons, catalog.DefaultLocale).ETag()
	notModified := get("/v1/weapons")
	notModified.Header.Set("If-None-Match", etag)
	list := func(w http.ResponseWriter, r *http.Request) { s.ListWeapons(w, r, gen.ListWeaponsParams{}) }
	for _, bc := range []struct {
		name string
		req  *http.Request
		call func(w http.ResponseWriter, r *http.Request)
	}{
		{"list", get("/v1/weapons"), list},
		{"uuid", get("/v1/weapons/skins/" + skin), func(w http.ResponseWriter, r *http.Request) {
			s.GetWeaponSkin(w, r, skin, gen.GetWeaponSkinParams{})
		}},
		{"304", notModified, list},
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
