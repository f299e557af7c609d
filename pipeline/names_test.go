package pipeline_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"os"
	"path"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/refdata/refdata/catalog"
	"github.com/refdata/refdata/edition"
	"github.com/refdata/refdata/fixtures"
	"github.com/refdata/refdata/pipeline"
	"github.com/refdata/refdata/router/apitest"
)

// readItems reads a snapshot file: enveloped (en-US) or a bare array (a
// translation).
func readItems(t *testing.T, dir, file string) []rawItem {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, file))
	if err != nil {
		t.Fatal(err)
	}
	var v any
	if err := json.Unmarshal(b, &v); err != nil {
		t.Fatalf("%s: %v", file, err)
	}
	if m, ok := v.(map[string]any); ok {
		v = m["data"]
	}
	var out []rawItem
	for _, it := range v.([]any) {
		out = append(out, it.(rawItem))
	}
	return out
}

// byUUID finds an item of a list by uuid.
func byUUID(items []rawItem, uuid string) rawItem {
	for _, it := range items {
		if it["uuid"] == uuid {
			return it
		}
	}
	return nil
}

// nameFile is the JSON of a name file (l10n-names layout): an array of
// entries.
func nameFile(t *testing.T, entries ...map[string]any) *fstest.MapFile {
	t.Helper()
	b, err := json.Marshal(entries)
	if err != nil {
		t.Fatal(err)
	}
	return &fstest.MapFile{Data: b, Mode: 0o444}
}

// TestImportNames: name files (Options.Names, `--names`) become translations
// of the locale they name: an item they name is served with their text in
// that locale (and in language=all under that locale's code); an item they
// do not name keeps en-US's text and shares en-US's body; the snapshot's own
// translation wins where both name a field; an entry keyed by an item's first
// level names the item; only text is taken (never data, a null or a field the
// contract does not name); entries for items the version lacks are counted,
// files outside the layout listed as ignored, and the report says which
// catalogs and locales the names filled. The stored version keeps them as its
// translation files.
func TestImportNames(t *testing.T) {
	t.Parallel()
	snap := fixtureDir(t, "15")
	// Locales without the snapshot's own translation of a catalog, for the
	// names to fill.
	for _, f := range []string{"de-DE/buddies.json", "es-ES/bundles.json"} {
		if err := os.Remove(filepath.Join(snap, f)); err != nil {
			t.Fatal(err)
		}
	}
	edit(t, snap, "en-US/bundles.json", func(v any) any {
		item(v, 0)["extraDescription"] = "Only while it lasts."
		return v
	})
	agents := readItems(t, snap, "en-US/agents.json")
	ptAgents := readItems(t, snap, "pt-BR/agents.json")
	buddies := readItems(t, snap, "en-US/buddies.json")
	bundles := readItems(t, snap, "en-US/bundles.json")
	tiers := readItems(t, snap, "en-US/contenttiers.json")
	if len(agents) < 2 || len(ptAgents) == 0 || len(buddies) < 2 || len(bundles) == 0 || len(tiers) == 0 {
		t.Fatalf("the sample has %d agents (%d in pt-BR), %d buddies, %d bundles, %d content tiers", len(agents), len(ptAgents), len(buddies), len(bundles), len(tiers))
	}
	a0, a1 := agents[0]["uuid"].(string), agents[1]["uuid"].(string)
	ptAgent := ptAgents[0]["uuid"].(string)
	b0, b1 := buddies[0]["uuid"].(string), buddies[1]["uuid"].(string)
	level0 := buddies[0]["levels"].([]any)[0].(map[string]any)["uuid"].(string)
	bundle := bundles[0]["uuid"].(string)
	tier := tiers[0]["uuid"].(string)
	const nobody = "00000000-0000-0000-0000-0000000000ff"

	names := fstest.MapFS{
		"agents/de-DE.json": nameFile(t,
			map[string]any{"uuid": a0, "displayName": "Agentin", "nickname": "Spitzname"},
			map[string]any{"uuid": nobody, "displayName": "Niemand"}),
		"agents/pt-BR.json": nameFile(t, map[string]any{"uuid": ptAgent, "displayName": "Nome dos nomes"}),
		// Keyed by the first level (as l10n-names keys buddies) and by the
		// buddy itself.
		"buddies/de-DE.json": nameFile(t,
			map[string]any{"uuid": level0, "displayName": "Talisman eins"},
			map[string]any{"uuid": b1, "displayName": "Talisman zwei"}),
		"bundles/es-ES.json": nameFile(t, map[string]any{"uuid": bundle, "displayName": "Paquete", "extraDescription": nil, "displayNameSubText": "Sub"}),
		"contenttiers/fr-FR.json": nameFile(t, map[string]any{"uuid": tier, "displayName": "Édition choisie",
			"devName": "Nom interne", "highlightColor": "00000000", "rank": 99.0}),
		// Outside the layout: named as ignored.
		"agents/en-US.json":     nameFile(t, map[string]any{"uuid": a1, "displayName": "Renamed"}),
		"agents/xx-XX.json":     nameFile(t, map[string]any{"uuid": a1, "displayName": "?"}),
		"agents/de-de.json":     nameFile(t, map[string]any{"uuid": a1, "displayName": "klein"}),
		"agents/notes.txt":      &fstest.MapFile{Data: []byte("by hand")},
		"agents/old/ja-JP.json": nameFile(t, map[string]any{"uuid": a1, "displayName": "古い"}),
	}
	opt := options()
	opt.Names = names
	st := openStore(t, t.TempDir())
	rep, err := pipeline.Import(st, snap, opt)
	var out strings.Builder
	rep.Write(&out)
	if err != nil || rep.Outcome != "published" {
		t.Fatalf("import with names: %v\n%s", err, out.String())
	}
	for _, note := range []string{
		"names: agents in 2 locales (de-DE, pt-BR) taken as translations",
		"names: buddies in 1 locales (de-DE) taken as translations",
		"names: bundles in 1 locales (es-ES) taken as translations",
		"names: contenttiers in 1 locales (fr-FR) taken as translations",
		"names: 6 entries applied, 1 name items this version does not have",
	} {
		if !slices.Contains(rep.Notes, note) {
			t.Errorf("the report does not say %q:\n%s", note, out.String())
		}
	}
	for _, f := range []string{"agents/en-US.json", "agents/xx-XX.json", "agents/de-de.json", "agents/notes.txt", "agents/old"} {
		if !slices.Contains(rep.Ignored, path.Join("names", f)) {
			t.Errorf("names/%s is not named as ignored: %q", f, rep.Ignored)
		}
	}
	if len(rep.Unknown) != 0 {
		t.Errorf("the names brought fields the contract does not describe: %v", rep.Unknown)
	}
	ed, _, err := loadEdition(st, rep.ManifestID)
	if err != nil {
		t.Fatal(err)
	}

	loc := func(lang string) int {
		l, ok := catalog.ParseLocale(lang)
		if !ok {
			t.Fatalf("no locale %s", lang)
		}
		return l
	}
	en := catalog.DefaultLocale
	field := func(c catalog.Category, uuid string, l int, f string) any {
		return bodyItem(t, ed, c, uuid, l)[f]
	}
	for _, tc := range []struct {
		name  string
		c     catalog.Category
		uuid  string
		lang  string
		field string
		want  any
	}{
		{"an item the names name", catalog.Agents, a0, "de-DE", "displayName", "Agentin"},
		{"its other text stays en-US's", catalog.Agents, a0, "de-DE", "description", agents[0]["description"]},
		{"another locale is untouched", catalog.Agents, a0, "fr-FR", "displayName", agents[0]["displayName"]},
		{"an item they do not name", catalog.Agents, a1, "de-DE", "displayName", agents[1]["displayName"]},
		{"a file outside the layout is not read", catalog.Agents, a1, "ja-JP", "displayName", agents[1]["displayName"]},
		{"a field the contract does not name is not taken", catalog.Agents, a0, "de-DE", "nickname", nil},
		{"the snapshot's translation wins", catalog.Agents, ptAgent, "pt-BR", "displayName", ptAgents[0]["displayName"]},
		{"keyed by the first level: the buddy", catalog.Buddies, b0, "de-DE", "displayName", "Talisman eins"},
		{"keyed by the first level: the level keeps its text", catalog.BuddyLevels, level0, "de-DE", "displayName",
			buddies[0]["levels"].([]any)[0].(map[string]any)["displayName"]},
		{"keyed by the item", catalog.Buddies, b1, "de-DE", "displayName", "Talisman zwei"},
		{"text of a bundle", catalog.Bundles, bundle, "es-ES", "displayName", "Paquete"},
		{"a null is no text: en-US's stays", catalog.Bundles, bundle, "es-ES", "extraDescription", "Only while it lasts."},
		{"an unnamed field is not taken", catalog.Bundles, bundle, "es-ES", "displayNameSubText", nil},
		{"text of a content tier", catalog.ContentTiers, tier, "fr-FR", "displayName", "Édition choisie"},
		{"not text: devName", catalog.ContentTiers, tier, "fr-FR", "devName", tiers[0]["devName"]},
		{"not text: highlightColor", catalog.ContentTiers, tier, "fr-FR", "highlightColor", tiers[0]["highlightColor"]},
		{"not text: rank", catalog.ContentTiers, tier, "fr-FR", "rank", tiers[0]["rank"]},
	} {
		if got := field(tc.c, tc.uuid, loc(tc.lang), tc.field); !reflect.DeepEqual(got, tc.want) {
			t.Errorf("%s: %s/%s?language=%s %s = %#v, want %#v", tc.name, tc.c.Name(), tc.uuid, tc.lang, tc.field, got, tc.want)
		}
	}

	// A body the names leave in en-US is en-US's, and says so; one they
	// translate says its locale, in its item and list bodies and in
	// language=all.
	for _, tc := range []struct {
		c        catalog.Category
		uuid     string
		lang     string
		own      bool
		fallback string // the en-US text language=all keeps for the others
		text     string
	}{
		{catalog.Agents, a0, "de-DE", true, agents[0]["displayName"].(string), "Agentin"},
		{catalog.Agents, a1, "de-DE", false, "", ""},
		{catalog.Buddies, b0, "de-DE", true, buddies[0]["displayName"].(string), "Talisman eins"},
		{catalog.ContentTiers, tier, "fr-FR", true, tiers[0]["displayName"].(string), "Édition choisie"},
		{catalog.ContentTiers, tier, "de-DE", false, "", ""},
	} {
		u, _ := catalog.ParseUUID(tc.uuid)
		body, enBody := ed.Item(tc.c, u, loc(tc.lang)), ed.Item(tc.c, u, en)
		if (body != enBody) != tc.own || (body.Lang == tc.lang) != tc.own {
			t.Errorf("%s/%s?language=%s: own body %v, Content-Language %q; want own %v", tc.c.Name(), tc.uuid, tc.lang, body != enBody, body.Lang, tc.own)
		}
		if !tc.own {
			continue
		}
		if list := ed.List(tc.c, loc(tc.lang)); !strings.Contains(string(apitest.JSON(t, list)), tc.text) {
			t.Errorf("%s?language=%s does not hold %q", tc.c.Name(), tc.lang, tc.text)
		}
		all := field(tc.c, tc.uuid, catalog.AllLocales, "displayName")
		want := map[string]any{}
		for _, l := range catalog.Locales {
			want[l] = tc.fallback
		}
		want[tc.lang] = tc.text
		got, _ := all.(map[string]any)
		for l, w := range want {
			if l != tc.lang && got[l] != w && tc.c != catalog.Buddies { // the other locales' buddy names are the snapshot's
				t.Errorf("%s/%s?language=all: displayName[%s] = %v, want %v", tc.c.Name(), tc.uuid, l, got[l], w)
			}
		}
		if got[tc.lang] != tc.text {
			t.Errorf("%s/%s?language=all: displayName[%s] = %v, want %q", tc.c.Name(), tc.uuid, tc.lang, got[tc.lang], tc.text)
		}
	}

	// The stored version holds the names as its own translations: its files
	// render to the same bodies without them.
	_, files, err := st.ReadVersion(rep.ManifestID)
	if err != nil {
		t.Fatal(err)
	}
	for f, text := range map[string]string{"de-DE/agents.json": "Agentin", "de-DE/buddies.json": "Talisman eins", "fr-FR/contenttiers.json": "Édition choisie"} {
		if !strings.Contains(string(files[f]), text) {
			t.Errorf("the stored %s does not hold %q", f, text)
		}
	}
	rendered, err := catalog.RenderFiles(files)
	if err != nil {
		t.Fatal(err)
	}
	sameJSON(t, edition.New(rendered), ed)
}

// TestImportNamesRefused: a name file that cannot be taken refuses the
// import with a report naming it and why, and the store — the active version
// and every byte — stays as it was.
func TestImportNamesRefused(t *testing.T) {
	t.Parallel()
	base, active := baseStore(t, "14")
	snap := fixtureDir(t, "15")
	agent := readItems(t, snap, "en-US/agents.json")[0]["uuid"].(string)

	cases := []struct {
		name  string
		names fstest.MapFS
		max   int64
		want  []string // in the written report
	}{
		{"not JSON", fstest.MapFS{"agents/de-DE.json": {Data: []byte(`[{"uuid":`)}},
			0, []string{"names/agents/de-DE.json", "not a JSON array of items"}},
		{"an object, not an array", fstest.MapFS{"agents/de-DE.json": {Data: []byte(`{"uuid":"` + agent + `","displayName":"X"}`)}},
			0, []string{"names/agents/de-DE.json", "not a JSON array of items"}},
		{"an array of strings", fstest.MapFS{"agents/de-DE.json": {Data: []byte(`["Agentin"]`)}},
			0, []string{"names/agents/de-DE.json", "not a JSON array of items"}},
		{"text that is not text", fstest.MapFS{"agents/de-DE.json": {Data: []byte(`[{"uuid":"` + agent + `","displayName":42}]`)}},
			0, []string{"de-DE/agents.json uuid " + agent, "displayName", "value must be a string"}},
		{"larger than the file limit", fstest.MapFS{"agents/de-DE.json": {Data: []byte(`[{"uuid":"` + agent + `","displayName":"` + strings.Repeat("A", 4096) + `"}]`)}},
			2048, []string{"names/agents/de-DE.json", "larger than the per-file limit of 2048 bytes"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			dir := filepath.Join(t.TempDir(), "store")
			copyDir(t, base, dir)
			before := treeHash(t, dir)
			opt := options()
			opt.Names = tc.names
			st := openStore(t, dir)
			src := snap
			if tc.max > 0 {
				// A snapshot of the version record only (its catalogs carried
				// over), so that only the name file is over the limit.
				opt.MaxFileBytes = tc.max
				src = t.TempDir()
				b, err := os.ReadFile(filepath.Join(snap, "version.json"))
				if err != nil {
					t.Fatal(err)
				}
				write(t, src, "version.json", string(b))
			}
			rep, err := pipeline.Import(st, src, opt)
			if !errors.Is(err, pipeline.ErrRejected) {
				t.Fatalf("err = %v, want a rejection", err)
			}
			var out strings.Builder
			rep.Write(&out)
			for _, w := range tc.want {
				if !strings.Contains(out.String(), w) {
					t.Errorf("the report does not say %q:\n%s", w, out.String())
				}
			}
			if rep.Outcome != "rejected" || rep.NumRejections == 0 {
				t.Errorf("outcome %q, %d rejections", rep.Outcome, rep.NumRejections)
			}
			if p, _, err := st.Active(); err != nil || p.ManifestID != active {
				t.Errorf("active %q (%v), want %s", p.ManifestID, err, active)
			}
			if after := treeHash(t, dir); !maps.Equal(before, after) {
				t.Errorf("the store changed")
			}
		})
	}
}

// TestImportRealNames imports the embedded 15 stripped of its translations of
// the catalogs ../shared/data/l10n-names covers (weapons aside), with those
// name files: each locale serves, for every item the names cover, their
// displayName (buddies through their first level), and en-US's text for the
// others; no field but text changes; the report says each catalog was filled
// in the 17 locales and counts the names of items the 2021 version lacks.
func TestImportRealNames(t *testing.T) {
	t.Parallel()
	root := fixtures.SharedData(t, "l10n-names")
	snap := fixtureDir(t, "15")
	cats := []catalog.Category{catalog.Buddies, catalog.Sprays, catalog.PlayerCards, catalog.PlayerTitles, catalog.Bundles, catalog.Currencies, catalog.Contracts}
	for _, c := range cats {
		for _, l := range catalog.Locales {
			if l == "en-US" {
				continue
			}
			if err := os.Remove(filepath.Join(snap, l, c.File())); err != nil && !errors.Is(err, os.ErrNotExist) {
				t.Fatal(err)
			}
		}
	}
	// Only the catalogs stripped: the weapon names stay the snapshot's.
	names := fstest.MapFS{}
	for _, c := range cats {
		for _, l := range catalog.Locales {
			b, err := os.ReadFile(filepath.Join(root, c.Name(), l+".json"))
			if err != nil {
				t.Fatal(err)
			}
			names[c.Name()+"/"+l+".json"] = &fstest.MapFile{Data: b}
		}
	}
	opt := options()
	opt.Names = names
	st := openStore(t, t.TempDir())
	rep, err := pipeline.Import(st, snap, opt)
	var out strings.Builder
	rep.Write(&out)
	if err != nil || rep.Outcome != "published" {
		t.Fatalf("import with l10n-names: %v\n%s", err, out.String())
	}
	others := slices.DeleteFunc(slices.Clone(catalog.Locales[:]), func(l string) bool { return l == "en-US" })
	for _, c := range cats {
		note := fmt.Sprintf("names: %s in %d locales (%s) taken as translations", c.Name(), len(others), strings.Join(others, ", "))
		if !slices.Contains(rep.Notes, note) {
			t.Errorf("the report does not say %q:\n%s", note, out.String())
		}
	}
	if !slices.ContainsFunc(rep.Notes, func(n string) bool {
		var applied, stray int
		_, err := fmt.Sscanf(n, "names: %d entries applied, %d name items this version does not have", &applied, &stray)
		return err == nil && applied > 0 && stray > 0
	}) {
		t.Errorf("the report does not count the entries applied and those for items the version lacks:\n%s", out.String())
	}
	ed, _, err := loadEdition(st, rep.ManifestID)
	if err != nil {
		t.Fatal(err)
	}
	named, kept := 0, 0
	for _, c := range cats {
		en := readItems(t, snap, "en-US/"+c.File())
		owner := map[string]string{}
		for _, it := range en {
			id := it["uuid"].(string)
			owner[id] = id
			if c == catalog.Buddies {
				owner[it["levels"].([]any)[0].(map[string]any)["uuid"].(string)] = id
			}
		}
		for l, lang := range catalog.Locales {
			if l == catalog.DefaultLocale {
				continue
			}
			want := map[string]rawItem{} // item → its entry
			for _, e := range readItems(t, root, path.Join(c.Name(), lang+".json")) {
				if id, ok := owner[e["uuid"].(string)]; ok {
					want[id] = e
				}
			}
			for _, it := range en {
				id := it["uuid"].(string)
				got := bodyItem(t, ed, c, id, l)
				enBody := bodyItem(t, ed, c, id, catalog.DefaultLocale)
				text := map[string]bool{}
				if e := want[id]; e != nil {
					for f, v := range e {
						if s, ok := v.(string); ok && f != "uuid" && f != "defaultSkinUuid" {
							if _, named := enBody[f]; named {
								text[f] = true
								if got[f] != s {
									t.Errorf("%s/%s?language=%s: %s = %v, the names say %q", c.Name(), id, lang, f, got[f], s)
								}
							}
						}
					}
					named++
				} else {
					kept++
				}
				for f, v := range got {
					if !text[f] && !reflect.DeepEqual(v, enBody[f]) {
						t.Errorf("%s/%s?language=%s: %s = %v, en-US's is %v: only the names' text may differ", c.Name(), id, lang, f, v, enBody[f])
					}
				}
				for f := range enBody {
					if _, ok := got[f]; !ok {
						t.Errorf("%s/%s?language=%s lacks %s", c.Name(), id, lang, f)
					}
				}
			}
		}
	}
	if named == 0 {
		t.Error("no item got a name from l10n-names")
	}
	t.Logf("%d items named in a locale by l10n-names, %d kept en-US's text", named, kept)
}
