package pipeline_test

import (
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/refdata/refdata/catalog"
	"github.com/refdata/refdata/edition"
	"github.com/refdata/refdata/fixtures"
	"github.com/refdata/refdata/gen"
	"github.com/refdata/refdata/pipeline"
	"github.com/refdata/refdata/router/apitest"
)

// version2023 is the version record the 2023 answers are imported with: they
// were saved without one (../shared/data/upstream-2023-pt-BR/README.md), so
// the test writes one, of a build about a year and a half after 15's.
const version2023 = `{"status":200,"data":{"manifestId":"2023012306010000","branch":"release-06.01",
	"version":"06.01.00.000000","buildVersion":"1","riotClientVersion":"release-06.01-shipping-1-000000",
	"buildDate":"2023-01-23T00:00:00Z"}}`

// envelopeData is the data of a {status, data} body.
func envelopeData(t *testing.T, what string, b []byte) any {
	t.Helper()
	var env struct {
		Status int
		Data   any
	}
	if err := json.Unmarshal(b, &env); err != nil {
		t.Fatalf("%s: %v", what, err)
	}
	if env.Status != 200 {
		t.Fatalf("%s: status %d", what, env.Status)
	}
	return env.Data
}

// bodyItem is the item a body of /v1/<category>/<uuid> holds.
func bodyItem(t *testing.T, ed *edition.Edition, c catalog.Category, uuid string, loc int) map[string]any {
	t.Helper()
	u, ok := catalog.ParseUUID(uuid)
	if !ok {
		t.Fatalf("%q is not a uuid", uuid)
	}
	b := ed.Item(c, u, loc)
	if b == nil {
		t.Fatalf("%s has no %s/%s in locale %d", ed.ManifestID, c.Name(), uuid, loc)
	}
	m, ok := envelopeData(t, c.Name()+"/"+uuid, apitest.JSON(t, b)).(map[string]any)
	if !ok {
		t.Fatalf("%s/%s: the data is not an object", c.Name(), uuid)
	}
	return m
}

// langName is the language parameter of locale index loc (AllLocales: "all").
func langName(loc int) string {
	if loc == catalog.AllLocales {
		return "all"
	}
	return catalog.Locales[loc]
}

// topLevelUnknown is what the report must say of items of category c: each
// top-level field the item schema does not name, with how many items carry
// it and the first of them.
func topLevelUnknown(t *testing.T, c catalog.Category, items []rawItem, firstSeen string) []catalog.Unknown {
	t.Helper()
	doc, err := catalog.Spec()
	if err != nil {
		t.Fatal(err)
	}
	sc := unwrap(doc.Components.Schemas[c.Schema()].Value)
	byField := map[string]*catalog.Unknown{}
	for _, it := range items {
		for k := range it {
			if sc.Properties[k] != nil {
				continue
			}
			if byField[k] == nil {
				byField[k] = &catalog.Unknown{Category: c, Field: k, Example: it["uuid"].(string), FirstSeen: firstSeen}
			}
			byField[k].Items++
		}
	}
	var out []catalog.Unknown
	for _, k := range slices.Sorted(maps.Keys(byField)) {
		out = append(out, *byField[k])
	}
	return out
}

// TestImport2023Answers imports the public API's answers of January 2023
// (../shared/data/upstream-2023-pt-BR: pt-BR, a ≈ 6.01 build) over a 2021
// version (embedded 15) as the next version, in the capture layout: the
// answers as the version's payloads and, in pt-BR/, as the locale they were
// fetched in; the catalogs they lack are carried over. The tolerant reader
// takes them: the version publishes, the agents' fields the contract does not
// name (background, backgroundGradientColors, fullPortraitV2) are in every
// body that holds an agent, in every locale and language=all, exactly as
// sent; the report lists each such field once per catalog with its item
// count, an example and the version it was first seen in, and the defaults
// filled for the fields the 2023 maps lack; the diff names the new fields in
// changed[].fields of every agent both versions have, and adds and removes
// the items the answers add and drop. Every body matches openapi.yaml.
func TestImport2023Answers(t *testing.T) {
	t.Parallel()
	src := fixtures.SharedData(t, "upstream-2023-pt-BR")
	// The catalogs the 2023 API reshaped: agents (new fields), maps (new
	// maps and callouts), tiers (new rank tables). Weapons (every skin) and
	// player cards make the import a few times slower: with -short they
	// are carried over from the 2021 version instead.
	answers := []string{"agents.json", "maps.json", "competitivetiers.json"}
	if !testing.Short() {
		answers = append(answers, "weapons.json", "playercards.json")
	}

	st := openStore(t, storeFrom(t, "15"))
	_, prevID := baseStore(t, "15")

	dir := filepath.Join(t.TempDir(), "answers-2023")
	if err := os.MkdirAll(filepath.Join(dir, "pt-BR"), 0o755); err != nil {
		t.Fatal(err)
	}
	for _, f := range answers {
		b, err := os.ReadFile(filepath.Join(src, f))
		if err != nil {
			t.Fatal(err)
		}
		for _, to := range []string{f, filepath.Join("pt-BR", f)} {
			if err := os.WriteFile(filepath.Join(dir, to), b, 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	write(t, dir, "version.json", version2023)

	rep, err := pipeline.Import(st, dir, options())
	var out strings.Builder
	rep.Write(&out)
	if err != nil || rep.Outcome != "published" {
		t.Fatalf("import of the 2023 answers: %v\n%s", err, out.String())
	}
	id := rep.ManifestID
	if id != "2023012306010000" || rep.Layout != pipeline.CaptureLayout || rep.Previous != prevID || rep.NumRejections != 0 {
		t.Fatalf("published %s (%s layout) diffed against %q, %d rejections; want 2023012306010000 (capture) against %s",
			id, rep.Layout, rep.Previous, rep.NumRejections, prevID)
	}

	// The answers' files became en-US and pt-BR; the rest was carried over.
	var took []string
	for _, c := range catalog.SourceCategories() {
		if slices.Contains(answers, c.File()) {
			took = append(took, c.File())
			if slices.Contains(rep.CarriedOver, c.Name()) {
				t.Errorf("%s is in the answers but reported carried over", c.Name())
			}
		} else if !slices.Contains(rep.CarriedOver, c.Name()) {
			t.Errorf("%s is not in the answers and not reported carried over: %q", c.Name(), rep.CarriedOver)
		}
	}
	if want := "pt-BR/: " + strings.Join(took, ", ") + " imported as pt-BR translations"; !slices.ContainsFunc(rep.Notes, func(n string) bool { return strings.HasPrefix(n, want) }) {
		t.Errorf("the report does not say %q: %q", want, rep.Notes)
	}

	before, _, err := loadEdition(st, prevID)
	if err != nil {
		t.Fatal(err)
	}
	ed, _, err := loadEdition(st, id)
	if err != nil {
		t.Fatal(err)
	}
	checkEdition(t, ed)
	if !slices.Equal(ed.UUIDs(catalog.Buddies), before.UUIDs(catalog.Buddies)) || len(ed.UUIDs(catalog.Buddies)) == 0 {
		t.Errorf("carried-over buddies: %d items, the 2021 version has %d", len(ed.UUIDs(catalog.Buddies)), len(before.UUIDs(catalog.Buddies)))
	}

	// The report: the fields the contract does not name, once per catalog
	// and field, first seen in this version (the 2021 one had none).
	raw := map[catalog.Category][]rawItem{}
	var want []catalog.Unknown
	for _, f := range answers {
		c, ok := catalog.CategoryNamed(strings.TrimSuffix(f, ".json"))
		if !ok {
			t.Fatalf("no catalog for %s", f)
		}
		raw[c] = readData(t, src, f)
		want = append(want, topLevelUnknown(t, c, raw[c], id)...)
	}
	// In catalog order, as Validate lists them.
	slices.SortStableFunc(want, func(a, b catalog.Unknown) int { return int(a.Category) - int(b.Category) })
	for _, field := range []string{"background", "backgroundGradientColors", "fullPortraitV2"} {
		if !slices.ContainsFunc(want, func(u catalog.Unknown) bool { return u.Category == catalog.Agents && u.Field == field }) {
			t.Fatalf("the 2023 agents have no %s: the data is not what its README says", field)
		}
	}
	if len(before.Unknown) != 0 {
		t.Errorf("the 2021 version has unknown fields: %v", before.Unknown)
	}
	if !reflect.DeepEqual(rep.Unknown, want) {
		t.Errorf("report's unknown fields:\n got %+v\nwant %+v", rep.Unknown, want)
	}
	if !reflect.DeepEqual(ed.Unknown, want) {
		t.Errorf("the stored edition's unknown fields:\n got %+v\nwant %+v", ed.Unknown, want)
	}
	if head := fmt.Sprintf("fields the contract does not describe (served as sent): %d\n", len(want)); !strings.Contains(out.String(), head) {
		t.Errorf("the report does not say %q:\n%s", head, out.String())
	}
	for _, u := range want {
		if n := strings.Count(out.String(), u.Category.Name()+": "+u.Field+" in "); n != 1 {
			t.Errorf("the report names %s %s %d times, want once:\n%s", u.Category.Name(), u.Field, n, out.String())
		}
		if !strings.Contains(out.String(), u.String()) {
			t.Errorf("the report does not say %q", u.String())
		}
	}

	// Defaults filled for the fields the 2023 maps lack (a later contract's),
	// counted per field.
	for _, field := range []string{"listViewIconTall", "narrativeDescription", "premierBackgroundImage", "stylizedBackgroundImage", "tacticalDescription"} {
		lack := 0
		for _, m := range raw[catalog.Maps] {
			if _, ok := m[field]; !ok {
				lack++
			}
		}
		if got := rep.Fills[catalog.Fill{Schema: "Map", Field: field, Value: "<nil>"}]; got != lack || lack == 0 {
			t.Errorf("Map.%s filled %d times, %d maps lack it", field, got, lack)
		}
	}

	// The agents' new fields, as sent, in every body holding an agent.
	agents := raw[catalog.Agents]
	unknownAgent := []string{}
	for _, u := range want {
		if u.Category == catalog.Agents {
			unknownAgent = append(unknownAgent, u.Field)
		}
	}
	lists := map[int]map[string]map[string]any{}
	for loc := range catalog.NumLocales + 1 {
		byID := map[string]map[string]any{}
		for _, it := range envelopeData(t, "agents list", apitest.JSON(t, ed.List(catalog.Agents, loc))).([]any) {
			m := it.(map[string]any)
			byID[m["uuid"].(string)] = m
		}
		for _, playable := range []bool{false, true} {
			for _, it := range envelopeData(t, "agents filtered", apitest.JSON(t, ed.Filtered(catalog.Agents, "isPlayableCharacter", playable, loc))).([]any) {
				m := it.(map[string]any)
				if id := m["uuid"].(string); !reflect.DeepEqual(m, byID[id]) {
					t.Errorf("agents?isPlayableCharacter=%v&language=%s: %s differs from the list's", playable, langName(loc), id)
				}
			}
		}
		lists[loc] = byID
	}
	ptBR, _ := catalog.ParseLocale("pt-BR")
	for _, a := range agents {
		uuid := a["uuid"].(string)
		for loc := range catalog.NumLocales + 1 {
			one := bodyItem(t, ed, catalog.Agents, uuid, loc)
			for _, f := range unknownAgent {
				if !reflect.DeepEqual(one[f], a[f]) {
					t.Errorf("agents/%s?language=%s: %s = %v, sent %v", uuid, langName(loc), f, one[f], a[f])
				}
				if !reflect.DeepEqual(lists[loc][uuid][f], a[f]) {
					t.Errorf("agents?language=%s, %s: %s = %v, sent %v", langName(loc), uuid, f, lists[loc][uuid][f], a[f])
				}
			}
		}
		// pt-BR serves the answers' pt-BR text.
		if got := bodyItem(t, ed, catalog.Agents, uuid, ptBR)["displayName"]; got != a["displayName"] {
			t.Errorf("agents/%s?language=pt-BR: displayName %v, sent %v", uuid, got, a["displayName"])
		}
	}

	// The diff names the new fields of every agent both versions have, and
	// adds and removes what the answers add and drop.
	body, err := st.ReadDiff(prevID, id)
	if err != nil {
		t.Fatal(err)
	}
	var d gen.DiffBody
	if err := json.Unmarshal(body, &d); err != nil {
		t.Fatal(err)
	}
	cats := categoriesOf(t, d.Data.Categories)
	total := 0
	for c, items := range raw {
		cd := cats[c.Name()]
		now := map[string]bool{}
		for _, it := range items {
			now[it["uuid"].(string)] = true
		}
		was := map[string]bool{}
		var added, removed []string
		for _, u := range before.UUIDs(c) {
			was[u.String()] = true
			if !now[u.String()] {
				removed = append(removed, u.String())
			}
		}
		for u := range now {
			if !was[u] {
				added = append(added, u)
			}
		}
		sort.Strings(added)
		sort.Strings(removed)
		if !slices.Equal(cd.Added, added) || !slices.Equal(cd.Removed, removed) {
			t.Errorf("%s: added %v removed %v, want added %v removed %v", c.Name(), cd.Added, cd.Removed, added, removed)
		}
		total += len(cd.Added) + len(cd.Removed) + len(cd.Changed)
	}
	changed := changedFields(cats[catalog.Agents.Name()])
	both := 0
	for _, a := range agents {
		uuid := a["uuid"].(string)
		if u, _ := catalog.ParseUUID(uuid); before.Item(catalog.Agents, u, catalog.DefaultLocale) == nil {
			continue
		}
		both++
		for _, f := range unknownAgent {
			if !slices.Contains(changed[uuid], f) {
				t.Errorf("agents/%s: changed %v lacks %s", uuid, changed[uuid], f)
			}
		}
	}
	if both == 0 || total == 0 {
		t.Errorf("%d agents in both versions, %d changes in the answers' catalogs: nothing checked", both, total)
	}
	if rep.Summary == nil || rep.Summary.TotalChanged < both {
		t.Errorf("report summary %+v, want at least %d changed", rep.Summary, both)
	}
}
