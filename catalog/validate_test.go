package catalog_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"reflect"
	"slices"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/refdata/refdata/catalog"
	"github.com/refdata/refdata/fixtures"
)

func TestValidateReportsProblems(t *testing.T) {
	t.Parallel()
	fsys := fstest.MapFS{
		"version.json": {Data: []byte(`{"manifestId":"abc","branch":"b","version":"v","buildVersion":"1","buildDate":"d"}`)},
		"en-US/playertitles.json": {Data: []byte(`[
			{"uuid":"00000000-0000-0000-0000-000000000001","displayName":"A","titleText":null,"isHiddenIfNotOwned":"no","assetPath":"a","newField":1},
			{"uuid":"00000000-0000-0000-0000-000000000001","displayName":"B","titleText":"t","isHiddenIfNotOwned":false,"assetPath":"a"},
			{"displayName":"C","titleText":"t","isHiddenIfNotOwned":false,"assetPath":"a"}]`)},
	}
	snap, err := catalog.LoadSnapshot(fsys, ".")
	if err != nil {
		t.Fatal(err)
	}
	v, err := catalog.Validate(snap)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, p := range v.Rejections {
		got = append(got, p.File+" "+p.Pointer)
	}
	for _, want := range []string{"version.json /manifestId", "en-US/playertitles.json /0/isHiddenIfNotOwned", "en-US/playertitles.json /1/uuid", "en-US/playertitles.json /2/uuid"} {
		if !slices.Contains(got, want) {
			t.Errorf("no rejection at %s; got %q", want, got)
		}
	}
	// An unknown field is reported, not rejected.
	for _, p := range v.Rejections {
		if strings.Contains(p.Pointer, "newField") || strings.Contains(p.Reason, "newField") {
			t.Errorf("unknown field rejected: %v", p)
		}
	}
	want := []catalog.Unknown{{Category: catalog.PlayerTitles, Field: "newField", Items: 1, Example: "00000000-0000-0000-0000-000000000001"}}
	if !reflect.DeepEqual(v.Unknown, want) {
		t.Errorf("unknown = %+v, want %+v", v.Unknown, want)
	}
	if s := v.Unknown[0].String(); s != "playertitles: newField in 1 items (e.g. 00000000-0000-0000-0000-000000000001)" {
		t.Errorf("Unknown.String() = %q", s)
	}
}

// TestValidateReportsUnknownOncePerCatalog: each field openapi.yaml does not
// describe is one Unknown per catalog, wherever it is in the items (nested
// ones by their path), with the number of items carrying it and the first
// one's uuid, in catalog and field order; such items are not rejected.
func TestValidateReportsUnknownOncePerCatalog(t *testing.T) {
	t.Parallel()
	const (
		m1, m2, m3 = "00000000-0000-0000-0000-0000000000a1", "00000000-0000-0000-0000-0000000000a2", "00000000-0000-0000-0000-0000000000a3"
		p1, p2     = "00000000-0000-0000-0000-000000000001", "00000000-0000-0000-0000-000000000002"
	)
	mapItem := func(uuid, extra, calloutExtra string) string {
		return `{"uuid":"` + uuid + `","displayName":"M","narrativeDescription":null,"tacticalDescription":null,"coordinates":null,
			"displayIcon":null,"listViewIcon":"u","listViewIconTall":null,"splash":"u","stylizedBackgroundImage":null,"premierBackgroundImage":null,
			"assetPath":"a","mapUrl":"m","xMultiplier":1,"yMultiplier":1,"xScalarToAdd":0,"yScalarToAdd":0,
			"callouts":[{"regionName":"A","superRegionName":"S","location":{"x":1,"y":2}` + calloutExtra + `},
				{"regionName":"B","superRegionName":"S","location":{"x":1,"y":2,"z":3}` + calloutExtra + `}]` + extra + `}`
	}
	title := func(uuid, extra string) string {
		return `{"uuid":"` + uuid + `","displayName":"T","titleText":"t","isHiddenIfNotOwned":false,"assetPath":"a"` + extra + `}`
	}
	fsys := fstest.MapFS{
		"version.json": {Data: []byte(`{"manifestId":"000000000000000A","branch":"b","version":"v","buildVersion":"1","buildDate":"d"}`)},
		"en-US/maps.json": {Data: []byte(`[` +
			mapItem(m1, `,"background":"x"`, `,"hint":"h"`) + `,` +
			mapItem(m2, `,"background":"y","art":{"a":[1,2]}`, ``) + `,` +
			mapItem(m3, ``, `,"hint":"i"`) + `]`)},
		"en-US/playertitles.json": {Data: []byte(`[` + title(p1, ``) + `,` + title(p2, `,"background":"z"`) + `]`)},
	}
	snap, err := catalog.LoadSnapshot(fsys, ".")
	if err != nil {
		t.Fatal(err)
	}
	v, err := catalog.Validate(snap)
	if err != nil {
		t.Fatal(err)
	}
	if len(v.Rejections) > 0 {
		t.Errorf("rejections: %v", v.Rejections)
	}
	want := []catalog.Unknown{
		{Category: catalog.Maps, Field: "art", Items: 1, Example: m2},
		{Category: catalog.Maps, Field: "background", Items: 2, Example: m1},
		{Category: catalog.Maps, Field: "callouts[].hint", Items: 2, Example: m1},
		{Category: catalog.Maps, Field: "callouts[].location.z", Items: 3, Example: m1},
		{Category: catalog.PlayerTitles, Field: "background", Items: 1, Example: p2},
	}
	if !reflect.DeepEqual(v.Unknown, want) {
		t.Errorf("unknown\n%+v\nwant\n%+v", v.Unknown, want)
	}
}

// TestUnknownBounds: past MaxUnknownDepth, MaxUnknownPerItem or
// MaxUnknownPerVersion, Validate rejects the item (or the version) and says
// which bound and which field; at the bound it accepts. A translation's own
// unknown fields, served in its locale, are bounded alike.
func TestUnknownBounds(t *testing.T) {
	t.Parallel()
	nest := func(depth int) any { // an object nesting depth levels
		var v any = "leaf"
		for range depth {
			v = map[string]any{"k": v}
		}
		return v
	}
	// text of n bytes of JSON as the bound counts them (its quotes included).
	text := func(n int) string { return strings.Repeat("x", n-2) }
	one := func(k string, v any) []any { return []any{map[string]any{k: v}} }
	atBound := func(n int) []any { // n items, each with MaxUnknownPerItem bytes
		items := make([]any, n)
		for i := range items {
			items[i] = map[string]any{"big": text(catalog.MaxUnknownPerItem)}
		}
		return items
	}
	perVersion := catalog.MaxUnknownPerVersion/catalog.MaxUnknownPerItem + 1
	const titles, deTitles = "en-US/playertitles.json", "de-DE/playertitles.json"
	for _, tc := range []struct {
		name   string
		en, de []any    // unknown fields of each en-US item, of each de-DE partial item
		want   []string // in the one rejection's reason; none when nil
		file   string
	}{
		{"deep at the bound", one("deep", nest(catalog.MaxUnknownDepth)), nil, nil, ""},
		{"too deep", one("deep", nest(catalog.MaxUnknownDepth+1)), nil,
			[]string{"unknown field deep", fmt.Sprintf("nests %d levels", catalog.MaxUnknownDepth+1), fmt.Sprint(catalog.MaxUnknownDepth)}, titles},
		{"nested too deep", one("callouts", []any{map[string]any{"regionName": "A", "superRegionName": "S", "location": map[string]any{"x": 1.0, "y": 2.0}, "deep": nest(catalog.MaxUnknownDepth + 1)}}), nil,
			[]string{"unknown field callouts[].deep", "nests"}, "en-US/maps.json"},
		{"an item at the bound", one("big", text(catalog.MaxUnknownPerItem)), nil, nil, ""},
		{"an item past the bound", one("big", text(catalog.MaxUnknownPerItem+1)), nil,
			[]string{fmt.Sprint(catalog.MaxUnknownPerItem), "an item may carry", "big"}, titles},
		{"an item's fields together past the bound", []any{map[string]any{"a": text(catalog.MaxUnknownPerItem / 2), "b": text(catalog.MaxUnknownPerItem/2 + 1)}}, nil,
			[]string{fmt.Sprint(catalog.MaxUnknownPerItem), "an item may carry"}, titles},
		{"a version at the bound", atBound(perVersion - 1), nil, nil, ""},
		{"a version past the bound", atBound(perVersion), nil,
			[]string{fmt.Sprint(catalog.MaxUnknownPerVersion), "a version may carry"}, "(snapshot)"},
		{"a translation at the bound", nil, one("big", text(catalog.MaxUnknownPerItem)), nil, ""},
		{"a translation too deep", nil, one("deep", nest(catalog.MaxUnknownDepth+1)),
			[]string{"unknown field deep", "nests"}, deTitles},
		{"a translation past the item bound", nil, one("big", text(catalog.MaxUnknownPerItem+1)),
			[]string{"an item may carry", "big"}, deTitles},
		{"a version past the bound with its translations", atBound(perVersion / 2), atBound(perVersion - perVersion/2),
			[]string{"a version may carry"}, "(snapshot)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			s := boundsSnapshot(t, strings.Contains(tc.file, "maps"), tc.en, tc.de)
			v, err := catalog.Validate(s)
			if err != nil {
				t.Fatal(err)
			}
			if tc.want == nil {
				if len(v.Rejections) > 0 {
					t.Errorf("rejected at the bound: %v", v.Rejections)
				}
				if tc.en != nil && len(v.Unknown) != 1 {
					t.Errorf("unknown %v, want one field", v.Unknown)
				}
				return
			}
			if len(v.Rejections) != 1 {
				t.Fatalf("%d rejections, want 1: %v", len(v.Rejections), v.Rejections)
			}
			p := v.Rejections[0]
			for _, w := range tc.want {
				if !strings.Contains(p.Reason, w) {
					t.Errorf("reason %q lacks %q", p.Reason, w)
				}
			}
			if p.File != tc.file {
				t.Errorf("rejection in %s, want %s", p.File, tc.file)
			}
			if tc.file != "(snapshot)" && (p.UUID == "" || p.Pointer != "/0") {
				t.Errorf("rejection does not name the item: %v", p)
			}
		})
	}
}

// boundsSnapshot is a valid snapshot of player titles (with maps, maps) whose
// item i carries the fields en[i], and whose de-DE translation of item i the
// fields de[i].
func boundsSnapshot(t *testing.T, isMap bool, en, de []any) *catalog.Snapshot {
	t.Helper()
	var items, over []any
	for i := range max(len(en), len(de)) {
		id := fmt.Sprintf("00000000-0000-0000-0000-%012d", i+1)
		it := map[string]any{"uuid": id, "displayName": "T", "titleText": "t", "isHiddenIfNotOwned": false, "assetPath": "a"}
		if isMap {
			it = map[string]any{"uuid": id, "displayName": "M", "narrativeDescription": nil, "tacticalDescription": nil,
				"coordinates": nil, "displayIcon": nil, "listViewIcon": "u", "listViewIconTall": nil, "splash": "u", "stylizedBackgroundImage": nil,
				"premierBackgroundImage": nil, "assetPath": "a", "mapUrl": "m", "xMultiplier": 1.0, "yMultiplier": 1.0, "xScalarToAdd": 0.0, "yScalarToAdd": 0.0, "callouts": nil}
		}
		if i < len(en) {
			maps.Copy(it, en[i].(map[string]any))
		}
		items = append(items, it)
		if i < len(de) {
			p := map[string]any{"uuid": id, "displayName": "Titel"}
			maps.Copy(p, de[i].(map[string]any))
			over = append(over, p)
		}
	}
	c := catalog.PlayerTitles
	if isMap {
		c = catalog.Maps
	}
	var version map[string]any
	if err := json.Unmarshal([]byte(`{"manifestId":"000000000000000A","branch":"b","version":"v","buildVersion":"1","buildDate":"d"}`), &version); err != nil {
		t.Fatal(err)
	}
	s := &catalog.Snapshot{Version: version, Sources: map[catalog.Category][]any{c: items}}
	if over != nil {
		s.Overlays = map[string]map[catalog.Category][]any{"de-DE": {c: over}}
	}
	return s
}

// TestValidateLeavesSnapshot: Validate checks copies: the snapshot it was given
// is what it was (the import renders it next), so rendering after validating
// gives the bytes rendering alone gives — the maps' callouts converted once,
// translated maps included (trimmed sample, with a map translated).
func TestValidateLeavesSnapshot(t *testing.T) {
	t.Parallel()
	files, err := fixtures.Files(fixtures.Versions()[1], true)
	if err != nil {
		t.Fatal(err)
	}
	load := func() *catalog.Snapshot {
		s, err := catalog.LoadFiles(files)
		if err != nil {
			t.Fatal(err)
		}
		catalog.Repair(s)
		for _, it := range s.Sources[catalog.Maps] {
			m := it.(map[string]any)
			if c, _ := m["callouts"].([]any); len(c) > 0 {
				s.Overlays["de-DE"][catalog.Maps] = []any{map[string]any{"uuid": m["uuid"], "displayName": "Karte"}}
				return s
			}
		}
		t.Fatal("the sample has no map with callouts")
		return nil
	}
	s, before := load(), load()
	if _, err := catalog.Validate(s); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(s, before) {
		t.Error("Validate modified the snapshot")
	}
	r, err := catalog.Render(s)
	if err != nil {
		t.Fatal(err)
	}
	alone, err := catalog.Render(load())
	if err != nil {
		t.Fatal(err)
	}
	a, b := r.Docs(), alone.Docs()
	if len(a) != len(b) {
		t.Fatalf("%d bodies after Validate, %d without", len(a), len(b))
	}
	for i := range a {
		if !bytes.Equal(a[i].Bytes(), b[i].Bytes()) || a[i].Lang != b[i].Lang {
			t.Fatalf("body %d differs after Validate:\n%.300s\n%.300s", i, a[i].Bytes(), b[i].Bytes())
		}
	}
}
