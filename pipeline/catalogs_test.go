package pipeline_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/refdata/refdata/catalog"
	"github.com/refdata/refdata/gen"
	"github.com/refdata/refdata/pipeline"
	"github.com/refdata/refdata/router/apitest"
)

// newCatalogs are the catalogs added after the first contract: content
// tiers, gear, ceremonies, missions, objectives.
var newCatalogs = []catalog.Category{catalog.ContentTiers, catalog.Gear, catalog.Ceremonies, catalog.Missions, catalog.Objectives}

// uuidsOf lists the uuids of items, in order.
func uuidsOf(items []rawItem) []string {
	out := make([]string, len(items))
	for i, it := range items {
		out[i] = it["uuid"].(string)
	}
	return out
}

// strs is a list of uuids as text.
func strs(us []catalog.UUID) []string {
	out := make([]string, len(us))
	for i, u := range us {
		out[i] = u.String()
	}
	return out
}

// rejectedImport imports snap into a copy of the store in base, wants a
// rejection, and checks that the store — every byte, the active version —
// is as it was; it returns the error's message and the written report.
func rejectedImport(t *testing.T, base, snap string, opt pipeline.Options) (string, error) {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "store")
	copyDir(t, base, dir)
	before := treeHash(t, dir)
	st := openStore(t, dir)
	active, _, err := st.Active()
	if err != nil {
		t.Fatal(err)
	}
	rep, err := pipeline.Import(st, snap, opt)
	var out strings.Builder
	rep.Write(&out)
	if !errors.Is(err, pipeline.ErrRejected) || rep.Outcome != "rejected" || rep.NumRejections == 0 {
		t.Fatalf("err = %v, outcome %q: want a rejection\n%s", err, rep.Outcome, out.String())
	}
	if now, _, _ := st.Active(); now != active {
		t.Errorf("active version %v, want %v", now, active)
	}
	if after := treeHash(t, dir); !maps.Equal(before, after) {
		t.Errorf("the store changed:\nbefore %v\nafter  %v", before, after)
	}
	return err.Error() + "\n" + out.String(), err
}

// TestNewCatalogs: the five catalogs added after the first contract go
// through an import as the others do, each checked here: they are imported
// (served in the stored edition, diffed against the version before),
// validated (a type change and a duplicate uuid reject the version),
// carried over from the active version when a snapshot lacks them, and under
// the shrink guard (emptied, or losing more than 20 % of their items).
func TestNewCatalogs(t *testing.T) {
	t.Parallel()
	base, prev := baseStore(t, "14")
	v14, good := fixtureDir(t, "14"), fixtureDir(t, "15")
	old, cur := map[catalog.Category][]rawItem{}, map[catalog.Category][]rawItem{}
	for _, c := range newCatalogs {
		old[c] = readItems(t, v14, "en-US/"+c.File())
		cur[c] = readItems(t, good, "en-US/"+c.File())
		if len(old[c]) < 2 || len(cur[c]) < 2 {
			t.Fatalf("%s: %d items in 14, %d in 15; the test needs two", c.Name(), len(old[c]), len(cur[c]))
		}
	}
	snapshot := func(t *testing.T, change func(dir string, c catalog.Category)) string {
		t.Helper()
		dir := filepath.Join(t.TempDir(), "snap")
		copyDir(t, good, dir)
		for _, c := range newCatalogs {
			change(dir, c)
		}
		return dir
	}

	t.Run("imported", func(t *testing.T) {
		t.Parallel()
		dir := filepath.Join(t.TempDir(), "store")
		copyDir(t, base, dir)
		st := openStore(t, dir)
		rep := mustImport(t, st, good)
		ed, _, err := loadEdition(st, rep.ManifestID)
		if err != nil {
			t.Fatal(err)
		}
		body, err := st.ReadDiff(prev, rep.ManifestID)
		if err != nil {
			t.Fatal(err)
		}
		var d gen.DiffBody
		if err := json.Unmarshal(body, &d); err != nil {
			t.Fatal(err)
		}
		cats := categoriesOf(t, d.Data.Categories)
		for _, c := range newCatalogs {
			if got, want := strs(ed.UUIDs(c)), uuidsOf(cur[c]); !slices.Equal(got, want) {
				t.Errorf("%s: served %v, the snapshot has %v", c.Name(), got, want)
			}
			for _, it := range cur[c] {
				for loc := range catalog.NumLocales + 1 {
					got := bodyItem(t, ed, c, it["uuid"].(string), loc)
					if got["uuid"] != it["uuid"] || got["assetPath"] != it["assetPath"] {
						t.Errorf("%s/%s?language=%s: %v", c.Name(), it["uuid"], langName(loc), got)
					}
				}
			}
			var added, removed []string
			was, now := uuidsOf(old[c]), uuidsOf(cur[c])
			for _, u := range now {
				if !slices.Contains(was, u) {
					added = append(added, u)
				}
			}
			for _, u := range was {
				if !slices.Contains(now, u) {
					removed = append(removed, u)
				}
			}
			sort.Strings(added)
			sort.Strings(removed)
			cd, ok := cats[c.Name()]
			if !ok {
				t.Errorf("the diff has no %s", c.Name())
			}
			if !slices.Equal(cd.Added, added) || !slices.Equal(cd.Removed, removed) {
				t.Errorf("%s: diff added %v removed %v, want %v and %v", c.Name(), cd.Added, cd.Removed, added, removed)
			}
		}
	})

	t.Run("validated", func(t *testing.T) {
		t.Parallel()
		snap := snapshot(t, func(dir string, c catalog.Category) {
			edit(t, dir, "en-US/"+c.File(), func(v any) any {
				a := v.([]any)
				item(v, 1)["assetPath"] = 42.0
				return append(a, a[0])
			})
		})
		report, _ := rejectedImport(t, base, snap, options())
		for _, c := range newCatalogs {
			file := "en-US/" + c.File()
			for _, want := range []string{
				fmt.Sprintf("%s uuid %s at /1/assetPath: value must be a string", file, cur[c][1]["uuid"]),
				fmt.Sprintf("%s uuid %s at /%d/uuid: duplicate %s uuid (first at /0)", file, cur[c][0]["uuid"], len(cur[c]), c.Noun()),
			} {
				if !strings.Contains(report, want) {
					t.Errorf("the report does not say %q:\n%s", want, report)
				}
			}
		}
	})

	t.Run("carried over", func(t *testing.T) {
		t.Parallel()
		snap := snapshot(t, func(dir string, c catalog.Category) {
			for _, loc := range catalog.Locales {
				if err := os.Remove(filepath.Join(dir, loc, c.File())); err != nil && !errors.Is(err, os.ErrNotExist) {
					t.Fatal(err)
				}
			}
		})
		dir := filepath.Join(t.TempDir(), "store")
		copyDir(t, base, dir)
		st := openStore(t, dir)
		rep := mustImport(t, st, snap)
		before, _, err := loadEdition(st, prev)
		if err != nil {
			t.Fatal(err)
		}
		ed, _, err := loadEdition(st, rep.ManifestID)
		if err != nil {
			t.Fatal(err)
		}
		_, prevFiles, err := st.ReadVersion(prev)
		if err != nil {
			t.Fatal(err)
		}
		_, files, err := st.ReadVersion(rep.ManifestID)
		if err != nil {
			t.Fatal(err)
		}
		body, err := st.ReadDiff(prev, rep.ManifestID)
		if err != nil {
			t.Fatal(err)
		}
		var d gen.DiffBody
		if err := json.Unmarshal(body, &d); err != nil {
			t.Fatal(err)
		}
		cats := categoriesOf(t, d.Data.Categories)
		note := slices.IndexFunc(rep.Notes, func(n string) bool { return strings.HasPrefix(n, "carried over from the active version "+prev) })
		for _, c := range newCatalogs {
			if !slices.Contains(rep.CarriedOver, c.Name()) || rep.CarriedFrom != prev || note < 0 || !strings.Contains(rep.Notes[note], c.Name()) {
				t.Errorf("%s is not reported carried over: %q, notes %q", c.Name(), rep.CarriedOver, rep.Notes)
			}
			if got, want := strs(ed.UUIDs(c)), uuidsOf(old[c]); !slices.Equal(got, want) {
				t.Errorf("%s: served %v, the active version has %v", c.Name(), got, want)
			}
			if f := "en-US/" + c.File(); !bytes.Equal(files[f], prevFiles[f]) || files[f] == nil {
				t.Errorf("the stored %s is not the active version's", f)
			}
			for loc := range catalog.NumLocales + 1 {
				if !bytes.Equal(apitest.JSON(t, ed.List(c, loc)), apitest.JSON(t, before.List(c, loc))) {
					t.Errorf("%s?language=%s differs from the active version's", c.Name(), langName(loc))
				}
			}
			if cd := cats[c.Name()]; len(cd.Added)+len(cd.Removed)+len(cd.Changed) > 0 {
				t.Errorf("%s carried over, yet the diff says %+v", c.Name(), cd)
			}
		}
	})

	for _, tc := range []struct {
		name   string
		change func(v any) any
		want   func(c catalog.Category) string
	}{
		{"emptied", func(any) any { return []any{} }, func(c catalog.Category) string {
			return fmt.Sprintf("%s at /: emptied: %d items → 0", c.Name(), len(old[c]))
		}},
		{"shrunk", func(v any) any { return v.([]any)[:1] }, func(c catalog.Category) string {
			return c.Name() + " at /: removes "
		}},
	} {
		t.Run("shrink guard: "+tc.name, func(t *testing.T) {
			t.Parallel()
			snap := snapshot(t, func(dir string, c catalog.Category) { edit(t, dir, "en-US/"+c.File(), tc.change) })
			report, err := rejectedImport(t, base, snap, options())
			if !errors.Is(err, pipeline.ErrShrinkGuard) {
				t.Errorf("the rejection does not wrap ErrShrinkGuard: %v", err)
			}
			if !strings.Contains(report, "shrink guard: 5 catalogs lose too many items (publish anyway with --allow-shrink)") {
				t.Errorf("the rejection does not name the shrink guard:\n%s", report)
			}
			for _, c := range newCatalogs {
				if !strings.Contains(report, tc.want(c)) {
					t.Errorf("the report does not say %q:\n%s", tc.want(c), report)
				}
			}
		})
	}
}

// TestUnknownBoundsRefused: a version whose fields openapi.yaml does not
// name pass a bound — nesting (catalog.MaxUnknownDepth), bytes per item
// (MaxUnknownPerItem, in en-US or in a translation), bytes per version
// (MaxUnknownPerVersion) — is refused with a report naming the file, the
// item, the field and the bound, and the store keeps its active version and
// every byte.
func TestUnknownBoundsRefused(t *testing.T) {
	t.Parallel()
	base, _ := baseStore(t, "14")
	good := fixtureDir(t, "15")
	nest := func(depth int) any {
		var v any = "leaf"
		for range depth {
			v = map[string]any{"k": v}
		}
		return v
	}
	text := func(n int) string { return strings.Repeat("x", n-2) } // n bytes of JSON
	firstUUID := func(file string) string { return readItems(t, good, file)[0]["uuid"].(string) }
	mapID, agentID := firstUUID("en-US/maps.json"), firstUUID("en-US/agents.json")
	perVersion := catalog.MaxUnknownPerVersion/catalog.MaxUnknownPerItem + 1

	for _, tc := range []struct {
		name   string
		break_ func(t *testing.T, dir string)
		want   []string
	}{
		{"too deep", func(t *testing.T, d string) {
			edit(t, d, "en-US/maps.json", func(v any) any { item(v, 0)["deep"] = nest(catalog.MaxUnknownDepth + 1); return v })
		}, []string{fmt.Sprintf("en-US/maps.json uuid %s at /0: unknown field deep nests %d levels deep, more than the %d allowed",
			mapID, catalog.MaxUnknownDepth+1, catalog.MaxUnknownDepth)}},
		{"an item past the bound", func(t *testing.T, d string) {
			edit(t, d, "en-US/agents.json", func(v any) any { item(v, 0)["big"] = text(catalog.MaxUnknownPerItem + 1); return v })
		}, []string{fmt.Sprintf("en-US/agents.json uuid %s at /0: unknown fields of %d bytes or more, more than the %d an item may carry (big)",
			agentID, catalog.MaxUnknownPerItem+1, catalog.MaxUnknownPerItem)}},
		{"a translation past the bound", func(t *testing.T, d string) {
			edit(t, d, "de-DE/maps.json", func(v any) any {
				return append([]any{map[string]any{"uuid": mapID, "big": text(catalog.MaxUnknownPerItem + 1)}}, v.([]any)...)
			})
		}, []string{fmt.Sprintf("de-DE/maps.json uuid %s at /0: unknown fields of", mapID), "an item may carry (big)"}},
		{"a version past the bound", func(t *testing.T, d string) {
			edit(t, d, "en-US/playertitles.json", func(v any) any {
				a := v.([]any)
				for i := range perVersion {
					a = append(a, map[string]any{"uuid": fmt.Sprintf("00000000-0000-0000-0000-%012d", i+1), "displayName": "T",
						"titleText": "t", "isHiddenIfNotOwned": false, "assetPath": "a", "big": text(catalog.MaxUnknownPerItem)})
				}
				return a
			})
		}, []string{"(snapshot) at /: unknown fields of", fmt.Sprintf("more than the %d a version may carry", catalog.MaxUnknownPerVersion)}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			snap := filepath.Join(t.TempDir(), "snap")
			copyDir(t, good, snap)
			tc.break_(t, snap)
			report, err := rejectedImport(t, base, snap, options())
			if errors.Is(err, pipeline.ErrShrinkGuard) {
				t.Errorf("a rejection by validation wraps ErrShrinkGuard: %v", err)
			}
			for _, w := range tc.want {
				if !strings.Contains(report, w) {
					t.Errorf("the report does not say %q:\n%s", w, report)
				}
			}
		})
	}
}
