package catalog_test

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	"github.com/refdata/refdata/catalog"
	"github.com/refdata/refdata/fixtures"
)

// obj is a JSON object written as Go, for the tables below.
type obj = map[string]any

// jsonOf reads JSON text, so a table can write its items as the upstream
// sends them.
func jsonOf(t *testing.T, s string) any {
	t.Helper()
	var v any
	if err := json.Unmarshal([]byte(s), &v); err != nil {
		t.Fatalf("%s: %v", s, err)
	}
	return v
}

// TestTextOnlyUnknownFields: TextOnly reduces full items in one locale (a
// localized capture, a name file) to their text: the fields openapi.yaml
// marks localized and, where it names nothing, text (a string) — at the top
// of an item or nested in an element of a named array — with the uuid or
// tier the merge matches elements by. Everything else goes: numbers, flags,
// nulls, arrays and objects the contract does not name (even holding text),
// and named fields that are not text; an item with no text is left out.
func TestTextOnlyUnknownFields(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name  string
		c     catalog.Category
		items string
		want  string
	}{
		{"unknown text at the top is kept", catalog.Maps,
			`[{"uuid":"m1","displayName":"Bind","mapUrl":"/Game/Bind","subtitle":"Desert","xMultiplier":1}]`,
			`[{"uuid":"m1","displayName":"Bind","subtitle":"Desert"}]`},
		{"unknown non-text is not", catalog.Maps,
			`[{"uuid":"m1","displayName":"Bind","weight":3,"live":true,"gone":null,"tags":["a","b"],"art":{"caption":"dusk","tone":2}}]`,
			`[{"uuid":"m1","displayName":"Bind"}]`},
		{"unknown text alone makes an item", catalog.Agents,
			`[{"uuid":"a1","developerName":"Wushu","background":"https://media/bg.png","isPlayableCharacter":true}]`,
			`[{"uuid":"a1","background":"https://media/bg.png"}]`},
		{"no text at all: left out", catalog.Agents,
			`[{"uuid":"a1","developerName":"Wushu","isPlayableCharacter":true,"backgroundGradientColors":["ff0000ff"]},{"uuid":"a2","displayName":"Jett"}]`,
			`[{"uuid":"a2","displayName":"Jett"}]`},
		{"unknown text in a named array's element, by position", catalog.Maps,
			`[{"uuid":"m1","displayName":"Bind","callouts":[{"regionName":"A","superRegionName":"S","hint":"go left","location":{"x":1,"y":2,"z":3}},{"regionName":"B","superRegionName":"S","location":{"x":0,"y":0}}]}]`,
			`[{"uuid":"m1","displayName":"Bind","callouts":[{"regionName":"A","superRegionName":"S","hint":"go left"},{"regionName":"B","superRegionName":"S"}]}]`},
		{"unknown text in a nested item, by uuid", catalog.Weapons,
			`[{"uuid":"w1","displayName":"Vandal","skins":[{"uuid":"s1","displayName":"Prime","rarity":"rare","levels":[{"uuid":"l1","displayName":"Prime 1","levelItem":null,"perk":7}]}]}]`,
			`[{"uuid":"w1","displayName":"Vandal","skins":[{"uuid":"s1","displayName":"Prime","rarity":"rare","levels":[{"uuid":"l1","displayName":"Prime 1"}]}]}]`},
		{"unknown text in a tier, by tier", catalog.CompetitiveTiers,
			`[{"uuid":"t1","assetObjectName":"Episode1","tiers":[{"tier":3,"tierName":"IRON 1","division":"ECompetitiveDivision::IRON","divisionName":"IRON","motto":"Start","color":"ffffffff"}]}]`,
			`[{"uuid":"t1","tiers":[{"tier":3,"tierName":"IRON 1","divisionName":"IRON","motto":"Start"}]}]`},
		{"of a new catalog", catalog.Gear,
			`[{"uuid":"g1","displayName":"Heavy Shields","description":"50 armor","shopData":{"cost":1000,"category":"Armor"},"flavor":"Sturdy","slot":2}]`,
			`[{"uuid":"g1","displayName":"Heavy Shields","description":"50 armor","flavor":"Sturdy"}]`},
		{"of a new catalog, no text", catalog.ContentTiers,
			`[{"uuid":"c1","devName":"Select","rank":0,"juiceValue":5,"glow":1.5}]`,
			`[]`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			items := jsonOf(t, tc.items).([]any)
			before := jsonOf(t, tc.items)
			got, err := catalog.TextOnly(tc.c, items)
			if err != nil {
				t.Fatal(err)
			}
			if want := jsonOf(t, tc.want); !reflect.DeepEqual(any(got), want) {
				g, _ := json.Marshal(got)
				t.Errorf("TextOnly(%s):\n got %s\nwant %s", tc.c.Name(), g, tc.want)
			}
			if !reflect.DeepEqual(any(items), before) {
				t.Errorf("TextOnly changed its input")
			}
		})
	}
}

// TestSplitAllUnknownFields: SplitAll takes a field openapi.yaml does not
// name as localized when its value is text keyed by locale codes (an en-US
// key among them, every key a locale code, every value text or null): en-US
// gets the en-US text, each other locale's overlay its own (en-US's where the
// object lacks the locale or has null for it). Any other value — an object with a key that is no
// locale, one of numbers, an object without en-US, arrays, numbers, flags,
// null — is kept in en-US as sent and is in no overlay. A capture whose only
// localized value is such a field is still language=all.
func TestSplitAllUnknownFields(t *testing.T) {
	t.Parallel()
	const item = `{"uuid":"m1",
		"displayName":{"en-US":"Bind","de-DE":"Bind (de)","ja-JP":"バインド"},
		"subtitle":{"en-US":"Desert","de-DE":"Wüste","ja-JP":"砂漠"},
		"partial":{"en-US":"Gate","ja-JP":"門"},
		"blank":{"en-US":"Open","de-DE":null},
		"notLocales":{"en-US":"x","east":"y"},
		"numbers":{"en-US":1,"de-DE":2},
		"noEnglish":{"de-DE":"nur deutsch"},
		"art":{"tone":2},"list":[1,2],"flag":true,"none":null,"plain":"same"}`
	en := `{"uuid":"m1","displayName":"Bind","subtitle":"Desert","partial":"Gate","blank":"Open",
		"notLocales":{"en-US":"x","east":"y"},"numbers":{"en-US":1,"de-DE":2},"noEnglish":{"de-DE":"nur deutsch"},
		"art":{"tone":2},"list":[1,2],"flag":true,"none":null,"plain":"same"}`
	over := func(name, subtitle, partial string, blank any) obj {
		o := obj{"uuid": "m1", "displayName": name, "subtitle": subtitle, "partial": partial, "plain": "same"}
		if blank != nil {
			o["blank"] = blank
		}
		return o
	}
	items := jsonOf(t, "["+item+"]").([]any)
	gotEN, overlays, ok, err := catalog.SplitAll(catalog.Maps, items)
	if err != nil || !ok {
		t.Fatalf("SplitAll: ok %v, err %v", ok, err)
	}
	if want := jsonOf(t, "["+en+"]"); !reflect.DeepEqual(any(gotEN), want) {
		g, _ := json.Marshal(gotEN)
		t.Errorf("en-US:\n got %s\nwant %s", g, en)
	}
	for _, tc := range []struct {
		lang string
		want obj
	}{
		// null is no text: the overlay leaves the field to en-US's (as
		// language=all renders a field that is not text in every locale).
		{"de-DE", over("Bind (de)", "Wüste", "Gate", nil)},
		{"ja-JP", over("バインド", "砂漠", "門", "Open")},
		{"fr-FR", over("Bind", "Desert", "Gate", "Open")},
	} {
		got := overlays[tc.lang]
		if len(got) != 1 || !reflect.DeepEqual(got[0], any(tc.want)) {
			g, _ := json.Marshal(got)
			w, _ := json.Marshal(tc.want)
			t.Errorf("%s overlay:\n got %s\nwant [%s]", tc.lang, g, w)
		}
	}
	if len(overlays) != catalog.NumLocales-1 {
		t.Errorf("%d overlays, want one per locale but en-US", len(overlays))
	}

	for _, tc := range []struct {
		name  string
		items string
		ok    bool
	}{
		{"only a field the contract does not name is localized", `[{"uuid":"m1","displayName":"Bind","subtitle":{"en-US":"Desert","de-DE":"Wüste"}}]`, true},
		{"an object that is not text by locale", `[{"uuid":"m1","displayName":"Bind","art":{"en-US":"x","east":"y"},"n":{"en-US":1}}]`, false},
		{"no localized value", `[{"uuid":"m1","displayName":"Bind","subtitle":"Desert"}]`, false},
	} {
		items := jsonOf(t, tc.items).([]any)
		got, overlays, ok, err := catalog.SplitAll(catalog.Maps, items)
		if err != nil || ok != tc.ok {
			t.Errorf("%s: ok %v (want %v), err %v", tc.name, ok, tc.ok, err)
			continue
		}
		if !ok && (overlays != nil || !reflect.DeepEqual(got, items)) {
			t.Errorf("%s: not language=all, yet split: %v, %d overlays", tc.name, got, len(overlays))
		}
		if ok && (got[0].(obj)["subtitle"] != "Desert" || overlays["de-DE"][0].(obj)["subtitle"] != "Wüste") {
			t.Errorf("%s: en-US %v, de-DE %v", tc.name, got, overlays["de-DE"])
		}
	}
}

// TestUnknownFieldsRoundTrip: fields openapi.yaml does not name, added to an
// item of one catalog at a time (the five new ones among them) — text
// translated in some locales, text the same everywhere, and values that are
// not text — are served in each locale's body as that locale has them, and in
// language=all text that differs as {locale: text} and the rest as sent.
// Splitting that language=all list (a capture of it) gives back en-US's list
// and, laid over it, every locale's: the round trip loses nothing.
func TestUnknownFieldsRoundTrip(t *testing.T) {
	t.Parallel()
	v := fixtures.Versions()[1]
	translated := map[string]string{"de-DE": "Untertitel", "ja-JP": "サブタイトル"}
	sent := obj{"motto": "same everywhere", "weight": 2.5, "live": true,
		"tags": []any{"a", "b"}, "art": obj{"tone": 2.0, "caption": "dusk"}}
	for _, c := range []catalog.Category{catalog.Maps, catalog.Agents, catalog.Bundles,
		catalog.ContentTiers, catalog.Gear, catalog.Ceremonies, catalog.Missions, catalog.Objectives} {
		t.Run(c.Name(), func(t *testing.T) {
			t.Parallel()
			files, err := fixtures.Files(v, true)
			if err != nil {
				t.Fatal(err)
			}
			s, err := catalog.LoadFiles(files)
			if err != nil {
				t.Fatal(err)
			}
			items := s.Sources[c]
			if len(items) < 2 {
				t.Fatalf("%d %s in the sample", len(items), c.Name())
			}
			// The snapshot's items are decoded anew by LoadFiles: editing
			// them leaves the fixtures alone.
			first := items[0].(obj)
			id := first["uuid"].(string)
			first["subtitle"] = "Subtitle"
			for k, v := range sent {
				first[k] = v
			}
			for lang, text := range translated {
				if s.Overlays[lang] == nil {
					s.Overlays[lang] = map[catalog.Category][]any{}
				}
				s.Overlays[lang][c] = append(s.Overlays[lang][c], obj{"uuid": id, "subtitle": text})
			}
			val, err := catalog.Validate(s)
			if err != nil {
				t.Fatal(err)
			}
			if len(val.Rejections) > 0 {
				t.Fatalf("rejections: %v", val.Rejections)
			}
			r, err := catalog.Render(s)
			if err != nil {
				t.Fatal(err)
			}
			u, _ := catalog.ParseUUID(id)
			data := func(d *catalog.Doc) any {
				t.Helper()
				var env struct{ Data any }
				if err := json.Unmarshal(d.Bytes(), &env); err != nil {
					t.Fatal(err)
				}
				return env.Data
			}
			for loc, lang := range catalog.Locales {
				got := data(item(r, c, u, loc)).(obj)
				want := "Subtitle"
				if text, ok := translated[lang]; ok {
					want = text
				}
				if got["subtitle"] != want {
					t.Errorf("%s: subtitle %v, want %q", lang, got["subtitle"], want)
				}
				for k, v := range sent {
					if g, ok := got[k]; !ok || !reflect.DeepEqual(g, v) {
						t.Errorf("%s: %s = %#v, sent %#v", lang, k, g, v)
					}
				}
				if _, ok := translated[lang]; ok && item(r, c, u, loc) == item(r, c, u, catalog.DefaultLocale) {
					t.Errorf("%s: the translated item shares en-US's body", lang)
				}
				// Only the item with the fields has them.
				other, _ := catalog.ParseUUID(items[1].(obj)["uuid"].(string))
				if _, ok := data(item(r, c, other, loc)).(obj)["subtitle"]; ok {
					t.Errorf("%s: another item has the subtitle", lang)
				}
			}
			all := data(item(r, c, u, catalog.AllLocales)).(obj)
			wantSub := obj{}
			for _, l := range catalog.Locales {
				wantSub[l] = "Subtitle"
			}
			for l, text := range translated {
				wantSub[l] = text
			}
			if !reflect.DeepEqual(all["subtitle"], any(wantSub)) {
				t.Errorf("language=all subtitle %v, want it by locale", all["subtitle"])
			}
			for k, v := range sent {
				if g, ok := all[k]; !ok || !reflect.DeepEqual(g, v) {
					t.Errorf("language=all: %s = %#v, sent %#v", k, g, v)
				}
			}

			// language=all back to en-US and overlays.
			list := func(loc int) []any { return data(r.Tables[c].List[loc]).([]any) }
			en, overlays, ok, err := catalog.SplitAll(c, list(catalog.AllLocales))
			if err != nil || !ok {
				t.Fatalf("SplitAll: ok %v, err %v", ok, err)
			}
			if !reflect.DeepEqual(en, list(catalog.DefaultLocale)) {
				t.Errorf("the en-US part of language=all differs from the en-US list")
			}
			for loc, lang := range catalog.Locales {
				if loc == catalog.DefaultLocale {
					continue
				}
				if got := catalog.Translate(en, overlays[lang]); !reflect.DeepEqual(got, list(loc)) {
					g, _ := json.Marshal(got)
					w, _ := json.Marshal(list(loc))
					t.Errorf("%s: en-US with the overlay differs from the %s list:\n got %.300s\nwant %.300s", lang, lang, g, w)
				}
				for _, o := range overlays[lang] {
					for k := range sent {
						if _, ok := o.(obj)[k]; ok && k != "motto" {
							t.Errorf("%s overlay carries %s, which is not text", lang, k)
						}
					}
				}
			}
			if !strings.Contains(string(r.Tables[c].List[catalog.AllLocales].Bytes()), `"subtitle":{"ar-AE":"Subtitle"`) {
				t.Errorf("the language=all list does not localize the subtitle")
			}
		})
	}
}

// TestUnknownFieldsOfEveryKind: a field openapi.yaml does not name is taken
// whatever JSON it holds — text, a number, a flag, null, an array, an object,
// empty or not — at the top of an item or in an element of a named array:
// the version is not rejected, the field is reported once, and each locale's
// body and language=all serve it as sent. (Upstreams add fields as null for
// most items: a later agents answer has "recruitmentData": null.)
func TestUnknownFieldsOfEveryKind(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name  string
		value any
	}{
		{"text", "x"},
		{"empty text", ""},
		{"a number", 2.5},
		{"a flag", false},
		{"null", nil},
		{"an array", []any{1.0, "a", nil}},
		{"an empty array", []any{}},
		{"an object", obj{"a": 1.0, "b": nil}},
		{"an empty object", obj{}},
	} {
		for _, nestedIn := range []string{"", "callouts[]"} {
			name := tc.name
			if nestedIn != "" {
				name += " in " + nestedIn
			}
			t.Run(name, func(t *testing.T) {
				t.Parallel()
				fields := obj{"recruitmentData": tc.value}
				if nestedIn != "" {
					fields = obj{"callouts": []any{obj{"regionName": "A", "superRegionName": "S",
						"location": obj{"x": 1.0, "y": 2.0}, "recruitmentData": tc.value}}}
				}
				s := boundsSnapshot(t, true, []any{fields}, nil)
				v, err := catalog.Validate(s)
				if err != nil {
					t.Fatal(err)
				}
				if len(v.Rejections) > 0 {
					t.Errorf("rejected: %v", v.Rejections)
				}
				want := []catalog.Unknown{{Category: catalog.Maps, Field: strings.TrimPrefix(nestedIn+".recruitmentData", "."),
					Items: 1, Example: "00000000-0000-0000-0000-000000000001"}}
				if !reflect.DeepEqual(v.Unknown, want) {
					t.Errorf("unknown %+v, want %+v", v.Unknown, want)
				}
				r, err := catalog.Render(s)
				if err != nil {
					t.Fatal(err)
				}
				u, _ := catalog.ParseUUID("00000000-0000-0000-0000-000000000001")
				for _, loc := range []int{catalog.DefaultLocale, 5, catalog.AllLocales} {
					var env struct{ Data obj }
					if err := json.Unmarshal(item(r, catalog.Maps, u, loc).JSON, &env); err != nil {
						t.Fatal(err)
					}
					holder := env.Data
					if nestedIn != "" {
						holder = env.Data["callouts"].([]any)[0].(obj)
					}
					if got, ok := holder["recruitmentData"]; !ok || !reflect.DeepEqual(got, tc.value) {
						t.Errorf("locale %d: recruitmentData = %#v (present %v), sent %#v", loc, got, ok, tc.value)
					}
				}
			})
		}
	}
}
