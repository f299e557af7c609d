// Command fixturegen writes the AUTHORED sample data and the translations of
// the embedded fixture snapshots (fixtures/versions/NN_<clientversion>/).
//
// The REAL catalogs (version.json and en-US/{weapons,buddies,maps,seasons,
// competitivetiers,playertitles,agents,bundles,contracts,playercards,
// sprays}.json) are copied byte for byte from the upstream captures and are
// only read here, never rewritten. Pass -captures to (re)copy them from a
// capture directory first.
//
// Authored (catalogs.go and below): themes, currencies, level borders, flex
// items, events, game modes and their equippables, competitive seasons,
// premier conferences and logos, content tiers, gear, ceremonies, missions,
// objectives and the string tables under locres/. They are derived
// deterministically from the real data and the tables in these files: no
// randomness, UUIDs are SHA-1 based (v5-style) on a stable name (except the
// content tiers' and currencies', which are the real ones).
//
// Translations (translations.go), the partial items under <locale>/: REAL
// text where the repository has it — fixtures/l10n-skins (skins, chromas,
// levels), fixtures/l10n-names (buddies, sprays, player cards and titles,
// bundles, currencies, weapons, contracts), fixtures/pt-BR-2023 (pt-BR
// agents, maps and callouts, rank names, weapon shop categories) — else the
// authored table `translations`. The -source flags refresh those copies from
// ../shared/data first; without them the generator reads the repository only.
// It prints, per version, how many items of each catalog got real text in
// each locale, and stops when a catalog that l10n-names covers gets fewer
// than 90 % of its named items' real names somewhere. Running
//
//	go run ./tools/fixturegen
//
// from the module root twice yields identical files. Flags:
//
//	-captures ../shared/data/upstream-en-US       re-copy the REAL files first
//	-l10n-source ../shared/data/l10n-skins        refresh fixtures/l10n-skins
//	-names-source ../shared/data/l10n-names       refresh fixtures/l10n-names
//	-pt-br-source ../shared/data/upstream-2023-pt-BR
//	                                              refresh fixtures/pt-BR-2023
//	-coverage                                     print the README's table of real text
package main

import (
	"bytes"
	"crypto/sha1"
	"encoding/json"
	"flag"
	"fmt"
	"log"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
)

// ---------------------------------------------------------------------------
// Ordered JSON objects.

// F is one field of an ordered JSON object.
type F struct {
	K string
	V any
}

// O is a JSON object whose fields are written in the given order.
type O []F

// MarshalJSON writes the fields in order, without HTML escaping.
func (o O) MarshalJSON() ([]byte, error) {
	var b bytes.Buffer
	b.WriteByte('{')
	for i, f := range o {
		if i > 0 {
			b.WriteByte(',')
		}
		k, err := marshal(f.K)
		if err != nil {
			return nil, err
		}
		b.Write(k)
		b.WriteByte(':')
		v, err := marshal(f.V)
		if err != nil {
			return nil, err
		}
		b.Write(v)
	}
	b.WriteByte('}')
	return b.Bytes(), nil
}

func marshal(v any) ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimRight(b.Bytes(), "\n"), nil
}

// ---------------------------------------------------------------------------
// Helpers.

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

var nonAlnum = regexp.MustCompile(`[^A-Za-z0-9]+`)

// pascal turns a display name into an asset-path-friendly identifier.
func pascal(s string) string {
	parts := nonAlnum.Split(s, -1)
	var b strings.Builder
	for _, p := range parts {
		if p == "" {
			continue
		}
		b.WriteString(strings.ToUpper(p[:1]) + p[1:])
	}
	if b.Len() == 0 {
		return "Unnamed"
	}
	return b.String()
}

// commonWordPrefix is the longest common prefix, in whole words, of names.
func commonWordPrefix(names []string) string {
	if len(names) == 0 {
		return ""
	}
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
	b, err := marshal(v)
	if err != nil {
		log.Fatalf("%s: %v", path, err)
	}
	var out bytes.Buffer
	if err := json.Indent(&out, b, "", "  "); err != nil {
		log.Fatalf("%s: %v", path, err)
	}
	out.WriteByte('\n')
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		log.Fatal(err)
	}
	if err := os.WriteFile(path, out.Bytes(), 0o644); err != nil {
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
	if bytes.HasPrefix(bytes.TrimSpace(b), []byte("{")) {
		if err := json.Unmarshal(b, &env); err == nil && env.Data != nil {
			b = env.Data
		}
	}
	if err := json.Unmarshal(b, v); err != nil {
		log.Fatalf("%s: %v", path, err)
	}
}

// ---------------------------------------------------------------------------
// Real data, read-only views.

type chroma struct {
	UUID        string `json:"uuid"`
	DisplayName string `json:"displayName"`
}

type skin struct {
	UUID            string   `json:"uuid"`
	DisplayName     string   `json:"displayName"`
	ThemeUUID       *string  `json:"themeUuid"`
	ContentTierUUID *string  `json:"contentTierUuid"`
	Chromas         []chroma `json:"chromas"`
	Levels          []chroma `json:"levels"`
}

type shopData struct {
	Category     string `json:"category"`
	CategoryText string `json:"categoryText"`
}

type weapon struct {
	UUID        string    `json:"uuid"`
	DisplayName string    `json:"displayName"`
	ShopData    *shopData `json:"shopData"`
	Skins       []skin    `json:"skins"`
}

type buddy struct {
	UUID        string   `json:"uuid"`
	DisplayName string   `json:"displayName"`
	ThemeUUID   *string  `json:"themeUuid"`
	Levels      []chroma `json:"levels"`
}

type season struct {
	UUID        string  `json:"uuid"`
	DisplayName string  `json:"displayName"`
	StartTime   string  `json:"startTime"`
	EndTime     string  `json:"endTime"`
	ParentUUID  *string `json:"parentUuid"`
	AssetPath   string  `json:"assetPath"`
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

type named struct {
	UUID        string `json:"uuid"`
	DisplayName string `json:"displayName"`
}

type spray struct {
	UUID        string   `json:"uuid"`
	DisplayName string   `json:"displayName"`
	Levels      []chroma `json:"levels"`
}

type bundle struct {
	UUID             string  `json:"uuid"`
	DisplayName      string  `json:"displayName"`
	ExtraDescription *string `json:"extraDescription"`
}

type ability struct {
	Slot string `json:"slot"`
}

type agent struct {
	UUID          string   `json:"uuid"`
	DisplayName   string   `json:"displayName"`
	CharacterTags []string `json:"characterTags"`
	Role          *struct {
		UUID string `json:"uuid"`
	} `json:"role"`
	Abilities []ability `json:"abilities"`
}

type gameMap struct {
	UUID        string    `json:"uuid"`
	DisplayName string    `json:"displayName"`
	Callouts    []callout `json:"callouts"`
}

type realData struct {
	weapons   []weapon
	buddies   []buddy
	seasons   []season
	tierSets  []tierSet
	maps      []gameMap
	titles    []named
	sprays    []spray
	cards     []named
	contracts []named
	bundles   []bundle
	agents    []agent
}

func loadReal(dir string) realData {
	var r realData
	en := filepath.Join(dir, "en-US")
	readData(filepath.Join(en, "weapons.json"), &r.weapons)
	readData(filepath.Join(en, "buddies.json"), &r.buddies)
	readData(filepath.Join(en, "seasons.json"), &r.seasons)
	readData(filepath.Join(en, "competitivetiers.json"), &r.tierSets)
	readData(filepath.Join(en, "maps.json"), &r.maps)
	readData(filepath.Join(en, "playertitles.json"), &r.titles)
	readData(filepath.Join(en, "sprays.json"), &r.sprays)
	readData(filepath.Join(en, "playercards.json"), &r.cards)
	readData(filepath.Join(en, "contracts.json"), &r.contracts)
	readData(filepath.Join(en, "bundles.json"), &r.bundles)
	readData(filepath.Join(en, "agents.json"), &r.agents)
	return r
}

// realFiles are copied byte for byte from the captures (into en-US/ except
// version.json).
var realFiles = []string{"weapons", "buddies", "maps", "seasons", "competitivetiers", "playertitles", "agents", "bundles", "contracts", "playercards", "sprays"}

func copyReal(captures, dir string) {
	name := filepath.Base(dir)
	src := filepath.Join(captures, name)
	cp := func(from, to string) {
		b, err := os.ReadFile(from)
		if err != nil {
			log.Fatal(err)
		}
		if err := os.MkdirAll(filepath.Dir(to), 0o755); err != nil {
			log.Fatal(err)
		}
		if err := os.WriteFile(to, b, 0o644); err != nil {
			log.Fatal(err)
		}
	}
	cp(filepath.Join(src, "version.json"), filepath.Join(dir, "version.json"))
	for _, f := range realFiles {
		cp(filepath.Join(src, f+".json"), filepath.Join(dir, "en-US", f+".json"))
	}
}

// ---------------------------------------------------------------------------
// Real localized names of skins, chromas and levels.

// skinUUIDs lists the uuids of every skin, chroma and level of a snapshot.
func skinUUIDs(dir string, into map[string]bool) {
	for _, w := range loadReal(dir).weapons {
		for _, s := range w.Skins {
			into[s.UUID] = true
			for _, e := range append(append([]chroma{}, s.Chromas...), s.Levels...) {
				into[e.UUID] = true
			}
		}
	}
}

// copyL10n copies the names of the skins, chromas and levels of the snapshots
// from src/<locale>.json (uuid -> name) into dst, leaving out the other uuids.
func copyL10n(src, dst string, dirs []string) {
	keep := map[string]bool{}
	for _, d := range dirs {
		skinUUIDs(d, keep)
	}
	for _, loc := range locales {
		var names map[string]string
		readData(filepath.Join(src, loc+".json"), &names)
		out := map[string]string{}
		for id, n := range names {
			if keep[id] {
				out[id] = n
			}
		}
		writeJSON(filepath.Join(dst, loc+".json"), out)
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

// ---------------------------------------------------------------------------
// Authored catalogs.

// themes: one record per distinct themeUuid of a skin or a buddy.
func themes(r realData) []O {
	skinNames := map[string][]string{} // theme -> weapon-suffixed skin names minus weapon
	otherNames := map[string][]string{}
	buddyNames := map[string][]string{}
	for _, w := range r.weapons {
		for _, s := range w.Skins {
			if s.ThemeUUID == nil || *s.ThemeUUID == "" {
				continue
			}
			t := *s.ThemeUUID
			if base, ok := strings.CutSuffix(s.DisplayName, " "+w.DisplayName); ok {
				skinNames[t] = append(skinNames[t], base)
			} else {
				otherNames[t] = append(otherNames[t], s.DisplayName)
			}
		}
	}
	for _, b := range r.buddies {
		if b.ThemeUUID == nil || *b.ThemeUUID == "" {
			continue
		}
		buddyNames[*b.ThemeUUID] = append(buddyNames[*b.ThemeUUID], strings.TrimSuffix(b.DisplayName, " Buddy"))
	}
	ids := map[string]bool{}
	for _, m := range []map[string][]string{skinNames, otherNames, buddyNames} {
		for id := range m {
			ids[id] = true
		}
	}
	var out []O
	for id := range ids {
		var name string
		fromSkins := len(skinNames[id])+len(otherNames[id]) > 0
		switch {
		case len(skinNames[id]) > 0:
			// "Glitchpop Odin","Glitchpop Vandal" -> "Glitchpop"; a single
			// weapon skin gives its name without the weapon.
			name = commonWordPrefix(skinNames[id])
		case len(otherNames[id]) > 0:
			// Melee-only themes: common prefix; a lone name drops its last
			// word (the blade type) when it has more than one.
			name = commonWordPrefix(otherNames[id])
			if len(otherNames[id]) == 1 {
				if w := strings.Fields(name); len(w) > 1 {
					name = strings.Join(w[:len(w)-1], " ")
				}
			}
		default:
			name = commonWordPrefix(buddyNames[id])
			if name == "" {
				n := append([]string(nil), buddyNames[id]...)
				sort.Strings(n)
				name = n[0]
			}
		}
		if name == "" {
			name = "Standard"
		}
		var featured any
		if fromSkins && len(skinNames[id])+len(otherNames[id]) >= 4 {
			featured = media("themes", id, "storefeaturedimage")
		}
		var icon any = media("themes", id, "displayicon")
		if name == "Standard" {
			icon = nil
		}
		p := pascal(name)
		out = append(out, O{
			{"uuid", id},
			{"displayName", name},
			{"displayIcon", icon},
			{"storeFeaturedImage", featured},
			{"assetPath", "ShooterGame/Content/Themes/" + p + "/Theme_" + p + "_DataAsset"},
		})
	}
	sort.Slice(out, func(i, j int) bool {
		a, b := out[i][1].V.(string), out[j][1].V.(string)
		if a != b {
			return a < b
		}
		return out[i][0].V.(string) < out[j][0].V.(string)
	})
	return out
}

// currencyDef is one currency. The uuids are the real currencies' (the real
// contracts' rewards name Radianite and Free Agents by them, and l10n-names
// has their real names), not uuidFor's.
type currencyDef struct {
	uuid, key, name, singular, asset string
	large, preview                   bool
}

func currencyDefs(ver int) []currencyDef {
	radianite := "Radianite"
	if ver >= 15 {
		radianite = "Radianite Points" // renamed in 15: shows up as a changed item
	}
	return []currencyDef{
		{"85ad13f7-3d1b-5128-9eb2-7cd8ee0b5741", "vp", "VALORANT Points", "VALORANT Point", "ShooterGame/Content/Currencies/Currency_AresPoints_DataAsset", true, true},
		{"e59aa87c-4cbf-517a-5983-6e81511be9b7", "radianite", radianite, "Radianite Point", "ShooterGame/Content/Currencies/Currency_UpgradeToken_DataAsset", true, true},
		{"85ca954a-41f2-ce94-9b45-8ca3dd39a00d", "kingdom", "Kingdom Credits", "Kingdom Credit", "ShooterGame/Content/Currencies/Currency_KingdomCredits_DataAsset", true, false},
		{"f08d4ae3-939c-4576-ab26-09ce1f23bb37", "freeagents", "Free Agents", "Free Agent", "", false, false},
	}
}

func currencies(ver int) []O {
	var out []O
	for _, c := range currencyDefs(ver) {
		id := c.uuid
		var large, preview, asset any
		if c.large {
			large = media("currencies", id, "largeicon")
		}
		if c.preview {
			preview = media("currencies", id, "rewardpreviewicon")
		}
		if c.asset != "" {
			asset = c.asset
		}
		out = append(out, O{
			{"uuid", id},
			{"displayName", c.name},
			{"displayNameSingular", c.singular},
			{"displayIcon", media("currencies", id, "displayicon")},
			{"largeIcon", large},
			{"rewardPreviewIcon", preview},
			{"assetPath", asset},
		})
	}
	return out
}

func levelBorders() []O {
	var out []O
	for lvl := 0; lvl <= 200; lvl += 20 {
		start := lvl
		if start == 0 {
			start = 1
		}
		id := uuidFor("levelborder", fmt.Sprint(start))
		out = append(out, O{
			{"uuid", id},
			{"displayName", fmt.Sprintf("Level %d Border", start)},
			{"startingLevel", start},
			{"levelNumber", nil},
			{"levelNumberAppearance", media("levelborders", id, "levelnumberappearance")},
			{"smallPlayerCardAppearance", media("levelborders", id, "smallplayercardappearance")},
			{"assetPath", fmt.Sprintf("ShooterGame/Content/Personalization/LevelBorders/LevelBorder_%d_PrimaryAsset", start)},
		})
	}
	return out
}

func flex() []O {
	items := []struct {
		name string
		icon bool
	}{
		{"Champions 2021 Flex", true},
		{"Radianite Crate Flex", true},
		{"Snowball Flex", false},
	}
	var out []O
	for _, it := range items {
		id := uuidFor("flex", it.name)
		var icon any
		if it.icon {
			icon = media("flex", id, "displayicon")
		}
		out = append(out, O{
			{"uuid", id},
			{"displayName", it.name},
			{"displayIcon", icon},
			{"assetPath", "ShooterGame/Content/Personalization/Flex/" + pascal(it.name) + "_PrimaryAsset"},
		})
	}
	return out
}

func events(ver int) []O {
	type ev struct{ key, name, short, start, end string }
	list := []ev{
		{"champions2021", "VCT Champions 2021", "Champions", "2021-11-16T00:00:00Z", "2021-12-13T00:00:00Z"},
		{"e3a3", "Episode 3 Act III", "E3 // A3", "2021-11-02T00:00:00Z", "2022-01-11T00:00:00Z"},
		{"placeholder", "", "", "2021-10-01T00:00:00Z", "2021-10-02T00:00:00Z"},
	}
	if ver >= 15 {
		list = append(list, ev{"winterwunderland2021", "Winterwunderland 2021", "Winterwunderland", "2021-12-14T00:00:00Z", "2022-01-10T00:00:00Z"})
	}
	var out []O
	for _, e := range list {
		out = append(out, O{
			{"uuid", uuidFor("event", e.key)},
			{"displayName", e.name},
			{"shortDisplayName", e.short},
			{"startTime", e.start},
			{"endTime", e.end},
			{"assetPath", "ShooterGame/Content/Events/Event_" + pascal(e.key) + "_DataAsset"},
		})
	}
	return out
}

type gameModeDef struct {
	name, desc      string
	duration, econ  any
	timeouts, voice bool
	minimapHidden   bool
	orbs, rph       int
	replays         bool
	roles           any
	features, rules any
	icon, tall      bool
	asset           string
}

func gameModeDefs() []gameModeDef {
	return []gameModeDef{
		{"Standard", "Plant or defuse the Spike. First team to win 13 rounds wins the match.", "25 min", "EAresEconomyType::Standard", true, true, false, 4, 12, true, nil, nil, nil, true, true, "ShooterGame/Content/GameModes/Bomb/BombGameMode.BombGameMode_C"},
		{"Deathmatch", "Every player for themselves. First to 40 kills or the most kills when time runs out wins.", "9 min", nil, false, false, true, 0, 0, false, nil,
			[]O{{{"featureName", "EGameFeature::AllowShoppingInAllAreas"}, {"state", true}}},
			[]O{{{"ruleName", "EGameRule::SkipPregame"}, {"state", true}}}, true, true, "ShooterGame/Content/GameModes/Deathmatch/DeathmatchGameMode.DeathmatchGameMode_C"},
		{"Spike Rush", "Attack or defend the Spike with a random weapon for everyone. First team to win 4 rounds wins.", "8-12 min", "EAresEconomyType::Fixed", false, true, false, 4, 3, true, nil,
			[]O{{{"featureName", "EGameFeature::UltimatePoints"}, {"state", false}}}, nil, true, true, "ShooterGame/Content/GameModes/QuickBomb/QuickBombGameMode.QuickBombGameMode_C"},
		{"Escalation", "Race through 12 weapon levels as a team. First team to level 12 or with the highest level wins.", "10 min", nil, false, true, false, 0, 0, false, []string{"TeamOne", "TeamTwo"}, nil,
			[]O{{{"ruleName", "EGameRule::AllowMidRoundRespawn"}, {"state", true}}}, true, false, "ShooterGame/Content/GameModes/GunGame/GunGameTeamsGameMode.GunGameTeamsGameMode_C"},
		{"Snowball Fight", "Holiday mode: frosty projectiles only. First team to 50 eliminations wins.", "10 min", nil, false, true, true, 0, 0, false, []string{"Red", "Blue"}, nil, nil, true, false, "ShooterGame/Content/GameModes/SnowballFight/SnowballFightGameMode.SnowballFightGameMode_C"},
		{"The Range", "Practice movement, weapons and abilities.", nil, nil, false, false, false, 0, 0, false, nil, nil, nil, false, false, "ShooterGame/Content/GameModes/ShootingRange/ShootingRangeGameMode.ShootingRangeGameMode_C"},
	}
}

func gameModes() []O {
	var out []O
	for _, g := range gameModeDefs() {
		id := uuidFor("gamemode", g.name)
		var icon, tall any
		if g.icon {
			icon = media("gamemodes", id, "displayicon")
		}
		if g.tall {
			tall = media("gamemodes", id, "listviewicontall")
		}
		out = append(out, O{
			{"uuid", id},
			{"displayName", g.name},
			{"description", g.desc},
			{"duration", g.duration},
			{"economyType", g.econ},
			{"allowsMatchTimeouts", g.timeouts},
			{"isTeamVoiceAllowed", g.voice},
			{"isMinimapHidden", g.minimapHidden},
			{"orbCount", g.orbs},
			{"roundsPerHalf", g.rph},
			{"allowsCustomGameReplays", g.replays},
			{"teamRoles", g.roles},
			{"gameFeatureOverrides", g.features},
			{"gameRuleBoolOverrides", g.rules},
			{"displayIcon", icon},
			{"listViewIconTall", tall},
			{"assetPath", g.asset},
		})
	}
	return out
}

func equippables() []O {
	items := []struct{ name, cat, asset string }{
		{"Golden Gun", "EEquippableCategory::Sidearm", "ShooterGame/Content/Equippables/Guns/GameModes/GunGame/GoldenGun/GoldenGunPrimaryAsset"},
		{"Knife", "EEquippableCategory::Melee", "ShooterGame/Content/Equippables/Melee/GameModes/GunGame/GunGameMeleePrimaryAsset"},
		{"Snowball Launcher", "EEquippableCategory::Heavy", "ShooterGame/Content/Equippables/Guns/GameModes/SnowballFight/SnowballLauncherPrimaryAsset"},
	}
	var out []O
	for _, it := range items {
		id := uuidFor("gamemodeequippable", it.name)
		out = append(out, O{
			{"uuid", id},
			{"displayName", it.name},
			{"category", it.cat},
			{"displayIcon", media("gamemodeequippables", id, "displayicon")},
			{"killStreamIcon", media("gamemodeequippables", id, "killstreamicon")},
			{"assetPath", it.asset},
		})
	}
	return out
}

var episodeNum = regexp.MustCompile(`(?i)episode\s*(\d+)`)

// competitiveSeasons: one per act, joined to the tier set of the act's
// episode (matched by "EpisodeN" in assetObjectName, else the newest set).
func competitiveSeasons(r realData) []O {
	byUUID := map[string]season{}
	for _, s := range r.seasons {
		byUUID[s.UUID] = s
	}
	setFor := func(ep string) string {
		for _, ts := range r.tierSets {
			if m := episodeNum.FindStringSubmatch(ts.AssetObjectName); m != nil && m[1] == ep {
				return ts.UUID
			}
		}
		return r.tierSets[len(r.tierSets)-1].UUID
	}
	withBorders := map[string]bool{"Season_Episode3_Act2_DataAsset": true, "Season_Episode3_Act3_DataAsset": true}
	var out []O
	for _, s := range r.seasons {
		if s.ParentUUID == nil {
			continue
		}
		parent := byUUID[*s.ParentUUID]
		ep := ""
		if m := episodeNum.FindStringSubmatch(parent.DisplayName); m != nil {
			ep = m[1]
		} else if m := episodeNum.FindStringSubmatch(parent.AssetPath); m != nil {
			ep = m[1]
		}
		obj := filepath.Base(s.AssetPath) // Season_Episode3_Act2_DataAsset
		key := strings.TrimSuffix(strings.TrimPrefix(obj, "Season_"), "_DataAsset")
		id := uuidFor("competitiveseason", s.UUID)
		var borders any
		if withBorders[obj] {
			var bs []O
			for i, wins := range []int{9, 25, 50, 75, 100} {
				lvl := i + 1
				bid := uuidFor("competitiveseasonborder", fmt.Sprintf("%s/%d", s.UUID, lvl))
				var small any = media("competitiveseasonborders", bid, "smallicon")
				if lvl == 1 {
					small = nil
				}
				bs = append(bs, O{
					{"uuid", bid},
					{"level", lvl},
					{"winsRequired", wins},
					{"displayIcon", media("competitiveseasonborders", bid, "displayicon")},
					{"smallIcon", small},
					{"assetPath", fmt.Sprintf("ShooterGame/Content/Seasons/%s/SeasonBorder_%s_Lv%d_PrimaryAsset", key, key, lvl)},
				})
			}
			borders = bs
		}
		out = append(out, O{
			{"uuid", id},
			{"startTime", s.StartTime},
			{"endTime", s.EndTime},
			{"seasonUuid", s.UUID},
			{"competitiveTiersUuid", setFor(ep)},
			{"borders", borders},
			{"assetPath", "ShooterGame/Content/Seasons/" + key + "_CompetitiveSeason_DataAsset"},
		})
	}
	return out
}

func premierConferences() []O {
	items := []struct {
		key, name string
		super     bool
	}{
		{"EUROPE", "Europe", true},
		{"EU_CENTRAL_EAST", "EU Central East", false},
		{"EU_WEST", "EU West", false},
		{"NORTH_AMERICA", "North America", true},
		{"NA_US_EAST", "US East", false},
		{"NA_US_WEST", "US West", false},
	}
	var out []O
	for _, it := range items {
		id := uuidFor("premierconference", it.key)
		var icon any = media("premierconferences", id, "icon")
		if it.super {
			icon = nil
		}
		out = append(out, O{
			{"uuid", id},
			{"displayName", it.name},
			{"key", it.key},
			{"icon", icon},
			{"isSuper", it.super},
			{"assetPath", "ShooterGame/Content/Premier/Conferences/" + pascal(strings.ToLower(it.key)) + "_DataAsset"},
		})
	}
	return out
}

func premierLogos() []O {
	names := []string{"Phoenix Rising", "Spike Crest", "Radiant Wolf", "Viper Coil", "Ascent Gate", "Blank"}
	var out []O
	for _, n := range names {
		id := uuidFor("premierlogo", n)
		var iconName, icon any = "Icon_" + pascal(n), media("premierlogos", id, "displayicon")
		if n == "Blank" {
			iconName, icon = nil, nil
		}
		out = append(out, O{
			{"uuid", id},
			{"displayName", n},
			{"iconName", iconName},
			{"displayIcon", icon},
			{"assetPath", "ShooterGame/Content/Premier/Logos/" + pascal(n) + "_PrimaryAsset"},
		})
	}
	return out
}

// ---------------------------------------------------------------------------
// Authored translations (partial items per locale). A text here is used only
// where no real source has the same field (translations.go): real weapon
// names, player titles and Radianite's displayName replace these everywhere,
// and in pt-BR real map, tier and division names replace them too.

type localeText struct {
	weapons   map[string]string    // English weapon name -> name
	maps      map[string]string    // English map name -> name
	titles    map[string][2]string // English title displayName -> {displayName, titleText}
	tiers     map[string]string    // English tierName/divisionName -> text
	radianite [2]string            // currency "radianite": {displayName, displayNameSingular}
	modes     map[string][2]string // English mode name -> {displayName, description ("" = keep)}
}

var translations = map[string]localeText{
	"de-DE": {
		weapons:   map[string]string{"Melee": "Nahkampf"},
		maps:      map[string]string{"The Range": "Schießstand"},
		titles:    map[string][2]string{"Chicken Title": {"Hühnchen-Titel", "Hühnchen"}},
		tiers:     map[string]string{"UNRANKED": "UNGEWERTET", "IRON": "EISEN", "IRON 1": "EISEN 1", "IRON 2": "EISEN 2", "IRON 3": "EISEN 3", "IMMORTAL": "UNSTERBLICH", "IMMORTAL 1": "UNSTERBLICH 1"},
		radianite: [2]string{"Radianitpunkte", "Radianitpunkt"},
		modes: map[string][2]string{
			"Spike Rush": {"Spike-Rush", "Greife mit einer zufälligen Waffe für alle an oder verteidige die Spike. Das erste Team mit 4 Rundensiegen gewinnt."},
			"Escalation": {"Eskalation", ""},
		},
	},
	"fr-FR": {
		weapons:   map[string]string{"Melee": "Mêlée"},
		maps:      map[string]string{"The Range": "Champ de tir"},
		titles:    map[string][2]string{"Chicken Title": {"Titre Poulet", "Poulet"}},
		tiers:     map[string]string{"UNRANKED": "NON CLASSÉ", "IRON": "FER", "IRON 1": "FER 1", "IRON 2": "FER 2", "IRON 3": "FER 3", "IMMORTAL": "IMMORTEL", "IMMORTAL 1": "IMMORTEL 1"},
		radianite: [2]string{"Points de Radianite", "Point de Radianite"},
		modes: map[string][2]string{
			"Deathmatch": {"Combat à mort", "Chacun pour soi. Le premier à 40 éliminations, ou celui qui en a le plus à la fin du temps imparti, l'emporte."},
		},
	},
	"ja-JP": {
		weapons:   map[string]string{"Classic": "クラシック", "Vandal": "ヴァンダル", "Phantom": "ファントム", "Operator": "オペレーター", "Melee": "近接武器"},
		maps:      map[string]string{"Ascent": "アセント", "Bind": "バインド", "Haven": "ヘイヴン", "Icebox": "アイスボックス", "The Range": "射撃場"},
		titles:    map[string][2]string{"Chicken Title": {"チキン タイトル", "チキン"}},
		tiers:     map[string]string{"UNRANKED": "ランクなし", "IRON": "アイアン", "IRON 1": "アイアン 1", "IRON 2": "アイアン 2", "IRON 3": "アイアン 3", "RADIANT": "レディアント"},
		radianite: [2]string{"レディアナイトポイント", "レディアナイトポイント"},
		modes: map[string][2]string{
			"Spike Rush": {"スパイクラッシュ", "全員同じランダムな武器でスパイクを攻撃・防衛する。先に4ラウンド取ったチームの勝利。"},
			"Deathmatch": {"デスマッチ", ""},
		},
	},
	"es-ES": {
		weapons:   map[string]string{"Melee": "Cuerpo a cuerpo"},
		maps:      map[string]string{"The Range": "Campo de tiro"},
		titles:    map[string][2]string{"Chicken Title": {"Título Pollo", "Pollo"}},
		tiers:     map[string]string{"UNRANKED": "SIN CLASIFICAR", "IRON": "HIERRO", "IRON 1": "HIERRO 1", "IRON 2": "HIERRO 2", "IRON 3": "HIERRO 3", "RADIANT": "RADIANTE"},
		radianite: [2]string{"Puntos de radianita", "Punto de radianita"},
		modes: map[string][2]string{
			"Spike Rush": {"Fiebre de la Spike", "Ataca o defiende la Spike con un arma aleatoria para todos. Gana el primer equipo que consiga 4 rondas."},
			"Deathmatch": {"Todos contra todos", ""},
		},
	},
	"pt-BR": {
		weapons:   map[string]string{"Melee": "Corpo a corpo"},
		maps:      map[string]string{"The Range": "Estande de tiro"},
		titles:    map[string][2]string{"Chicken Title": {"Título Galinha", "Galinha"}},
		tiers:     map[string]string{"UNRANKED": "SEM CLASSIFICAÇÃO", "IRON": "FERRO", "IRON 1": "FERRO 1", "RADIANT": "RADIANTE"},
		radianite: [2]string{"Pontos Radianita", "Ponto Radianita"},
		modes: map[string][2]string{
			"Deathmatch": {"Mata-mata", ""},
		},
	},
	"ko-KR": {
		weapons:   map[string]string{"Classic": "클래식", "Vandal": "밴달", "Phantom": "팬텀", "Operator": "오퍼레이터", "Melee": "근접 무기"},
		maps:      map[string]string{"Ascent": "어센트", "Bind": "바인드", "Haven": "헤이븐", "The Range": "사격 연습장"},
		titles:    map[string][2]string{"Chicken Title": {"치킨 칭호", "치킨"}},
		tiers:     map[string]string{"UNRANKED": "언랭크", "IRON": "아이언", "IRON 1": "아이언 1", "RADIANT": "레디언트"},
		radianite: [2]string{"레디어나이트 포인트", "레디어나이트 포인트"},
		modes: map[string][2]string{
			"Spike Rush": {"스파이크 돌격", ""},
			"Deathmatch": {"데스매치", ""},
		},
	},
}

func must(ok bool, format string, args ...any) {
	if !ok {
		log.Fatalf(format, args...)
	}
}

// ---------------------------------------------------------------------------
// Localization string tables (locres).

var locales = []string{"ar-AE", "de-DE", "en-US", "es-ES", "es-MX", "fr-FR", "id-ID", "it-IT", "ja-JP", "ko-KR", "pl-PL", "pt-BR", "ru-RU", "th-TH", "tr-TR", "vi-VN", "zh-CN", "zh-TW"}

type locKey struct{ ns, key, en string }

func enTable(ver int) []locKey {
	keys := []locKey{
		{"UI_MainMenu", "Play", "PLAY"},
		{"UI_MainMenu", "Career", "CAREER"},
		{"UI_MainMenu", "Collection", "COLLECTION"},
		{"UI_MainMenu", "Agents", "AGENTS"},
		{"UI_MainMenu", "Store", "STORE"},
		{"UI_MainMenu", "Settings", "Settings"},
		{"UI_MainMenu", "Quit", "Quit"},
		{"UI_Store", "Featured", "FEATURED"},
		{"UI_Store", "NightMarket", "Night Market"},
		{"UI_Store", "Purchase", "Purchase"},
		{"UI_Store", "Bundles", "Bundles"},
		{"UI_Store", "OffersRefreshIn", "Offers refresh in {0}"},
		{"UI_Match", "Victory", "VICTORY"},
		{"UI_Match", "Defeat", "DEFEAT"},
		{"UI_Match", "Round", "Round {0}"},
		{"UI_Match", "SpikePlanted", "Spike planted"},
		{"UI_Match", "SpikeDefused", "Spike defused"},
		{"UI_Match", "MatchPoint", "MATCH POINT"},
		{"UI_Match", "Overtime", "OVERTIME"},
		{"UI_Match", "Clutch", "CLUTCH"},
	}
	if ver >= 15 {
		keys = append(keys, locKey{"UI_Store", "WinterWunderland", "Winterwunderland"})
	}
	return keys
}

// Translated keys (namespace/key) for every locale other than en-US; the
// last of them (UI_Store/NightMarket) is left in English on purpose, as an
// untranslated entry falling back to the en-US text.
var locTranslated = []string{"UI_MainMenu/Play", "UI_MainMenu/Settings", "UI_MainMenu/Store", "UI_MainMenu/Quit", "UI_Store/Purchase", "UI_Match/Victory", "UI_Match/Defeat", "UI_Match/Round", "UI_Store/NightMarket"}

var locText = map[string][]string{
	// Play, Settings, Store, Quit, Purchase, Victory, Defeat, Round {0}
	"ar-AE": {"العب", "الإعدادات", "المتجر", "خروج", "شراء", "فوز", "هزيمة", "الجولة {0}"},
	"de-DE": {"SPIELEN", "Einstellungen", "SHOP", "Beenden", "Kaufen", "SIEG", "NIEDERLAGE", "Runde {0}"},
	"es-ES": {"JUGAR", "Ajustes", "TIENDA", "Salir", "Comprar", "VICTORIA", "DERROTA", "Ronda {0}"},
	"es-MX": {"JUGAR", "Configuración", "TIENDA", "Salir", "Comprar", "VICTORIA", "DERROTA", "Ronda {0}"},
	"fr-FR": {"JOUER", "Paramètres", "BOUTIQUE", "Quitter", "Acheter", "VICTOIRE", "DÉFAITE", "Manche {0}"},
	"id-ID": {"MAIN", "Pengaturan", "TOKO", "Keluar", "Beli", "KEMENANGAN", "KEKALAHAN", "Ronde {0}"},
	"it-IT": {"GIOCA", "Impostazioni", "NEGOZIO", "Esci", "Acquista", "VITTORIA", "SCONFITTA", "Round {0}"},
	"ja-JP": {"プレイ", "設定", "ストア", "終了", "購入", "勝利", "敗北", "ラウンド {0}"},
	"ko-KR": {"플레이", "설정", "상점", "종료", "구매", "승리", "패배", "라운드 {0}"},
	"pl-PL": {"GRAJ", "Ustawienia", "SKLEP", "Wyjdź", "Kup", "ZWYCIĘSTWO", "PORAŻKA", "Runda {0}"},
	"pt-BR": {"JOGAR", "Configurações", "LOJA", "Sair", "Comprar", "VITÓRIA", "DERROTA", "Rodada {0}"},
	"ru-RU": {"ИГРАТЬ", "Настройки", "МАГАЗИН", "Выйти", "Купить", "ПОБЕДА", "ПОРАЖЕНИЕ", "Раунд {0}"},
	"th-TH": {"เล่น", "การตั้งค่า", "ร้านค้า", "ออก", "ซื้อ", "ชัยชนะ", "พ่ายแพ้", "รอบที่ {0}"},
	"tr-TR": {"OYNA", "Ayarlar", "MAĞAZA", "Çık", "Satın Al", "ZAFER", "MAĞLUBİYET", "Raunt {0}"},
	"vi-VN": {"CHƠI", "Cài đặt", "CỬA HÀNG", "Thoát", "Mua", "CHIẾN THẮNG", "THẤT BẠI", "Hiệp {0}"},
	"zh-CN": {"开始游戏", "设置", "商店", "退出", "购买", "胜利", "失败", "第 {0} 回合"},
	"zh-TW": {"開始遊戲", "設定", "商店", "離開", "購買", "勝利", "敗北", "第 {0} 回合"},
}

func writeLocres(dir string, ver int) {
	en := enTable(ver)
	enText := map[string]string{}
	for _, k := range en {
		enText[k.ns+"/"+k.key] = k.en
	}
	for _, loc := range locales {
		table := map[string]map[string]string{}
		put := func(nsKey, text string) {
			ns, key, _ := strings.Cut(nsKey, "/")
			if table[ns] == nil {
				table[ns] = map[string]string{}
			}
			table[ns][key] = text
		}
		if loc == "en-US" {
			for _, k := range en {
				put(k.ns+"/"+k.key, k.en)
			}
		} else {
			texts := locText[loc]
			must(len(texts) == len(locTranslated)-1, "locres %s: want %d texts", loc, len(locTranslated)-1)
			for i, nk := range locTranslated {
				if i < len(texts) {
					put(nk, texts[i])
				} else {
					put(nk, enText[nk])
				}
			}
		}
		// encoding/json sorts map keys: deterministic output.
		writeJSON(filepath.Join(dir, "locres", loc+".json"), table)
	}
}

// ---------------------------------------------------------------------------

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
	n := 0
	for _, e := range entries {
		m := verPrefix.FindStringSubmatch(e.Name())
		if !e.IsDir() || m == nil {
			continue
		}
		var ver int
		fmt.Sscan(m[1], &ver)
		dir := filepath.Join(*root, e.Name())
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
		removeTranslations(dir)
		cov := writeTranslations(dir, ver, r, src)
		writeLocres(dir, ver)
		n++
		fmt.Printf("fixturegen: wrote authored data for %s\n", e.Name())
		cov.print(e.Name())
		checkNames(dir, r, src)
		newest = cov
	}
	if n == 0 {
		log.Fatalf("no NN_<clientversion> directories under %s", *root)
	}
	if *table {
		fmt.Print(newest.markdown())
	}
}

// removeTranslations deletes the <locale>/ directories of a snapshot but
// en-US/ before they are written again, so that a file no source fills any
// more does not linger.
func removeTranslations(dir string) {
	for _, loc := range locales {
		if loc == "en-US" {
			continue
		}
		if err := os.RemoveAll(filepath.Join(dir, loc)); err != nil {
			log.Fatal(err)
		}
	}
}
