// Command fixturegen writes the sample data of the embedded snapshots
// (fixtures/versions/NN_<clientversion>/), deterministically: run from the
// module root, it leaves `git status fixtures/` clean. The REAL en-US catalogs,
// copied from the upstream captures (-captures), are only read. It writes the
// AUTHORED catalogs (catalogs.go, from the real data and testdata/authored.json;
// UUIDs are SHA-1 based on a stable name), the string tables under locres/ and
// the translations under <locale>/ (translations.go): REAL text from
// fixtures/l10n-skins, l10n-names and pt-BR-2023 (the -*-source flags refresh
// them from ../shared/data), else authored text. It stops when a catalog that
// l10n-names covers gets under 90 % of its real names in some locale.
package main

import (
	"bytes"
	"cmp"
	"crypto/sha1"
	"encoding/json"
	"flag"
	"fmt"
	"log"
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
)

// F is one field of an ordered JSON object.
type F struct {
	K string
	V any
}

// O is a JSON object whose fields are written in the given order.
type O []F

// MarshalJSON writes the fields in order, without HTML escaping.
func (o O) MarshalJSON() ([]byte, error) {
	b := []byte{'{'}
	for i, f := range o {
		if i > 0 {
			b = append(b, ',')
		}
		k, _ := marshal(f.K) // a string always marshals
		v, err := marshal(f.V)
		if err != nil {
			return nil, err
		}
		b = append(append(append(b, k...), ':'), v...)
	}
	return append(b, '}'), nil
}

func marshal(v any) ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	err := enc.Encode(v)
	return bytes.TrimRight(b.Bytes(), "\n"), err
}

// uuidFor derives a stable lowercase 8-4-4-4-12 UUID (version 5 layout) from
// a kind and a key.
func uuidFor(kind, key string) string {
	h := sha1.Sum([]byte("refdata-fixtures/" + kind + "/" + key))
	h[6] = (h[6] & 0x0f) | 0x50
	h[8] = (h[8] & 0x3f) | 0x80
	return fmt.Sprintf("%x-%x-%x-%x-%x", h[0:4], h[4:6], h[6:8], h[8:10], h[10:16])
}

const mediaHost = "https://media.valorant-api.com"

func media(kind, uuid, name string) string {
	return mediaHost + "/" + kind + "/" + uuid + "/" + name + ".png"
}

// mediaIf is media's URL when ok, else nil (a null field).
func mediaIf(ok bool, kind, uuid, name string) any {
	if ok {
		return media(kind, uuid, name)
	}
	return nil
}

var nonAlnum = regexp.MustCompile(`[^A-Za-z0-9]+`)

// pascal turns a display name into an asset-path-friendly identifier.
func pascal(s string) string {
	var b strings.Builder
	for _, p := range nonAlnum.Split(s, -1) {
		if p == "" {
			continue
		}
		b.WriteString(strings.ToUpper(p[:1]) + p[1:])
	}
	return cmp.Or(b.String(), "Unnamed")
}

// commonWordPrefix is the longest common prefix, in whole words, of names.
func commonWordPrefix(names []string) string {
	prefix := strings.Fields(names[0])
	for _, n := range names[1:] {
		w := strings.Fields(n)
		i := 0
		for i < len(prefix) && i < len(w) && prefix[i] == w[i] {
			i++
		}
		prefix = prefix[:i]
	}
	return strings.Join(prefix, " ")
}

func writeJSON(path string, v any) {
	var out bytes.Buffer
	enc := json.NewEncoder(&out)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(v); err != nil {
		log.Fatalf("%s: %v", path, err)
	}
	writeFile(path, out.Bytes())
}

func writeFile(path string, b []byte) {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		log.Fatal(err)
	}
	if err := os.WriteFile(path, b, 0o644); err != nil {
		log.Fatal(err)
	}
}

func envelope(data any) O { return O{{"status", 200}, {"data", data}} }

// readData decodes the "data" member of an enveloped file (or a bare value).
func readData(path string, v any) {
	b, err := os.ReadFile(path)
	if err != nil {
		log.Fatal(err)
	}
	var env struct {
		Data json.RawMessage `json:"data"`
	}
	if json.Unmarshal(b, &env) == nil && env.Data != nil { // an array does not unmarshal into env
		b = env.Data
	}
	if err := json.Unmarshal(b, v); err != nil {
		log.Fatalf("%s: %v", path, err)
	}
}

// Real data, read-only views. The types only read have no field tags:
// encoding/json matches "themeUuid" to ThemeUUID, ignoring case.

type skin struct {
	UUID, DisplayName          string
	ThemeUUID, ContentTierUUID *string
	Chromas, Levels            []named
}

type shopData struct {
	Category     string `json:"category"`
	CategoryText string `json:"categoryText"`
}

type weapon struct {
	UUID, DisplayName string
	ShopData          *shopData
	Skins             []skin
}

// leveled is a buddy or a spray.
type leveled struct {
	UUID, DisplayName string
	ThemeUUID         *string
	Levels            []named
}

type season struct {
	UUID, DisplayName, StartTime, EndTime, AssetPath string
	ParentUUID                                       *string
}

type tier struct {
	Tier         int    `json:"tier"`
	TierName     string `json:"tierName"`
	Division     string `json:"division"`
	DivisionName string `json:"divisionName"`
}

type tierSet struct {
	UUID            string `json:"uuid"`
	AssetObjectName string `json:"assetObjectName"`
	Tiers           []tier `json:"tiers"`
}

type named struct{ UUID, DisplayName string }

type bundle struct {
	UUID, DisplayName string
	ExtraDescription  *string
}

type gameMap struct {
	UUID        string    `json:"uuid"`
	DisplayName string    `json:"displayName"`
	Callouts    []callout `json:"callouts"`
}

type realData struct {
	weapons   []weapon
	buddies   []leveled
	seasons   []season
	tierSets  []tierSet
	maps      []gameMap
	titles    []named
	sprays    []leveled
	cards     []named
	contracts []named
	bundles   []bundle
	agents    []agent
}

// files are the REAL en-US files, by name without .json: copied byte for byte
// from the captures (copyReal, version.json aside) and read into r (loadReal).
func (r *realData) files() map[string]any {
	return map[string]any{
		"weapons": &r.weapons, "buddies": &r.buddies, "maps": &r.maps, "seasons": &r.seasons,
		"competitivetiers": &r.tierSets, "playertitles": &r.titles, "agents": &r.agents,
		"bundles": &r.bundles, "contracts": &r.contracts, "playercards": &r.cards, "sprays": &r.sprays,
	}
}

func loadReal(dir string) realData {
	var r realData
	for f, v := range r.files() {
		readData(filepath.Join(dir, "en-US", f+".json"), v)
	}
	return r
}

func copyReal(captures, dir string) {
	src := filepath.Join(captures, filepath.Base(dir))
	cp := func(from, to string) {
		b, err := os.ReadFile(from)
		if err != nil {
			log.Fatal(err)
		}
		writeFile(to, b)
	}
	cp(filepath.Join(src, "version.json"), filepath.Join(dir, "version.json"))
	for f := range (&realData{}).files() {
		cp(filepath.Join(src, f+".json"), filepath.Join(dir, "en-US", f+".json"))
	}
}

// copyL10n copies the names of src/<locale>.json (uuid -> name) that the
// snapshots have into dst.
func copyL10n(src, dst string, dirs []string) {
	keep := snapshotKeys(dirs)
	for loc, names := range loadL10n(src) {
		maps.DeleteFunc(names, func(id, _ string) bool { return !keep[id] })
		writeJSON(filepath.Join(dst, loc+".json"), names)
	}
}

// loadL10n reads dir/<locale>.json for every locale: locale -> uuid -> name.
func loadL10n(dir string) map[string]map[string]string {
	out := map[string]map[string]string{}
	for _, loc := range locales {
		var names map[string]string
		readData(filepath.Join(dir, loc+".json"), &names)
		out[loc] = names
	}
	return out
}

// localeText is one locale's authored translations (testdata/authored.json):
// a text there is used only where no real source has the same field
// (translations.go).
type localeText struct {
	Weapons   map[string]string    // English weapon name -> name
	Maps      map[string]string    // English map name -> name
	Titles    map[string][2]string // English title displayName -> {displayName, titleText}
	Tiers     map[string]string    // English tierName/divisionName -> text
	Radianite [2]string            // currency "radianite": {displayName, displayNameSingular}
	Modes     map[string][2]string // English mode name -> {displayName, description ("" = keep)}
}

func must(ok bool, format string, args ...any) {
	if !ok {
		log.Fatalf(format, args...)
	}
}

var locales = []string{"ar-AE", "de-DE", "en-US", "es-ES", "es-MX", "fr-FR", "id-ID", "it-IT", "ja-JP", "ko-KR", "pl-PL", "pt-BR", "ru-RU", "th-TH", "tr-TR", "vi-VN", "zh-CN", "zh-TW"}

// otherLocales are the locales but en-US: those a snapshot translates into.
var otherLocales = slices.DeleteFunc(slices.Clone(locales), func(l string) bool { return l == "en-US" })

var verPrefix = regexp.MustCompile(`^(\d+)_`)

func main() {
	root := flag.String("dir", "fixtures/versions", "directory holding the NN_<clientversion> snapshots")
	captures := flag.String("captures", "", "if set, first copy the REAL files byte for byte from this capture directory (e.g. ../shared/data/upstream-en-US)")
	l10nDir := flag.String("l10n", "fixtures/l10n-skins", "directory holding the REAL skin, chroma and level names, <locale>.json")
	l10nSource := flag.String("l10n-source", "", "if set, first copy into -l10n the names of this directory (e.g. ../shared/data/l10n-skins) for the uuids of the snapshots")
	namesDir := flag.String("names", "fixtures/l10n-names", "directory holding the REAL names of more catalogs, <catalog>/<locale>.json")
	namesSource := flag.String("names-source", "", "if set, first copy into -names the items of this directory (e.g. ../shared/data/l10n-names) that the snapshots have")
	ptDir := flag.String("pt-br", "fixtures/pt-BR-2023", "directory holding the REAL pt-BR answers of 2023 (agents, maps, competitivetiers, weapons)")
	ptSource := flag.String("pt-br-source", "", "if set, first copy into -pt-br the text of this directory (e.g. ../shared/data/upstream-2023-pt-BR) for the items of the snapshots")
	table := flag.Bool("coverage", false, "also print, as a Markdown table, the share of items with real text per catalog and locale in the newest version (fixtures/README.md)")
	flag.Parse()

	entries, err := os.ReadDir(*root)
	if err != nil {
		log.Fatal(err)
	}
	var dirs []string
	for _, e := range entries {
		if e.IsDir() && verPrefix.MatchString(e.Name()) {
			dirs = append(dirs, filepath.Join(*root, e.Name()))
		}
	}
	if *captures != "" {
		for _, dir := range dirs {
			copyReal(*captures, dir)
		}
	}
	if *l10nSource != "" {
		copyL10n(*l10nSource, *l10nDir, dirs)
	}
	if *namesSource != "" {
		copyNames(*namesSource, *namesDir, dirs)
	}
	if *ptSource != "" {
		copyPtBR(*ptSource, *ptDir, dirs)
	}
	src := sources{skins: loadL10n(*l10nDir), names: loadNames(*namesDir), ptBR: loadPtBR(*ptDir)}
	var newest *coverage
	for _, dir := range dirs {
		name := filepath.Base(dir)
		ver, _ := strconv.Atoi(verPrefix.FindStringSubmatch(name)[1])
		r := loadReal(dir)
		en := filepath.Join(dir, "en-US")
		writeJSON(filepath.Join(en, "themes.json"), envelope(themes(r)))
		writeJSON(filepath.Join(en, "currencies.json"), envelope(currencies(ver)))
		writeJSON(filepath.Join(en, "levelborders.json"), envelope(levelBorders()))
		writeJSON(filepath.Join(en, "flex.json"), envelope(flex()))
		writeJSON(filepath.Join(en, "events.json"), envelope(events(ver)))
		writeJSON(filepath.Join(en, "gamemodes.json"), envelope(gameModes()))
		writeJSON(filepath.Join(en, "gamemodes-equippables.json"), envelope(equippables()))
		writeJSON(filepath.Join(en, "seasons-competitive.json"), envelope(competitiveSeasons(r)))
		writeJSON(filepath.Join(en, "premier-conferences.json"), envelope(premierConferences()))
		writeJSON(filepath.Join(en, "premier-logos.json"), envelope(premierLogos()))
		writeJSON(filepath.Join(en, "contenttiers.json"), envelope(contentTiers(r)))
		writeJSON(filepath.Join(en, "gear.json"), envelope(gear()))
		writeJSON(filepath.Join(en, "ceremonies.json"), envelope(ceremonies()))
		writeJSON(filepath.Join(en, "objectives.json"), envelope(objectives()))
		writeJSON(filepath.Join(en, "missions.json"), envelope(missions(ver)))
		for _, loc := range otherLocales { // a file no source fills any more must not linger
			if err := os.RemoveAll(filepath.Join(dir, loc)); err != nil {
				log.Fatal(err)
			}
		}
		cov := writeTranslations(dir, ver, r, src)
		writeLocres(dir, ver)
		fmt.Printf("fixturegen: wrote authored data for %s\n", name)
		cov.print(name)
		checkNames(dir, r, src)
		newest = cov
	}
	if len(dirs) == 0 {
		log.Fatalf("no NN_<clientversion> directories under %s", *root)
	}
	if *table {
		fmt.Print(newest.markdown())
	}
}
