package catalog_test

import (
	"encoding/json"
	"path"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/refdata/refdata/catalog"
	"github.com/refdata/refdata/fixtures"
	"github.com/refdata/refdata/gen"
)

// withUnknown is the trimmed newest sample with fields openapi.yaml does not
// describe added to one map and to one weapon's first skin, and translated in
// de-DE where the test says so. It returns the snapshot and the two items'
// uuids.
func withUnknown(t *testing.T) (s *catalog.Snapshot, mapID, skinID string) {
	t.Helper()
	files, err := fixtures.Files(fixtures.Versions()[1], true)
	if err != nil {
		t.Fatal(err)
	}
	s, err = catalog.LoadFiles(files)
	if err != nil {
		t.Fatal(err)
	}
	catalog.Repair(s)
	var m map[string]any
	for _, it := range s.Sources[catalog.Maps] {
		if c, _ := it.(map[string]any)["callouts"].([]any); len(c) > 1 {
			m = it.(map[string]any)
			break
		}
	}
	if m == nil {
		t.Fatal("no map with callouts in the sample")
	}
	mapID = m["uuid"].(string)
	m["background"] = "dusk"               // text, translated in de-DE
	m["edition"] = "one"                   // text, the same in every locale
	m["art"] = map[string]any{"tone": 2.0} // not text, nested
	callout := m["callouts"].([]any)[0].(map[string]any)
	callout["hint"] = "go left" // nested in an array, translated in de-DE
	callout["note"] = "n"       // nested in an array, the same everywhere
	callout["location"].(map[string]any)["z"] = 3.0

	var w map[string]any
	for _, it := range s.Sources[catalog.Weapons] {
		if sk, _ := it.(map[string]any)["skins"].([]any); len(sk) > 0 {
			w = it.(map[string]any)
			break
		}
	}
	if w == nil {
		t.Fatal("no weapon with skins in the sample")
	}
	skin := w["skins"].([]any)[0].(map[string]any)
	skinID = skin["uuid"].(string)
	skin["rarity"] = "rare" // in an item served on its own, translated in de-DE

	de := s.Overlays["de-DE"]
	if de == nil {
		t.Fatal("no de-DE translations in the sample")
	}
	de[catalog.Maps] = append(de[catalog.Maps], map[string]any{
		"uuid": mapID, "background": "Dämmerung", "callouts": []any{map[string]any{"hint": "links"}},
	})
	de[catalog.Weapons] = append(de[catalog.Weapons], map[string]any{
		"uuid": w["uuid"], "skins": []any{map[string]any{"uuid": skinID, "rarity": "selten"}},
	})
	return s, mapID, skinID
}

// TestUnknownFieldsServed: fields openapi.yaml does not describe, top-level
// and nested, are in the item's body in every locale (translated where the
// translation has them), in its list, in the item holding it (a skin in its
// weapon), and in language=all — text that differs between locales as
// {locale: text}, text equal in all locales and anything else as en-US's.
// The bodies still match their schemas (which admit additional properties).
func TestUnknownFieldsServed(t *testing.T) {
	t.Parallel()
	s, mapID, skinID := withUnknown(t)
	r, err := catalog.Render(s)
	if err != nil {
		t.Fatal(err)
	}
	doc, err := catalog.Spec()
	if err != nil {
		t.Fatal(err)
	}
	mu, _ := catalog.ParseUUID(mapID)
	su, _ := catalog.ParseUUID(skinID)
	de, _ := catalog.ParseLocale("de-DE")
	type callout struct {
		Hint, Note any
		Location   map[string]any
	}
	type mapItem struct {
		UUID       string
		Background any
		Edition    any
		Art        any
		Callouts   []callout
	}
	decode := func(b []byte, into any) {
		t.Helper()
		var env struct {
			Status int
			Data   json.RawMessage
		}
		if err := json.Unmarshal(b, &env); err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal(env.Data, into); err != nil {
			t.Fatal(err)
		}
	}
	valid := func(name string, b []byte) {
		t.Helper()
		var v any
		if err := json.Unmarshal(b, &v); err != nil {
			t.Fatal(err)
		}
		sc := doc.Components.Schemas[name]
		if sc == nil {
			t.Fatalf("openapi.yaml has no schema %s", name)
		}
		if err := sc.Value.VisitJSON(v); err != nil {
			t.Errorf("%s: %v", name, err)
		}
	}
	art := map[string]any{"tone": 2.0}
	for loc, lang := range catalog.Locales {
		bg, hint, rarity := "dusk", "go left", "rare"
		if loc == de {
			bg, hint, rarity = "Dämmerung", "links", "selten"
		}
		var one mapItem
		body := item(r, catalog.Maps, mu, loc).JSON
		decode(body, &one)
		valid(catalog.Maps.Schema()+"Body", body)
		want := mapItem{UUID: mapID, Background: bg, Edition: "one", Art: art}
		got := one
		got.Callouts = nil
		if !reflect.DeepEqual(got, want) {
			t.Errorf("%s: map %+v, want %+v", lang, got, want)
		}
		if c := one.Callouts[0]; c.Hint != hint || c.Note != "n" || c.Location["z"] != 3.0 {
			t.Errorf("%s: callout %+v", lang, c)
		}
		if c := one.Callouts[1]; c.Hint != nil || c.Note != nil {
			t.Errorf("%s: an unknown field appeared in another callout: %+v", lang, c)
		}
		var all []mapItem
		decode(list(r, catalog.Maps, loc).Bytes(), &all)
		if i := slices.IndexFunc(all, func(m mapItem) bool { return m.UUID == mapID }); i < 0 || !reflect.DeepEqual(all[i], one) {
			t.Errorf("%s: the map in the list differs from its item body", lang)
		}

		var sk struct{ Rarity any }
		body = item(r, catalog.WeaponSkins, su, loc).JSON
		decode(body, &sk)
		valid(catalog.WeaponSkins.Schema()+"Body", body)
		if sk.Rarity != rarity {
			t.Errorf("%s: skin rarity %v, want %s", lang, sk.Rarity, rarity)
		}
	}
	// The weapon holding the skin holds it with its unknown field.
	for _, wu := range r.UUIDs(catalog.Weapons) {
		var w struct {
			Skins []struct {
				UUID   string
				Rarity any
			}
		}
		decode(item(r, catalog.Weapons, wu, de).JSON, &w)
		for _, sk := range w.Skins {
			if sk.UUID == skinID && sk.Rarity != "selten" {
				t.Errorf("de-DE: the weapon's skin has rarity %v", sk.Rarity)
			}
		}
	}

	// language=all.
	localized := func(de string, en string) map[string]any {
		m := map[string]any{}
		for _, l := range catalog.Locales {
			m[l] = en
		}
		m["de-DE"] = de
		return m
	}
	body := item(r, catalog.Maps, mu, catalog.AllLocales).JSON
	valid(catalog.Maps.Schema()+"AllBody", body)
	var all mapItem
	decode(body, &all)
	if !reflect.DeepEqual(all.Background, localized("Dämmerung", "dusk")) {
		t.Errorf("language=all background %v, want it by locale", all.Background)
	}
	if all.Edition != "one" || !reflect.DeepEqual(all.Art, art) {
		t.Errorf("language=all edition %v, art %v: want them as they are", all.Edition, all.Art)
	}
	if c := all.Callouts[0]; !reflect.DeepEqual(c.Hint, localized("links", "go left")) || c.Note != "n" || c.Location["z"] != 3.0 {
		t.Errorf("language=all callout %+v", c)
	}
	body = item(r, catalog.WeaponSkins, su, catalog.AllLocales).JSON
	valid(catalog.WeaponSkins.Schema()+"AllBody", body)
	var sk struct{ Rarity any }
	decode(body, &sk)
	if !reflect.DeepEqual(sk.Rarity, localized("selten", "rare")) {
		t.Errorf("language=all skin rarity %v", sk.Rarity)
	}

	// Validate reports them, once per catalog; the skin's under its weapon.
	v, err := catalog.Validate(s)
	if err != nil {
		t.Fatal(err)
	}
	if len(v.Rejections) > 0 {
		t.Errorf("rejections: %v", v.Rejections)
	}
	var fields []string
	for _, u := range v.Unknown {
		fields = append(fields, u.Category.Name()+" "+u.Field)
	}
	for _, want := range []string{"maps art", "maps background", "maps callouts[].hint", "maps callouts[].location.z", "maps callouts[].note", "maps edition", "weapons skins[].rarity"} {
		if !slices.Contains(fields, want) {
			t.Errorf("unknown fields %q lack %q", fields, want)
		}
	}

	// Diff against the sample without them names exactly those fields.
	nn, _, _ := strings.Cut(path.Base(fixtures.Versions()[1]), "_")
	plain, err := fixtures.Small(nn)
	if err != nil {
		t.Fatal(err)
	}
	d, err := catalog.Diff(plain, r, time.Unix(0, 0))
	if err != nil {
		t.Fatal(err)
	}
	got := map[string][]string{}
	for name, cd := range map[string][]gen.ChangedItem{"maps": d.Categories.Maps.Changed, "weapons/skins": d.Categories.Weaponsskins.Changed} {
		for _, ch := range cd {
			got[name+" "+ch.Uuid] = ch.Fields
		}
	}
	if want := map[string][]string{
		"maps " + mapID:           {"art", "background", "callouts", "edition"},
		"weapons/skins " + skinID: {"rarity"},
	}; !reflect.DeepEqual(got, want) {
		t.Errorf("changed %v, want %v", got, want)
	}
	if d.Summary.TotalChanged != 3 || len(d.Categories.Weapons.Changed) != 1 {
		t.Errorf("%d changed (%d weapons), want the map, the skin and its weapon", d.Summary.TotalChanged, len(d.Categories.Weapons.Changed))
	}
}
