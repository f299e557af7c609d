package catalog_test

import (
	"bytes"
	"encoding/json"
	"slices"
	"strings"
	"testing"
	"testing/fstest"
	"time"

	"github.com/refdata/refdata/catalog"
	"github.com/refdata/refdata/fixtures"
	"github.com/refdata/refdata/gen"
)

// tiny is one version with two player titles and one map; each field is spliced
// in as raw JSON so a test can vary its spelling.
type tiny struct {
	title, xMul, deTitle string
	// mapExtra and deMapExtra are fields added to the map, in en-US and in
	// de-DE's translation (",\"k\":v" each); callouts is the map's callouts.
	mapExtra, deMapExtra, callouts string
}

var tinyBase = tiny{title: "Old", xMul: "12", deTitle: "Gleich", callouts: "null"}

// render validates and renders t as version id.
func (tv tiny) render(t *testing.T, id string) *catalog.Rendered {
	t.Helper()
	fsys := fstest.MapFS{
		"version.json": {Data: []byte(`{"manifestId":"` + id + `","branch":"b","version":"v","buildVersion":"1","buildDate":"2021-01-01"}`)},
		"en-US/playertitles.json": {Data: []byte(`[
			{"uuid":"00000000-0000-0000-0000-000000000001","displayName":"` + tv.title + `","titleText":"t","isHiddenIfNotOwned":false,"assetPath":"a"},
			{"uuid":"00000000-0000-0000-0000-000000000002","displayName":"Same","titleText":"t","isHiddenIfNotOwned":false,"assetPath":"a"}]`)},
		"en-US/maps.json": {Data: []byte(`[{"uuid":"00000000-0000-0000-0000-0000000000aa","displayName":"M","coordinates":null,
			"displayIcon":null,"listViewIcon":"u","splash":"u","assetPath":"a","mapUrl":"m",
			"xMultiplier":` + tv.xMul + `,"yMultiplier":1,"xScalarToAdd":0,"yScalarToAdd":0,"callouts":` + tv.callouts + tv.mapExtra + `}]`)},
		"de-DE/playertitles.json": {Data: []byte(`[{"uuid":"00000000-0000-0000-0000-000000000002","displayName":"` + tv.deTitle + `"}]`)},
		"de-DE/maps.json":         {Data: []byte(`[{"uuid":"00000000-0000-0000-0000-0000000000aa","displayName":"K"` + tv.deMapExtra + `}]`)},
	}
	snap, err := catalog.LoadSnapshot(fsys, ".")
	if err != nil {
		t.Fatal(err)
	}
	v, err := catalog.Validate(snap)
	if err != nil || len(v.Rejections) > 0 {
		t.Fatalf("tiny snapshot invalid: %v %v", err, v.Rejections)
	}
	r, err := catalog.Render(snap)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func TestDiffFields(t *testing.T) {
	t.Parallel()
	a := tinyBase.render(t, "000000000000000A")
	with := func(f func(*tiny)) tiny {
		tv := tinyBase
		f(&tv)
		return tv
	}
	tests := []struct {
		name        string
		b           tiny
		wantChanged []string // "uuid-suffix:fields"
	}{
		{"nothing changes", tinyBase, nil},
		{"numbers compare by value", with(func(tv *tiny) { tv.xMul = "12.0" }), nil},
		{"a number changes", with(func(tv *tiny) { tv.xMul = "12.5" }), []string{"aa:xMultiplier"}},
		{"en-US text changes", with(func(tv *tiny) { tv.title = "New" }), []string{"01:displayName"}},
		{"only a translation changes", with(func(tv *tiny) { tv.deTitle = "Anders" }), []string{"02:displayName"}},
		{"an unknown field appears", with(func(tv *tiny) { tv.mapExtra = `,"background":"b"` }), []string{"aa:background"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			d, err := catalog.Diff(a, tc.b.render(t, "000000000000000B"), time.Unix(0, 0))
			if err != nil {
				t.Fatal(err)
			}
			if got := changed(d.Categories.Playertitles.Changed, d.Categories.Maps.Changed); !slices.Equal(got, tc.wantChanged) || d.Summary.TotalChanged != len(tc.wantChanged) {
				t.Errorf("changed = %q (total %d), want %q", got, d.Summary.TotalChanged, tc.wantChanged)
			}
			if d.Categories.Weapons.Added == nil || d.Categories.Weapons.Changed == nil || d.FromVersion != "000000000000000A" || d.ToVersion != "000000000000000B" {
				t.Errorf("empty categories must be empty arrays, not null: %+v", d.Categories.Weapons)
			}
		})
	}
}

// TestDiffUnknownFields: a field openapi.yaml does not describe is served,
// so a change of its value alone, top-level or nested, in en-US or only in a
// translation, is a change of that top-level field; the same value is none.
func TestDiffUnknownFields(t *testing.T) {
	t.Parallel()
	const callouts = `[{"regionName":"A","superRegionName":"S","location":{"x":1,"y":2},"hint":%s}]`
	base := tinyBase
	base.mapExtra = `,"background":"old","tags":{"season":1}`
	base.deMapExtra = `,"background":"alt"`
	base.callouts = strings.Replace(callouts, "%s", `"h"`, 1)
	a := base.render(t, "000000000000000A")
	for _, tc := range []struct {
		name        string
		f           func(*tiny)
		wantChanged []string
	}{
		{"same values", func(*tiny) {}, nil},
		{"an unknown text changes", func(tv *tiny) { tv.mapExtra = `,"background":"new","tags":{"season":1}` }, []string{"aa:background"}},
		{"a nested unknown value changes", func(tv *tiny) { tv.mapExtra = `,"background":"old","tags":{"season":2}` }, []string{"aa:tags"}},
		{"an unknown field in an array changes", func(tv *tiny) { tv.callouts = strings.Replace(callouts, "%s", `"i"`, 1) }, []string{"aa:callouts"}},
		{"only its translation changes", func(tv *tiny) { tv.deMapExtra = `,"background":"anders"` }, []string{"aa:background"}},
		{"an unknown field goes", func(tv *tiny) { tv.mapExtra = `,"background":"old"` }, []string{"aa:tags"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			tv := base
			tc.f(&tv)
			d, err := catalog.Diff(a, tv.render(t, "000000000000000B"), time.Unix(0, 0))
			if err != nil {
				t.Fatal(err)
			}
			if got := changed(d.Categories.Playertitles.Changed, d.Categories.Maps.Changed); !slices.Equal(got, tc.wantChanged) || d.Summary.TotalChanged != len(tc.wantChanged) {
				t.Errorf("changed = %q (total %d), want %q", got, d.Summary.TotalChanged, tc.wantChanged)
			}
		})
	}
}

// changed lists changed items as "uuid-suffix:fields".
func changed(lists ...[]gen.ChangedItem) []string {
	var got []string
	for _, l := range lists {
		for _, ch := range l {
			got = append(got, ch.Uuid[len(ch.Uuid)-2:]+":"+strings.Join(ch.Fields, ","))
		}
	}
	return got
}

// TestDiffFollowsBodies: on the two sample versions, an item is changed
// exactly where one of its bodies differs in some locale, added and removed
// exactly where one version lacks it; the versions have items of each kind,
// and items unchanged render to the same bytes in both (trimmed under -race).
func TestDiffFollowsBodies(t *testing.T) {
	t.Parallel()
	vs := fixtures.Versions()
	old, cur := dataRendered(t, vs[0]), dataRendered(t, vs[1])
	at := time.Date(2021, 8, 1, 0, 0, 0, 0, time.FixedZone("x", 3600))
	d, err := catalog.Diff(old, cur, at)
	if err != nil {
		t.Fatal(err)
	}
	if d.FromVersion != old.ManifestID || d.ToVersion != cur.ManifestID || d.GeneratedAt != "2021-07-31T23:00:00Z" {
		t.Errorf("diff %s → %s at %s", d.FromVersion, d.ToVersion, d.GeneratedAt)
	}
	// Every category, by its name, as the diff body holds them.
	var byName map[string]gen.CategoryDiff
	if b, err := json.Marshal(d.Categories); err != nil {
		t.Fatal(err)
	} else if err := json.Unmarshal(b, &byName); err != nil {
		t.Fatal(err)
	}
	if len(byName) != len(catalog.Categories()) {
		t.Errorf("%d categories in the diff, want %d", len(byName), len(catalog.Categories()))
	}
	var same, changedItems, added, removed int
	for name, cd := range byName {
		c, ok := catalog.CategoryNamed(name)
		if !ok {
			t.Fatalf("no category %s", name)
		}
		isChanged := map[string]bool{}
		for _, ch := range cd.Changed {
			isChanged[ch.Uuid] = true
		}
		isAdded := map[string]bool{}
		for _, u := range cd.Added {
			isAdded[u] = true
		}
		for _, u := range cur.UUIDs(c) {
			if old.Tables[c].Items[u] == nil {
				if !isAdded[u.String()] {
					t.Errorf("%s %s: new, not added", name, u)
				}
				added++
				continue
			}
			differs := false
			for loc := range catalog.Locales {
				if !bytes.Equal(item(old, c, u, loc).JSON, item(cur, c, u, loc).JSON) {
					differs = true
				}
			}
			if differs != isChanged[u.String()] {
				t.Errorf("%s %s: bodies differ %v, changed %v", name, u, differs, isChanged[u.String()])
			}
			if differs {
				changedItems++
			} else {
				same++
			}
		}
		for _, u := range old.UUIDs(c) {
			if cur.Tables[c].Items[u] == nil {
				if !slices.Contains(cd.Removed, u.String()) {
					t.Errorf("%s %s: gone, not removed", name, u)
				}
				removed++
			}
		}
		if n := len(cur.UUIDs(c)) - len(old.UUIDs(c)); n != len(cd.Added)-len(cd.Removed) {
			t.Errorf("%s: %d items more, but %d added and %d removed", name, n, len(cd.Added), len(cd.Removed))
		}
	}
	if same == 0 || changedItems == 0 || added == 0 {
		t.Errorf("%d same, %d changed, %d added, %d removed: the sample versions should have each but removed", same, changedItems, added, removed)
	}
	if bytes.Equal(old.VersionBody.JSON, cur.VersionBody.JSON) {
		t.Error("different version records render the same body")
	}
}
