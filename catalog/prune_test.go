package catalog

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"
)

// TestPrunedTreesMakeLanguageAll: every item of the sample's newest version
// written for language=all from its locales' trees reduced to what
// language=all reads (pruneItem), as an import keeps them once a locale is
// rendered, is byte for byte what the whole trees make.
func TestPrunedTreesMakeLanguageAll(t *testing.T) {
	t.Parallel()
	dirs, err := filepath.Glob("../fixtures/versions/15_*")
	if err != nil || len(dirs) != 1 {
		t.Fatalf("the sample's version 15: %v %v", dirs, err)
	}
	s, err := LoadSnapshot(os.DirFS(dirs[0]), ".")
	if err != nil {
		t.Fatal(err)
	}
	Repair(s)
	compared, pruned := 0, 0
	for _, src := range SourceCategories() {
		items := s.Sources[src]
		if err := normalizeItems(src, items, map[Fill]int{}, false); err != nil {
			t.Fatal(err)
		}
		var whole, kept [NumLocales]map[Category][]node
		whole[DefaultLocale] = flatten(src, items)
		kept[DefaultLocale] = whole[DefaultLocale]
		for loc, lang := range Locales {
			over := s.Overlays[lang][src]
			if loc == DefaultLocale || over == nil {
				continue
			}
			merged := Translate(items, over)
			if err := normalizeItems(src, merged, map[Fill]int{}, true); err != nil {
				t.Fatal(err)
			}
			whole[loc] = flatten(src, merged)
			kept[loc] = map[Category][]node{}
			for c, ns := range whole[loc] {
				sc, err := componentSchema(c.Schema())
				if err != nil {
					t.Fatal(err)
				}
				for i := range ns {
					n := ns[i]
					n.v = pruneItem(sc, &whole[DefaultLocale][c][i], &ns[i])
					kept[loc][c] = append(kept[loc][c], n)
					pruned++
				}
			}
		}
		// Nested items as language=all splices them: the same for both.
		all := map[Category][][]byte{}
		for c, ns := range whole[DefaultLocale] {
			for range ns {
				all[c] = append(all[c], []byte(`{"nested":true}`))
			}
		}
		for _, c := range renderOrder(src) {
			sc, err := componentSchema(c.Schema())
			if err != nil {
				t.Fatal(err)
			}
			write := func(trees *[NumLocales]map[Category][]node, i int) []byte {
				vals := make([]any, NumLocales)
				n := &trees[DefaultLocale][c][i]
				for loc := range vals {
					vals[loc] = n.v
					if ns := trees[loc][c]; ns != nil {
						vals[loc] = ns[i].v
					}
					if len(n.kids) > 0 {
						k := node{v: vals[loc].(map[string]any), kids: n.kids}
						vals[loc] = k.spliced(all)
					}
				}
				b, err := appendAll(nil, sc, vals)
				if err != nil {
					t.Fatal(err)
				}
				return b
			}
			for i := range whole[DefaultLocale][c] {
				if w, g := write(&whole, i), write(&kept, i); !bytes.Equal(g, w) {
					t.Fatalf("%s item %d: from pruned trees\n%.300s\nfrom whole ones\n%.300s", c.Name(), i, g, w)
				}
				compared++
			}
		}
	}
	if compared < 3000 || pruned < 10000 {
		t.Errorf("%d items compared, %d pruned", compared, pruned)
	}
}

// TestPruneForAll: values the sample does not have, written for
// language=all from pruned values as from whole ones.
func TestPruneForAll(t *testing.T) {
	t.Parallel()
	text := &openapi3.SchemaRef{Value: &openapi3.Schema{Type: &openapi3.Types{"string"}, Extensions: map[string]any{"x-localized": true}}}
	sc := &openapi3.Schema{Type: &openapi3.Types{"object"}, Properties: openapi3.Schemas{
		"name":  text,
		"tags":  {Value: &openapi3.Schema{Type: &openapi3.Types{"array"}, Items: text}},
		"stats": {Value: &openapi3.Schema{Type: &openapi3.Types{"array"}, Items: &openapi3.SchemaRef{Value: &openapi3.Schema{Type: &openapi3.Types{"object"}, Properties: openapi3.Schemas{"label": text}}}}},
		"cost":  {Value: &openapi3.Schema{Type: &openapi3.Types{"integer"}}},
	}}
	en := map[string]any{"name": "A", "extra": "x", "tags": []any{"t", "u"}, "stats": []any{map[string]any{"label": "L", "n": 1.0}, map[string]any{"label": "M"}}, "cost": 1.0}
	for _, tc := range []struct {
		name string
		loc  map[string]any
	}{
		{"an unnamed field that is not text", map[string]any{"name": "B", "extra": map[string]any{"o": 1.0}}},
		{"an unnamed field as en-US's", map[string]any{"name": "B", "extra": "x"}},
		{"an unnamed field translated", map[string]any{"extra": "y"}},
		{"localized text as en-US's", map[string]any{"name": "A", "tags": []any{"t", "v"}}},
		{"an array shorter than en-US's", map[string]any{"tags": []any{"T"}, "stats": []any{map[string]any{"n": 2.0}}}},
		{"an element translated after one not", map[string]any{"stats": []any{map[string]any{"n": 2.0}, map[string]any{"label": "N"}}}},
		{"not an object where en-US's is", map[string]any{"stats": "none", "cost": "x"}},
		{"nothing", map[string]any{}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			vals := make([]any, NumLocales)
			kept := make([]any, NumLocales)
			for loc := range vals {
				vals[loc], kept[loc] = en, en
			}
			// Another locale translates the unnamed field.
			other := map[string]any{"name": "C", "extra": "z"}
			de, _ := ParseLocale("de-DE")
			fr, _ := ParseLocale("fr-FR")
			vals[de], vals[fr] = tc.loc, other
			kept[de], kept[fr] = pruneItem(sc, &node{v: en}, &node{v: tc.loc}), pruneItem(sc, &node{v: en}, &node{v: other})
			w, err := appendAll(nil, sc, vals)
			if err != nil {
				t.Fatal(err)
			}
			g, err := appendAll(nil, sc, kept)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(g, w) {
				t.Errorf("from %v pruned to %v:\n%s\nwant\n%s", tc.loc, kept[de], g, w)
			}
		})
	}
}
