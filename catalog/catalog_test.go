package catalog_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"path"
	"slices"
	"strings"
	"sync"
	"testing"
	"testing/fstest"

	"github.com/getkin/kin-openapi/openapi3"

	"github.com/refdata/refdata/catalog"
	"github.com/refdata/refdata/fixtures"
)

// rendered is embedded version v (a path from fixtures.Versions), rendered once
// per test binary: a Rendered is immutable, and rendering the sample data in 18
// locales is the slow part. Tests must not modify it.
func rendered(t *testing.T, v string) *catalog.Rendered {
	t.Helper()
	load, ok := renders[v]
	if !ok {
		t.Fatalf("no embedded version %s", v)
	}
	r, err := load()
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// renders holds one loader per embedded version, each run at most once.
var renders = func() map[string]func() (*catalog.Rendered, error) {
	m := map[string]func() (*catalog.Rendered, error){}
	for _, v := range fixtures.Versions() {
		m[v] = sync.OnceValues(func() (*catalog.Rendered, error) { return fixtures.Load(v) })
	}
	return m
}()

// dataRendered is sample version v for tests of the data's contents: full-size
// in make stress, which checks every item of the real data; trimmed
// (fixtures.Small: every category and locale, a few items each) with -short
// and under the race detector, where those tests (on one goroutine) find
// nothing in the full data they would not in the trimmed.
func dataRendered(t *testing.T, v string) *catalog.Rendered {
	t.Helper()
	if !raceOn && !testing.Short() {
		return rendered(t, v)
	}
	nn, _, _ := strings.Cut(path.Base(v), "_")
	r, err := fixtures.Small(nn)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// item is the body of item u of category c in locale loc (AllLocales for
// language=all), nil when there is no such item.
func item(r *catalog.Rendered, c catalog.Category, u catalog.UUID, loc int) *catalog.Doc {
	d := r.Tables[c].Items[u]
	if d == nil {
		return nil
	}
	return d[loc]
}

// list is the list body of category c in locale loc.
func list(r *catalog.Rendered, c catalog.Category, loc int) *catalog.Doc {
	return r.Tables[c].List[loc]
}

// TestFixturesMatchSchemas renders every real capture and authored record in the
// fixtures and checks each body — list and item, in every locale and in
// language=all — against its body schema in openapi.yaml (trimmed with -short and -race:
// dataRendered). Each body says the language it holds: its locale's, en-US's
// where it is en-US's body shared, all 18 for language=all.
func TestFixturesMatchSchemas(t *testing.T) {
	t.Parallel()
	doc, err := catalog.Spec()
	if err != nil {
		t.Fatal(err)
	}
	schema := func(name string) *openapi3.Schema {
		ref := doc.Components.Schemas[name]
		if ref == nil || ref.Value == nil {
			t.Fatalf("openapi.yaml has no schema %s", name)
		}
		return ref.Value
	}
	en := catalog.Locales[catalog.DefaultLocale]
	for _, v := range fixtures.Versions() {
		t.Run(v, func(t *testing.T) {
			t.Parallel()
			r := dataRendered(t, v)
			checked := map[*catalog.Doc]bool{}
			check := func(what string, b, enBody *catalog.Doc, loc int, sc *openapi3.Schema) {
				t.Helper()
				if b == nil {
					t.Fatalf("%s: no body", what)
				}
				lang := catalog.AllLanguages
				if loc < catalog.AllLocales {
					lang = catalog.Locales[loc]
				}
				if b.Lang != lang && !(loc < catalog.AllLocales && b == enBody && b.Lang == en) {
					t.Errorf("%s: Lang %q, want %q or en-US's body", what, b.Lang, lang)
				}
				if checked[b] {
					return
				}
				checked[b] = true
				var body any
				if err := json.Unmarshal(b.Bytes(), &body); err != nil {
					t.Fatalf("%s: %v", what, err)
				}
				if err := sc.VisitJSON(body); err != nil {
					t.Errorf("%s: %v", what, err)
				}
			}
			for _, c := range catalog.Categories() {
				if len(r.UUIDs(c)) == 0 {
					t.Errorf("%s: no items", c.Name())
				}
				tb := &r.Tables[c]
				for loc := 0; loc <= catalog.AllLocales; loc++ {
					all := ""
					if loc == catalog.AllLocales {
						all = "All"
					}
					what := fmt.Sprintf("%s (%d)", c.Name(), loc)
					check(what, tb.List[loc], tb.List[catalog.DefaultLocale], loc, schema(c.Schema()+"List"+all+"Body"))
					sc := schema(c.Schema() + all + "Body")
					for _, u := range tb.Order {
						check(what+" "+u.String(), tb.Items[u][loc], tb.Items[u][catalog.DefaultLocale], loc, sc)
					}
				}
			}
			// The version record and the string tables, which hold no
			// item text: Lang is "" for the first two, the locale's for a table.
			for _, tc := range []struct {
				name string
				b    *catalog.Doc
			}{{"VersionBody", r.VersionBody}, {"LocaleSummaryListBody", r.LocresList}} {
				var body any
				if err := json.Unmarshal(tc.b.Bytes(), &body); err != nil {
					t.Fatal(err)
				}
				if err := schema(tc.name).VisitJSON(body); err != nil || tc.b.Lang != "" {
					t.Errorf("%s (Lang %q): %v", tc.name, tc.b.Lang, err)
				}
			}
			for loc := range catalog.Locales {
				check("locres", r.Locres[loc], nil, loc, schema("StringTableBody"))
			}
		})
	}
}

// TestCallouts checks the minimap conversion against values computed here from the
// raw capture: normalized x from world y, normalized y from world x.
func TestCallouts(t *testing.T) {
	t.Parallel()
	raw, err := fixtures.FS.ReadFile(fixtures.Versions()[1] + "/en-US/maps.json")
	if err != nil {
		t.Fatal(err)
	}
	type loc struct{ X, Y float64 }
	type rawMap struct {
		UUID                       string
		XMultiplier, YMultiplier   float64
		XScalarToAdd, YScalarToAdd float64
		Callouts                   []struct {
			RegionName string
			Location   loc
		}
	}
	var in struct{ Data []rawMap }
	if err := json.Unmarshal(raw, &in); err != nil {
		t.Fatal(err)
	}
	r := rendered(t, fixtures.Versions()[1])
	inside, total := 0, 0
	for _, m := range in.Data {
		u, _ := catalog.ParseUUID(m.UUID)
		var out struct{ Data rawMap }
		if err := json.Unmarshal(item(r, catalog.Maps, u, catalog.DefaultLocale).JSON, &out); err != nil {
			t.Fatal(err)
		}
		if len(out.Data.Callouts) != len(m.Callouts) {
			t.Fatalf("%s: %d callouts, want %d", m.UUID, len(out.Data.Callouts), len(m.Callouts))
		}
		for i, c := range m.Callouts {
			want := loc{c.Location.Y*m.XMultiplier + m.XScalarToAdd, c.Location.X*m.YMultiplier + m.YScalarToAdd}
			got := out.Data.Callouts[i].Location
			if math.Abs(got.X-want.X) > 1e-12 || math.Abs(got.Y-want.Y) > 1e-12 {
				t.Errorf("%s %s: %v, want %v", m.UUID, c.RegionName, got, want)
			}
			total++
			if got.X >= 0 && got.X <= 1 && got.Y >= 0 && got.Y <= 1 {
				inside++
			}
		}
	}
	if total == 0 || float64(inside) < 0.98*float64(total) {
		t.Errorf("%d of %d callouts inside the minimap", inside, total)
	}
}

// TestOldShapesFilled: the 2021 captures lack fields the contract has; the edition
// fills them (null where nullable, documented defaults otherwise).
func TestOldShapesFilled(t *testing.T) {
	t.Parallel()
	r := rendered(t, fixtures.Versions()[1])
	var v struct{ Data map[string]any }
	if err := json.Unmarshal(r.VersionBody.JSON, &v); err != nil {
		t.Fatal(err)
	}
	for field, want := range map[string]any{
		"publisherClientVersion": "release-03.10-shipping-19-639263",
		"riotClientVersion":      "release-03.10-shipping-19-639263",
		"engineVersion":          "",
		"publisherClientBuild":   "",
		"riotClientBuild":        "",
	} {
		if v.Data[field] != want {
			t.Errorf("version %s = %#v, want %#v", field, v.Data[field], want)
		}
	}
	for _, tc := range []struct {
		c     catalog.Category
		field string
		want  any
	}{
		{catalog.Maps, "premierBackgroundImage", nil},
		{catalog.Maps, "narrativeDescription", nil},
		{catalog.Seasons, "title", ""},
		{catalog.BuddyLevels, "hideIfNotOwned", false},
	} {
		for _, u := range r.UUIDs(tc.c) {
			var it struct{ Data map[string]any }
			if err := json.Unmarshal(item(r, tc.c, u, catalog.DefaultLocale).JSON, &it); err != nil {
				t.Fatal(err)
			}
			got, ok := it.Data[tc.field]
			if !ok || got != tc.want {
				t.Fatalf("%s %s: %s = %#v (present %v), want %#v", tc.c.Name(), u, tc.field, got, ok, tc.want)
			}
		}
		if r.Fills[catalog.Fill{Schema: tc.c.Schema(), Field: tc.field, Value: fmtValue(tc.want)}] == 0 {
			t.Errorf("fill of %s.%s not counted: %v", tc.c.Schema(), tc.field, r.Fills)
		}
	}
}

func fmtValue(v any) string {
	if v == nil {
		return "<nil>"
	}
	b, _ := json.Marshal(v)
	s := string(b)
	if s == `""` {
		return ""
	}
	return s
}

func TestParseUUID(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		in string
		ok bool
	}{
		{"63e6c2b6-4a8e-869c-3d4c-e38355226584", true},
		{"63E6C2B6-4A8E-869C-3D4C-E38355226584", true},
		{"63e6c2b64a8e869c3d4ce38355226584", false},
		{"{63e6c2b6-4a8e-869c-3d4c-e38355226584}", false},
		{"63e6c2b6-4a8e-869c-3d4c-e3835522658g", false},
		{"63e6c2b6-4a8e-869c-3d4c_e38355226584", false},
		{"../../../../etc/passwd", false},
		{"", false},
	} {
		u, ok := catalog.ParseUUID(tc.in)
		if ok != tc.ok {
			t.Errorf("ParseUUID(%q) ok = %v", tc.in, ok)
		}
		if ok && u.String() != "63e6c2b6-4a8e-869c-3d4c-e38355226584" {
			t.Errorf("ParseUUID(%q) = %s", tc.in, u)
		}
	}
}

func TestParseLocale(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		in   string
		want string
	}{
		{"en-US", "en-US"}, {"de-de", "de-DE"}, {"ZH-tw", "zh-TW"}, {"de", ""}, {"en_US", ""}, {"", ""},
	} {
		i, ok := catalog.ParseLocale(tc.in)
		got := ""
		if ok {
			got = catalog.Locales[i]
		}
		if got != tc.want {
			t.Errorf("ParseLocale(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

// TestTranslationsShareUntranslatedBodies: a locale with no text for a body serves
// the en-US body itself, so memory is not spent 18 times over.
func TestTranslationsShareUntranslatedBodies(t *testing.T) {
	t.Parallel()
	r := rendered(t, fixtures.Versions()[1])
	en := catalog.DefaultLocale
	ja, _ := catalog.ParseLocale("ja-JP")
	ar, _ := catalog.ParseLocale("ar-AE")
	if list(r, catalog.Themes, ja) != list(r, catalog.Themes, en) {
		t.Error("untranslated themes list is not shared with en-US")
	}
	if list(r, catalog.Weapons, ja) == list(r, catalog.Weapons, en) || list(r, catalog.Weapons, ja).Lang != "ja-JP" {
		t.Error("translated weapons list is shared with en-US")
	}
	if list(r, catalog.Maps, ar) != list(r, catalog.Maps, en) {
		t.Error("ar-AE has no map translations but does not share the en-US body")
	}
	// A weapon whose skins no locale names differently keeps one body.
	shared := 0
	for _, u := range r.UUIDs(catalog.WeaponSkinLevels) {
		if item(r, catalog.WeaponSkinLevels, u, ar) == item(r, catalog.WeaponSkinLevels, u, en) {
			shared++
		}
	}
	if shared == 0 {
		t.Error("no ar-AE skin level body is shared with en-US, though some names are the same")
	}
	// A body is shared only where it is en-US's bytes, and every shared
	// body is shared: no locale holds a copy of en-US's.
	for _, c := range catalog.Categories() {
		for _, u := range r.UUIDs(c) {
			for loc := range catalog.Locales {
				b, e := item(r, c, u, loc), item(r, c, u, en)
				if (b == e) != bytes.Equal(b.Bytes(), e.Bytes()) {
					t.Fatalf("%s %s %s: shared %v, equal bytes %v", c.Name(), u, catalog.Locales[loc], b == e, bytes.Equal(b.Bytes(), e.Bytes()))
				}
			}
		}
	}
	// Docs lists each body once.
	docs := r.Docs()
	seen := map[*catalog.Doc]bool{}
	for _, d := range docs {
		if seen[d] {
			t.Fatal("Docs lists a body twice")
		}
		seen[d] = true
	}
	if !seen[r.VersionBody] || !seen[r.LocresList] || !seen[list(r, catalog.Weapons, ja)] || !seen[list(r, catalog.Weapons, catalog.AllLocales)] {
		t.Error("Docs lacks the version record, the locres list or a weapons list")
	}
}

// TestLanguageAll: a language=all body holds, for each localized text, the text of
// every locale's own body; other fields are the en-US ones.
func TestLanguageAll(t *testing.T) {
	t.Parallel()
	r := rendered(t, fixtures.Versions()[1])
	type it struct {
		Uuid        string
		DisplayName json.RawMessage
		AssetPath   string
	}
	decode := func(b *catalog.Doc) []it {
		var env struct{ Data []it }
		if err := json.Unmarshal(b.Bytes(), &env); err != nil {
			t.Fatal(err)
		}
		return env.Data
	}
	for _, c := range []catalog.Category{catalog.Weapons, catalog.WeaponSkins, catalog.WeaponSkinLevels, catalog.Agents, catalog.Sprays} {
		all := decode(list(r, c, catalog.AllLocales))
		if len(all) == 0 {
			t.Fatalf("%s: empty", c.Name())
		}
		for loc, lang := range catalog.Locales {
			one := decode(list(r, c, loc))
			for i := range all {
				var names map[string]string
				if err := json.Unmarshal(all[i].DisplayName, &names); err != nil || len(names) != catalog.NumLocales {
					t.Fatalf("%s %s: displayName %s is not an object of %d locales", c.Name(), all[i].Uuid, all[i].DisplayName, catalog.NumLocales)
				}
				var want string
				_ = json.Unmarshal(one[i].DisplayName, &want)
				if names[lang] != want || all[i].AssetPath != one[i].AssetPath {
					t.Errorf("%s %s: %s is %q, want %q", c.Name(), all[i].Uuid, lang, names[lang], want)
				}
			}
		}
	}
	if list(r, catalog.Weapons, catalog.AllLocales).Lang != catalog.AllLanguages {
		t.Errorf("Content-Language %q", list(r, catalog.Weapons, catalog.AllLocales).Lang)
	}
}

// TestRenderFiles: rendering a store's files gives the same bodies, sharing
// alike, whichever goroutine renders which locale (twice, compared), with the
// files' content hash; Render of a snapshot alone leaves the hash to its
// caller. A Rendered is the Items a diff reads: the en-US body in a locale
// without text of its own is marked as such.
func TestRenderFiles(t *testing.T) {
	t.Parallel()
	files, err := fixtures.Files(fixtures.Versions()[1], true)
	if err != nil {
		t.Fatal(err)
	}
	a, err := catalog.RenderFiles(files)
	if err != nil {
		t.Fatal(err)
	}
	b, err := catalog.RenderFiles(files)
	if err != nil {
		t.Fatal(err)
	}
	if a.ContentHash != catalog.FilesHash(files) || a.ContentHash == "" || a.ManifestID == "" || a.ID() != a.ManifestID {
		t.Errorf("content hash %q (want %q), manifest %q", a.ContentHash, catalog.FilesHash(files), a.ManifestID)
	}
	da, db := a.Docs(), b.Docs()
	if len(da) != len(db) || len(da) < 3*int(catalog.NumCategories) {
		t.Fatalf("%d and %d bodies", len(da), len(db))
	}
	index := map[*catalog.Doc]int{}
	for i, d := range da {
		index[d] = i
		if !bytes.Equal(d.Bytes(), db[i].Bytes()) || d.Lang != db[i].Lang {
			t.Fatalf("body %d differs between two renders", i)
		}
	}
	for c := range a.Tables {
		for loc := range a.Tables[c].List {
			if index[a.Tables[c].List[loc]] != slices.Index(db, b.Tables[c].List[loc]) {
				t.Fatalf("%s (%d): shared differently in two renders", catalog.Category(c).Name(), loc)
			}
		}
	}
	s, err := catalog.LoadFiles(files)
	if err != nil {
		t.Fatal(err)
	}
	catalog.Repair(s)
	if r, err := catalog.Render(s); err != nil || r.ContentHash != "" || len(r.Docs()) != len(da) {
		t.Errorf("Render: hash %q, %v", r.ContentHash, err)
	}

	ar, _ := catalog.ParseLocale("ar-AE")
	u := a.UUIDs(catalog.Maps)[0]
	if body, english, _ := a.ItemJSON(catalog.Maps, u, ar); !english || !bytes.Equal(body, item(a, catalog.Maps, u, catalog.DefaultLocale).JSON) {
		t.Errorf("ar-AE map: english %v", english)
	}
	if _, english, _ := a.ItemJSON(catalog.Maps, u, catalog.DefaultLocale); english {
		t.Error("the en-US body is marked as another locale's")
	}
	ja, _ := catalog.ParseLocale("ja-JP")
	if body, english, _ := a.ItemJSON(catalog.Maps, u, ja); english || !bytes.Equal(body, item(a, catalog.Maps, u, ja).JSON) {
		t.Errorf("ja-JP map: english %v", english)
	}
	if body, english, _ := a.ItemJSON(catalog.Maps, catalog.UUID{}, catalog.DefaultLocale); body != nil || english {
		t.Error("a missing item has a body")
	}
}

// TestLoadSnapshotReportsFirstError: the files are read in parallel, but of
// several broken files the one reported is the first a sequential read would
// meet: version.json, the en-US catalogs, then locale by locale its catalogs
// and its string table. Missing files are no error.
func TestLoadSnapshotReportsFirstError(t *testing.T) {
	t.Parallel()
	src := catalog.SourceCategories()
	first, second := src[0].File(), src[1].File()
	for _, tc := range []struct {
		broken []string
		want   string
	}{
		{[]string{"de-DE/" + first, "en-US/" + second}, "en-US/" + second},
		{[]string{"en-US/" + second, "en-US/" + first}, "en-US/" + first},
		{[]string{"locres/ar-AE.json", "ar-AE/" + second}, "ar-AE/" + second},
		{[]string{"de-DE/" + first, "locres/ar-AE.json"}, "locres/ar-AE.json"},
		{[]string{"zh-TW/" + first, "locres/zh-CN.json", "version.json"}, "version.json"},
		{nil, ""},
	} {
		fsys := fstest.MapFS{
			"version.json":           {Data: []byte(`{"manifestId":"000000000000000A"}`)},
			"en-US/" + first:         {Data: []byte(`[]`)},
			"de-DE/" + second:        {Data: []byte(`{"status":200,"data":[]}`)},
			"locres/de-DE.json":      {Data: []byte(`{"ns":{"k":"v"}}`)},
			"locres/" + "ja-JP.json": {Data: []byte(`{}`)},
		}
		for _, name := range tc.broken {
			fsys[name] = &fstest.MapFile{Data: []byte(`{"status":200,"data":[`)}
		}
		// Often enough that a report in completion order would show.
		for range 20 {
			s, err := catalog.LoadSnapshot(fsys, ".")
			var fe *catalog.FileError
			switch {
			case tc.want == "" && err != nil:
				t.Fatalf("%v: %v", tc.broken, err)
			case tc.want == "":
				if s.Sources[src[0]] == nil || s.Overlays["de-DE"][src[1]] == nil || s.Locres["de-DE"]["ns"]["k"] != "v" || s.Sources[src[1]] != nil || s.Locres["ar-AE"] != nil {
					t.Fatalf("snapshot %+v", s)
				}
			case !errors.As(err, &fe) || fe.File != tc.want:
				t.Fatalf("%v broken: error %v, want one naming %s", tc.broken, err, tc.want)
			}
		}
	}
}
