package catalog_test

import (
	"bytes"
	"encoding/json"
	"maps"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/refdata/refdata/catalog"
	"github.com/refdata/refdata/fixtures"
)

// TestRenderEachAsImported: rendered a few locales at a time, each doc
// emitted once and its bytes let go of as soon as emitted (as an import
// does), a version's every list, item and filtered list is what Render
// makes, with the same Content-Language and the same bodies shared with
// en-US's: so every list was emitted while its items still had their bytes.
// With a rewrite, each body is what Render's rewritten afterwards is, once.
func TestRenderEachAsImported(t *testing.T) {
	t.Parallel()
	vs := fixtures.Versions()
	files, err := fixtures.Files(vs[len(vs)-1], true)
	if err != nil {
		t.Fatal(err)
	}
	load := func() *catalog.Snapshot {
		s, err := catalog.LoadFiles(files)
		if err != nil {
			t.Fatal(err)
		}
		catalog.Repair(s)
		return s
	}
	mirror := func(b []byte) []byte {
		return bytes.ReplaceAll(b, []byte(`"https://media.valorant-api.com/`), []byte(`"https://mirror.example/m/`))
	}
	for _, tc := range []struct {
		name    string
		rewrite func([]byte) []byte
	}{
		{"as rendered", nil},
		{"media rewritten", mirror},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			want, err := catalog.Render(load())
			if err != nil {
				t.Fatal(err)
			}
			if tc.rewrite != nil {
				for _, d := range want.Docs() {
					if !d.IsList() {
						d.JSON = tc.rewrite(d.JSON)
					}
				}
			}
			got := map[*catalog.Doc][]byte{} // each doc's bytes when emitted
			emits := 0
			r, err := catalog.RenderEach(load(), catalog.RenderOptions{Rewrite: tc.rewrite}, func(docs []*catalog.Doc, _ bool) error {
				emits++
				for _, d := range docs {
					if _, ok := got[d]; ok {
						t.Fatalf("a doc in %s emitted twice", d.Lang)
					}
					got[d] = d.Bytes()
				}
				for _, d := range docs {
					d.JSON = nil
				}
				return nil
			})
			if err != nil {
				t.Fatal(err)
			}
			if emits < catalog.NumLocales {
				t.Errorf("%d emits, want a few locales at a time", emits)
			}
			checked := 0
			check := func(what string, g, w *[catalog.NumLocales + 1]*catalog.Doc) {
				for loc := range g {
					if g[loc] == nil || w[loc] == nil {
						t.Fatalf("%s in %d: missing (%v, %v)", what, loc, g[loc] == nil, w[loc] == nil)
					}
					b, ok := got[g[loc]]
					switch {
					case !ok && g[loc].Lang != "": // the version record and string tables only
						t.Fatalf("%s in %d: never emitted", what, loc)
					case !bytes.Equal(b, w[loc].Bytes()):
						t.Fatalf("%s in %d: %d bytes, Render made %d", what, loc, len(b), len(w[loc].Bytes()))
					case g[loc].Lang != w[loc].Lang:
						t.Fatalf("%s in %d: Content-Language %q, Render's %q", what, loc, g[loc].Lang, w[loc].Lang)
					case (g[loc] == g[catalog.DefaultLocale]) != (w[loc] == w[catalog.DefaultLocale]):
						t.Fatalf("%s in %d: shares en-US's body %v, Render's %v", what, loc, g[loc] == g[catalog.DefaultLocale], w[loc] == w[catalog.DefaultLocale])
					}
					checked++
				}
			}
			for _, c := range catalog.Categories() {
				gt, wt := &r.Tables[c], &want.Tables[c]
				check(c.Name()+" list", &gt.List, &wt.List)
				for _, u := range wt.Order {
					check(c.Name()+" item "+u.String(), gt.Items[u], wt.Items[u])
				}
				for f, lists := range wt.Filtered {
					for v := range lists {
						check(c.Name()+" filtered by "+f, &gt.Filtered[f][v], &lists[v])
					}
				}
			}
			if checked < 1000 {
				t.Errorf("%d bodies checked", checked)
			}
		})
	}
}

// TestLazySnapshot: a snapshot decoded a catalog and a locale at a time
// (LoadLazy) repairs, validates and renders as one decoded whole: the same
// repairs, rejections in the same order (en-US's files, then each locale's),
// unknown fields, fills and bodies; rendering lets go of every catalog file.
func TestLazySnapshot(t *testing.T) {
	t.Parallel()
	vs := fixtures.Versions()
	clean, err := fixtures.Files(vs[len(vs)-1], true)
	if err != nil {
		t.Fatal(err)
	}
	// edit changes the items of one file.
	edit := func(files map[string][]byte, name string, f func(items []any)) {
		var items []any
		if err := json.Unmarshal(files[name], &items); err != nil {
			var env struct{ Data []any }
			if err := json.Unmarshal(files[name], &env); err != nil {
				t.Fatal(name, err)
			}
			items = env.Data
		}
		f(items)
		b, err := json.Marshal(items)
		if err != nil {
			t.Fatal(err)
		}
		files[name] = b
	}
	broken := maps.Clone(clean)
	edit(broken, "en-US/weapons.json", func(items []any) { items[0].(map[string]any)["displayName"] = 5.0 })
	edit(broken, "de-DE/buddies.json", func(items []any) { items[0].(map[string]any)["uuid"] = "00000000-0000-0000-0000-000000000001" })
	edit(broken, "en-US/buddies.json", func(items []any) { items[0].(map[string]any)["displayName"] = true })
	edit(broken, "ar-AE/weapons.json", func(items []any) { items[0].(map[string]any)["uuid"] = "00000000-0000-0000-0000-000000000002" })
	for _, tc := range []struct {
		name       string
		files      map[string][]byte
		rejections int
	}{
		{"valid", clean, 0},
		{"with problems in four files", broken, 4},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			whole, err := catalog.LoadFiles(tc.files)
			if err != nil {
				t.Fatal(err)
			}
			files := maps.Clone(tc.files)
			lazy, err := catalog.LoadLazy(files)
			if err != nil {
				t.Fatal(err)
			}
			if w, g := catalog.Repair(whole), catalog.Repair(lazy); !reflect.DeepEqual(g, w) {
				t.Errorf("repairs %v, decoded whole %v", g, w)
			}
			wv, err := catalog.Validate(whole)
			if err != nil {
				t.Fatal(err)
			}
			gv, err := catalog.Validate(lazy)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(gv, wv) {
				t.Fatalf("validation\n%+v\ndecoded whole\n%+v", gv, wv)
			}
			if len(gv.Rejections) < tc.rejections || gv.Items == 0 {
				t.Fatalf("%d rejections (want %d or more), %d items", len(gv.Rejections), tc.rejections, gv.Items)
			}
			// As a report lists them: en-US's files first, then each other
			// locale's, in catalog order.
			rank := func(file string) int {
				loc, name, _ := strings.Cut(file, "/")
				l, _ := catalog.ParseLocale(loc)
				c := slices.IndexFunc(catalog.SourceCategories(), func(c catalog.Category) bool { return c.File() == name })
				if l == catalog.DefaultLocale {
					return c
				}
				return (1+l)*100 + c
			}
			for i := 1; i < len(gv.Rejections); i++ {
				if a, b := gv.Rejections[i-1].File, gv.Rejections[i].File; rank(a) > rank(b) {
					t.Errorf("rejection %d in %s after one in %s", i, b, a)
				}
			}
			if tc.rejections > 0 {
				return
			}
			want, err := catalog.Render(whole)
			if err != nil {
				t.Fatal(err)
			}
			got, err := catalog.RenderEach(lazy, catalog.RenderOptions{Bulk: true}, nil)
			if err != nil {
				t.Fatal(err)
			}
			for name := range files {
				if name != "version.json" && !strings.HasPrefix(name, "locres/") {
					t.Errorf("RenderEach kept %s", name)
				}
			}
			wd, gd := want.Docs(), got.Docs()
			if len(gd) != len(wd) {
				t.Fatalf("%d docs, decoded whole %d", len(gd), len(wd))
			}
			for i := range wd {
				if !bytes.Equal(gd[i].Bytes(), wd[i].Bytes()) || gd[i].Lang != wd[i].Lang {
					t.Fatalf("doc %d in %s: %d bytes, decoded whole %d in %s", i, gd[i].Lang, gd[i].Len(), wd[i].Len(), wd[i].Lang)
				}
			}
		})
	}
}
