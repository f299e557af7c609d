package catalog_test

import (
	"encoding/json"
	"io/fs"
	"math"
	"os"
	"path"
	"strings"
	"sync"
	"testing"

	"github.com/refdata/refdata/catalog"
	"github.com/refdata/refdata/fixtures"
	"github.com/refdata/refdata/representation"
)

// build renders an embedded version once per test binary: editions are
// immutable, and rendering the sample data in 18 locales is the slow part.
func build(t *testing.T, version string) *catalog.Edition {
	t.Helper()
	builtMu.Lock()
	defer builtMu.Unlock()
	if ed := built[version]; ed != nil {
		return ed
	}
	s, err := catalog.LoadSnapshot(fixtures.FS, version)
	if err != nil {
		t.Fatal(err)
	}
	ed, err := catalog.Build(s)
	if err != nil {
		t.Fatal(err)
	}
	built[version] = ed
	return ed
}

var (
	builtMu sync.Mutex
	built   = map[string]*catalog.Edition{}
)

// protocolEdition is sample version i (0 older, 1 newer), built anew (the tests
// compress it), for tests of how bodies are encoded and named, which hold for
// any size: trimmed under -short (fixtures.WriteSmall), full-size otherwise
// (make stress).
func protocolEdition(t *testing.T, i int) *catalog.Edition {
	t.Helper()
	fsys, dir := fs.FS(fixtures.FS), fixtures.Versions()[i]
	if testing.Short() {
		dir = t.TempDir()
		nn, _, _ := strings.Cut(path.Base(fixtures.Versions()[i]), "_")
		if err := fixtures.WriteSmall(dir, nn); err != nil {
			t.Fatal(err)
		}
		fsys, dir = os.DirFS(dir), "."
	}
	s, err := catalog.LoadSnapshot(fsys, dir)
	if err != nil {
		t.Fatal(err)
	}
	ed, err := catalog.Build(s)
	if err != nil {
		t.Fatal(err)
	}
	return ed
}

// dataEdition is sample version v for tests of the data's contents: full-size,
// but under the race detector trimmed (fixtures.Small: every category and locale,
// a few items each). Those tests run on one goroutine, so the detector finds
// nothing in the full data it would not in the trimmed; make test and make
// stress, in the same CI run, check the full data.
func dataEdition(t *testing.T, v string) *catalog.Edition {
	t.Helper()
	if !raceOn {
		return build(t, v)
	}
	nn, _, _ := strings.Cut(path.Base(v), "_")
	ed, err := fixtures.Small(nn)
	if err != nil {
		t.Fatal(err)
	}
	return ed
}

// TestFixturesMatchSchemas renders every real capture and authored record in the
// fixtures and checks each item, in every locale, against its component schema
// (trimmed under -race: dataEdition).
func TestFixturesMatchSchemas(t *testing.T) {
	doc, err := catalog.Spec()
	if err != nil {
		t.Fatal(err)
	}
	for _, v := range fixtures.Versions() {
		t.Run(v, func(t *testing.T) {
			ed := dataEdition(t, v)
			for _, c := range catalog.Categories() {
				schema := doc.Components.Schemas[c.Schema()].Value
				uuids := ed.UUIDs(c)
				if len(uuids) == 0 {
					t.Errorf("%s: no items", c.Name())
				}
				checked := map[*representation.Body]bool{}
				for _, u := range uuids {
					for loc := range catalog.Locales {
						b := ed.Item(c, u, loc)
						if checked[b] {
							continue
						}
						checked[b] = true
						var env struct {
							Status int
							Data   any
						}
						if err := json.Unmarshal(b.JSON, &env); err != nil {
							t.Fatalf("%s %s: %v", c.Name(), u, err)
						}
						if err := schema.VisitJSON(env.Data); err != nil {
							t.Errorf("%s %s (%s): %v", c.Name(), u, catalog.Locales[loc], err)
						}
					}
				}
			}
		})
	}
}

// TestCallouts checks the minimap conversion against values computed here from the
// raw capture: normalized x from world y, normalized y from world x.
func TestCallouts(t *testing.T) {
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
	ed := build(t, fixtures.Versions()[1])
	inside, total := 0, 0
	for _, m := range in.Data {
		u, _ := catalog.ParseUUID(m.UUID)
		var out struct{ Data rawMap }
		if err := json.Unmarshal(ed.Item(catalog.Maps, u, catalog.DefaultLocale).JSON, &out); err != nil {
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
	ed := build(t, fixtures.Versions()[1])
	var v struct{ Data map[string]any }
	if err := json.Unmarshal(ed.VersionBody().JSON, &v); err != nil {
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
		for _, u := range ed.UUIDs(tc.c) {
			var item struct{ Data map[string]any }
			_ = json.Unmarshal(ed.Item(tc.c, u, catalog.DefaultLocale).JSON, &item)
			got, ok := item.Data[tc.field]
			if !ok || got != tc.want {
				t.Fatalf("%s %s: %s = %#v (present %v), want %#v", tc.c.Name(), u, tc.field, got, ok, tc.want)
			}
		}
		if ed.Fills[catalog.Fill{Schema: tc.c.Schema(), Field: tc.field, Value: fmtValue(tc.want)}] == 0 {
			t.Errorf("fill of %s.%s not counted: %v", tc.c.Schema(), tc.field, ed.Fills)
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
	ed := build(t, fixtures.Versions()[1])
	en := catalog.DefaultLocale
	ja, _ := catalog.ParseLocale("ja-JP")
	ar, _ := catalog.ParseLocale("ar-AE")
	if ed.List(catalog.Buddies, ja) != ed.List(catalog.Buddies, en) {
		t.Error("untranslated buddies list is not shared with en-US")
	}
	if ed.List(catalog.Weapons, ja) == ed.List(catalog.Weapons, en) || ed.List(catalog.Weapons, ja).Lang != "ja-JP" {
		t.Error("translated weapons list is shared with en-US")
	}
	if ed.List(catalog.Maps, ar) != ed.List(catalog.Maps, en) {
		t.Error("ar-AE has no map translations but does not share the en-US body")
	}
	// A weapon whose skins no locale names differently keeps one body.
	shared := 0
	for _, u := range ed.UUIDs(catalog.WeaponSkinLevels) {
		if ed.Item(catalog.WeaponSkinLevels, u, ar) == ed.Item(catalog.WeaponSkinLevels, u, en) {
			shared++
		}
	}
	if shared == 0 {
		t.Error("no ar-AE skin level body is shared with en-US, though some names are the same")
	}
}

// TestLanguageAll: a language=all body holds, for each localized text, the text of
// every locale's own body; other fields are the en-US ones.
func TestLanguageAll(t *testing.T) {
	ed := build(t, fixtures.Versions()[1])
	type item struct {
		Uuid        string
		DisplayName json.RawMessage
		AssetPath   string
	}
	decode := func(b *representation.Body) []item {
		var env struct{ Data []item }
		if err := json.Unmarshal(b.JSON, &env); err != nil {
			t.Fatal(err)
		}
		return env.Data
	}
	for _, c := range []catalog.Category{catalog.Weapons, catalog.WeaponSkins, catalog.WeaponSkinLevels, catalog.Agents, catalog.Sprays} {
		all := decode(ed.List(c, catalog.AllLocales))
		if len(all) == 0 {
			t.Fatalf("%s: empty", c.Name())
		}
		for loc, lang := range catalog.Locales {
			one := decode(ed.List(c, loc))
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
	if ed.List(catalog.Weapons, catalog.AllLocales).Lang != catalog.AllLanguages {
		t.Errorf("Content-Language %q", ed.List(catalog.Weapons, catalog.AllLocales).Lang)
	}
}
