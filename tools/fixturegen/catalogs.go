package main

// AUTHORED catalogs: no capture of these exists. They are sample records,
// valid against their schemas in openapi.yaml, made from the tables in
// testdata/authored.json and from the real data.

import (
	"cmp"
	_ "embed"
	"encoding/json"
	"fmt"
	"log"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
)

//go:embed testdata/authored.json
var authoredJSON []byte

// authored holds the tables of testdata/authored.json. An entry with since or
// until is in those versions only: 15 renames Radianite, changes the daily
// kills mission and adds an event, a mission and a string, so the diff 14 → 15
// has authored changes too.
var authored struct {
	Currencies []currencyDef
	// ContentTiers are in rank order (rank = index).
	ContentTiers []contentTierDef
	Flex         []struct {
		Name string
		Icon bool
	}
	Events []struct {
		span
		Key, Name, Short, Start, End string
	}
	GameModes          []gameModeDef
	Equippables        []struct{ Name, Category, Asset string }
	PremierConferences []struct {
		Key, Name string
		Super     bool
	}
	PremierLogos []string
	Gear         []struct {
		Name, Description, Asset string
		Cost, Column, Priority   int
		// Details are the buy menu's stat lines, as the public API's gear
		// has them (a client of it may fail on gear without them).
		Details []struct{ Name, Value string }
	}
	Ceremonies []struct{ Name, Asset string }
	// Objectives: a nil Directive is an internal objective, as real data has.
	Objectives []struct {
		Key, Asset string
		Directive  any
	}
	Missions []missionDef
	// Translations are the authored partial items per locale (translations.go).
	Translations map[string]localeText
	Locres       struct {
		// English are the en-US texts by namespace/key.
		English []struct {
			span
			Key, Text string
		}
		// Translated are the keys every other locale has, Text[locale] their
		// texts but the last (UI_Store/NightMarket), left in English on purpose:
		// an untranslated entry falls back to the en-US text.
		Translated []string
		Text       map[string][]string
	}
}

func init() {
	if err := json.Unmarshal(authoredJSON, &authored); err != nil {
		log.Fatalf("testdata/authored.json: %v", err)
	}
}

// span is the versions an authored entry is in, from Since to Until (0: no bound).
type span struct{ Since, Until int }

func (s span) in(ver int) bool { return ver >= s.Since && (s.Until == 0 || ver <= s.Until) }

// inVersion lists the entries of all that are in version ver.
func inVersion[T interface{ in(int) bool }](all []T, ver int) []T {
	return slices.DeleteFunc(slices.Clone(all), func(e T) bool { return !e.in(ver) })
}

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
			name = cmp.Or(commonWordPrefix(buddyNames[id]), slices.Min(buddyNames[id]))
		}
		name = cmp.Or(name, "Standard")
		p := pascal(name)
		out = append(out, O{
			{"uuid", id},
			{"displayName", name},
			{"displayIcon", mediaIf(name != "Standard", "themes", id, "displayicon")},
			{"storeFeaturedImage", mediaIf(len(skinNames[id])+len(otherNames[id]) >= 4, "themes", id, "storefeaturedimage")},
			{"assetPath", "ShooterGame/Content/Themes/" + p + "/Theme_" + p + "_DataAsset"},
		})
	}
	slices.SortFunc(out, func(a, b O) int { // by name, then uuid
		return cmp.Or(cmp.Compare(a[1].V.(string), b[1].V.(string)), cmp.Compare(a[0].V.(string), b[0].V.(string)))
	})
	return out
}

// currencyDef is one currency. The uuids are the real currencies' (the real
// contracts' rewards name Radianite and Free Agents by them, and l10n-names
// has their real names), not uuidFor's. Every one has an asset and a large
// icon, as the public API's currencies do (clients read them unchecked).
type currencyDef struct {
	span
	UUID, Key, Name, Singular, Asset string
	Preview                          bool
}

func currencyDefs(ver int) []currencyDef { return inVersion(authored.Currencies, ver) }

func currencies(ver int) []O {
	var out []O
	for _, c := range currencyDefs(ver) {
		id := c.UUID
		if c.Asset == "" {
			log.Fatalf("currency %s: no asset (the public API has one for every currency)", c.Key)
		}
		out = append(out, O{
			{"uuid", id},
			{"displayName", c.Name},
			{"displayNameSingular", c.Singular},
			{"displayIcon", media("currencies", id, "displayicon")},
			{"largeIcon", media("currencies", id, "largeicon")},
			{"rewardPreviewIcon", mediaIf(c.Preview, "currencies", id, "rewardpreviewicon")},
			{"assetPath", c.Asset},
		})
	}
	return out
}

func levelBorders() []O {
	var out []O
	for lvl := 0; lvl <= 200; lvl += 20 {
		start := max(lvl, 1)
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
	var out []O
	for _, it := range authored.Flex {
		id := uuidFor("flex", it.Name)
		out = append(out, O{
			{"uuid", id},
			{"displayName", it.Name},
			{"displayIcon", mediaIf(it.Icon, "flex", id, "displayicon")},
			{"assetPath", "ShooterGame/Content/Personalization/Flex/" + pascal(it.Name) + "_PrimaryAsset"},
		})
	}
	return out
}

func events(ver int) []O {
	var out []O
	for _, e := range inVersion(authored.Events, ver) {
		out = append(out, O{
			{"uuid", uuidFor("event", e.Key)},
			{"displayName", e.Name},
			{"shortDisplayName", e.Short},
			{"startTime", e.Start},
			{"endTime", e.End},
			{"assetPath", "ShooterGame/Content/Events/Event_" + pascal(e.Key) + "_DataAsset"},
		})
	}
	return out
}

// gameModeDef is one game mode; Icon and Tall say whether it has a display
// icon and a tall list view icon.
type gameModeDef struct {
	Name, Description, Asset                string
	Duration, EconomyType, TeamRoles        any
	Timeouts, Voice, MinimapHidden, Replays bool
	Orbs, RoundsPerHalf                     int
	Features, Rules                         json.RawMessage
	Icon, Tall                              bool
}

func gameModes() []O {
	var out []O
	for _, g := range authored.GameModes {
		id := uuidFor("gamemode", g.Name)
		out = append(out, O{
			{"uuid", id},
			{"displayName", g.Name},
			{"description", g.Description},
			{"duration", g.Duration},
			{"economyType", g.EconomyType},
			{"allowsMatchTimeouts", g.Timeouts},
			{"isTeamVoiceAllowed", g.Voice},
			{"isMinimapHidden", g.MinimapHidden},
			{"orbCount", g.Orbs},
			{"roundsPerHalf", g.RoundsPerHalf},
			{"allowsCustomGameReplays", g.Replays},
			{"teamRoles", g.TeamRoles},
			{"gameFeatureOverrides", g.Features},
			{"gameRuleBoolOverrides", g.Rules},
			{"displayIcon", mediaIf(g.Icon, "gamemodes", id, "displayicon")},
			{"listViewIconTall", mediaIf(g.Tall, "gamemodes", id, "listviewicontall")},
			{"assetPath", g.Asset},
		})
	}
	return out
}

func equippables() []O {
	var out []O
	for _, it := range authored.Equippables {
		id := uuidFor("gamemodeequippable", it.Name)
		out = append(out, O{
			{"uuid", id},
			{"displayName", it.Name},
			{"category", it.Category},
			{"displayIcon", media("gamemodeequippables", id, "displayicon")},
			{"killStreamIcon", media("gamemodeequippables", id, "killstreamicon")},
			{"assetPath", it.Asset},
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
				bs = append(bs, O{
					{"uuid", bid},
					{"level", lvl},
					{"winsRequired", wins},
					{"displayIcon", media("competitiveseasonborders", bid, "displayicon")},
					{"smallIcon", mediaIf(lvl > 1, "competitiveseasonborders", bid, "smallicon")},
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
	var out []O
	for _, it := range authored.PremierConferences {
		id := uuidFor("premierconference", it.Key)
		out = append(out, O{
			{"uuid", id},
			{"displayName", it.Name},
			{"key", it.Key},
			{"icon", mediaIf(!it.Super, "premierconferences", id, "icon")},
			{"isSuper", it.Super},
			{"assetPath", "ShooterGame/Content/Premier/Conferences/" + pascal(strings.ToLower(it.Key)) + "_DataAsset"},
		})
	}
	return out
}

func premierLogos() []O {
	var out []O
	for _, n := range authored.PremierLogos {
		id := uuidFor("premierlogo", n)
		var iconName any = "Icon_" + pascal(n)
		if n == "Blank" {
			iconName = nil
		}
		out = append(out, O{
			{"uuid", id},
			{"displayName", n},
			{"iconName", iconName},
			{"displayIcon", mediaIf(n != "Blank", "premierlogos", id, "displayicon")},
			{"assetPath", "ShooterGame/Content/Premier/Logos/" + pascal(n) + "_PrimaryAsset"},
		})
	}
	return out
}

// contentTierDef is one skin rarity tier. The uuids are the real ones: the
// captured skins name them in contentTierUuid, and contentTiers checks that
// every such reference resolves.
type contentTierDef struct {
	UUID, Dev, Color      string
	JuiceValue, JuiceCost int
}

// contentTiers: the five rarity tiers. It stops the generator when a skin of
// the version names a tier that is not among them.
func contentTiers(r realData) []O {
	known := map[string]bool{}
	var out []O
	for rank, t := range authored.ContentTiers {
		known[t.UUID] = true
		out = append(out, O{
			{"uuid", t.UUID},
			{"displayName", t.Dev + " Edition"},
			{"devName", t.Dev},
			{"rank", rank},
			{"juiceValue", t.JuiceValue},
			{"juiceCost", t.JuiceCost},
			{"highlightColor", t.Color},
			{"displayIcon", media("contenttiers", t.UUID, "displayicon")},
			{"assetPath", "ShooterGame/Content/ContentTiers/" + t.Dev + "_PrimaryAsset"},
		})
	}
	for _, w := range r.weapons {
		for _, s := range w.Skins {
			if s.ContentTierUUID != nil && !known[*s.ContentTierUUID] {
				log.Fatalf("skin %s (%s): contentTierUuid %s is not one of the five tiers", s.UUID, s.DisplayName, *s.ContentTierUUID)
			}
		}
	}
	return out
}

// gear: the two armors in the public API's shape: the description's lines
// (descriptions), the stat lines (details), and shopData in the weapons' shape
// with shopOrderPriority.
func gear() []O {
	var out []O
	for _, it := range authored.Gear {
		id := uuidFor("gear", it.Name)
		details := []O{}
		for _, d := range it.Details {
			details = append(details, O{{"name", d.Name}, {"value", d.Value}})
		}
		out = append(out, O{
			{"uuid", id},
			{"displayName", it.Name},
			{"description", it.Description},
			{"descriptions", strings.Split(it.Description, "\n")},
			{"details", details},
			{"displayIcon", media("gear", id, "displayicon")},
			{"assetPath", it.Asset + "_PrimaryAsset"},
			{"shopData", O{
				{"cost", it.Cost},
				{"category", "Armor"},
				{"shopOrderPriority", it.Priority},
				{"categoryText", "Armor"},
				{"gridPosition", O{{"row", 0}, {"column", it.Column}}},
				{"canBeTrashed", false},
				{"image", nil},
				{"newImage", media("gear", id, "shop/newimage")},
				{"newImage2", nil},
				{"assetPath", it.Asset + "Purchase"},
			}},
		})
	}
	return out
}

// ceremonies: the banners of a round's feats.
func ceremonies() []O {
	var out []O
	for _, n := range authored.Ceremonies {
		out = append(out, O{
			{"uuid", uuidFor("ceremony", n.Asset)},
			{"displayName", n.Name},
			{"assetPath", "ShooterGame/Content/Ceremonies/Ceremony" + n.Asset + "_PrimaryAsset"},
		})
	}
	return out
}

func objectives() []O {
	var out []O
	for _, o := range authored.Objectives {
		out = append(out, O{
			{"uuid", uuidFor("objective", o.Key)},
			{"directive", o.Directive},
			{"assetPath", "ShooterGame/Content/Objectives/Objective_" + o.Asset + "_DataAsset"},
		})
	}
	return out
}

// missionDef is one mission; an internal one has no name, title or type
// (null in the output, as real data has for some missions).
type missionDef struct {
	span
	Key, Title, Kind, From, To string
	XP                         int
	Tags                       []string
	Objectives                 []struct {
		Objective string
		Value     int
	}
	Internal bool
}

func missions(ver int) []O {
	objectiveIDs := map[string]string{}
	for _, o := range authored.Objectives {
		objectiveIDs[o.Key] = uuidFor("objective", o.Key)
	}
	var out []O
	for _, m := range inVersion(authored.Missions, ver) {
		var objs []O
		progress := 0
		for _, g := range m.Objectives {
			id, ok := objectiveIDs[g.Objective]
			must(ok, "mission %s: unknown objective %q", m.Key, g.Objective)
			objs = append(objs, O{{"objectiveUuid", id}, {"value", g.Value}})
			progress += g.Value
		}
		var name, title, kind any
		if !m.Internal {
			name = m.Kind + ": " + m.Title
			title = m.Title
			kind = "EAresMissionType::" + m.Kind
		}
		out = append(out, O{
			{"uuid", uuidFor("mission", m.Key)},
			{"displayName", name},
			{"title", title},
			{"type", kind},
			{"xpGrant", m.XP},
			{"progressToComplete", progress},
			{"activationDate", m.From},
			{"expirationDate", m.To},
			{"tags", m.Tags},
			{"objectives", objs},
			{"assetPath", fmt.Sprintf("ShooterGame/Content/Missions/Mission_%s_DataAsset", pascal(m.Key))},
		})
	}
	return out
}

// writeLocres writes the string tables, locres/<locale>.json.
func writeLocres(dir string, ver int) {
	lr := authored.Locres
	enText := map[string]string{}
	for _, k := range inVersion(lr.English, ver) {
		enText[k.Key] = k.Text
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
			for k, text := range enText {
				put(k, text)
			}
		} else {
			texts := lr.Text[loc]
			must(len(texts) == len(lr.Translated)-1, "locres %s: want %d texts", loc, len(lr.Translated)-1)
			for i, nk := range lr.Translated {
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
