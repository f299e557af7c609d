package catalog_test

import (
	"bytes"
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
