package main

// AUTHORED catalogs added with the contract's content tiers, gear, ceremonies,
// missions and objectives. No capture of these exists: they are sample
// records, valid against their schemas in openapi.yaml.

import (
	"fmt"
	"log"
)

// contentTierDef is one skin rarity tier. The uuids are the real ones: the
// captured skins name them in contentTierUuid, and contentTiers checks that
// every such reference resolves.
type contentTierDef struct {
	uuid, dev, color   string
	juiceValue, jcCost int
}

// contentTierDefs, in rank order (rank = index).
var contentTierDefs = []contentTierDef{
	{"12683d76-48d7-84a3-4e09-6985794f0445", "Select", "5a9fe2ff", 5, 10},
	{"0cebb8be-46d7-c12a-d306-e9907bfc5a25", "Deluxe", "009587ff", 10, 20},
	{"60bca009-4182-7998-dee7-b8a2558dc369", "Premium", "d1548dff", 15, 30},
	{"e046854e-406c-37f4-6607-19a9ba8426fc", "Exclusive", "f5955bff", 20, 40},
	{"411e4a55-4e59-7757-41f0-86a53f101bb5", "Ultra", "fad663ff", 25, 50},
}

// contentTiers: the five rarity tiers. It stops the generator when a skin of
// the version names a tier that is not among them.
func contentTiers(r realData) []O {
	known := map[string]bool{}
	var out []O
	for rank, t := range contentTierDefs {
		known[t.uuid] = true
		out = append(out, O{
			{"uuid", t.uuid},
			{"displayName", t.dev + " Edition"},
			{"devName", t.dev},
			{"rank", rank},
			{"juiceValue", t.juiceValue},
			{"juiceCost", t.jcCost},
			{"highlightColor", t.color},
			{"displayIcon", media("contenttiers", t.uuid, "displayicon")},
			{"assetPath", "ShooterGame/Content/ContentTiers/" + t.dev + "_PrimaryAsset"},
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

// gear: the two armors, with shopData in the weapons' shopData shape.
func gear() []O {
	items := []struct {
		name, desc, asset string
		cost, column      int
	}{
		{"Light Shields", "+25 Shields\nAbsorbs part of the damage taken until depleted.", "ShooterGame/Content/Gear/Armor/Light/LightArmorGear", 400, 0},
		{"Heavy Shields", "+50 Shields\nAbsorbs part of the damage taken until depleted.", "ShooterGame/Content/Gear/Armor/Heavy/HeavyArmorGear", 1000, 1},
	}
	var out []O
	for _, it := range items {
		id := uuidFor("gear", it.name)
		out = append(out, O{
			{"uuid", id},
			{"displayName", it.name},
			{"description", it.desc},
			{"displayIcon", media("gear", id, "displayicon")},
			{"assetPath", it.asset + "_PrimaryAsset"},
			{"shopData", O{
				{"cost", it.cost},
				{"category", "Armor"},
				{"categoryText", "Armor"},
				{"gridPosition", O{{"row", 0}, {"column", it.column}}},
				{"canBeTrashed", false},
				{"image", nil},
				{"newImage", media("gear", id, "shop/newimage")},
				{"newImage2", nil},
				{"assetPath", it.asset + "Purchase"},
			}},
		})
	}
	return out
}

// ceremonies: the banners of a round's feats.
func ceremonies() []O {
	var out []O
	for _, n := range []struct{ name, asset string }{
		{"ACE", "Ace"},
		{"CLUTCH", "Clutch"},
		{"THRIFTY", "Thrifty"},
		{"FLAWLESS", "Flawless"},
		{"TEAM ACE", "TeamAce"},
		{"CLOSER", "Closer"},
	} {
		out = append(out, O{
			{"uuid", uuidFor("ceremony", n.asset)},
			{"displayName", n.name},
			{"assetPath", "ShooterGame/Content/Ceremonies/Ceremony" + n.asset + "_PrimaryAsset"},
		})
	}
	return out
}

// objectiveDef is an objective a mission counts; a nil directive is an
// internal objective without text (real data has such).
type objectiveDef struct {
	key       string
	directive any
	asset     string
}

var objectiveDefs = []objectiveDef{
	{"kills", "Get kills", "Kills"},
	{"rounds", "Win rounds", "RoundsWon"},
	{"spike", "Plant or defuse the spike", "PlantOrDefuse"},
	{"headshots", "Get headshot kills", "HeadshotKills"},
	{"matches", "Play matches", "MatchesPlayed"},
	{"progression", nil, "Internal_ProgressionTracker"},
}

func objectives() []O {
	var out []O
	for _, o := range objectiveDefs {
		out = append(out, O{
			{"uuid", uuidFor("objective", o.key)},
			{"directive", o.directive},
			{"assetPath", "ShooterGame/Content/Objectives/Objective_" + o.asset + "_DataAsset"},
		})
	}
	return out
}

// missionDef is one mission; an internal one has no name, title or type
// (null in the output, as real data has for some missions).
type missionDef struct {
	key, title, kind string
	xp               int
	from, to         string
	tags             []string
	objectives       []goal
	internal         bool
}

type goal struct {
	objective string
	value     int
}

// missionDefs are the daily and weekly missions of a version. 15 adds the
// weekly "Get 20 headshot kills" and changes the daily kills mission (more
// kills, more XP).
func missionDefs(ver int) []missionDef {
	dailyKills := missionDef{key: "daily-kills", title: "Get 30 kills", kind: "Daily", xp: 2000,
		from: "2021-11-16T00:00:00Z", to: "2021-11-23T00:00:00Z", objectives: []goal{{"kills", 30}}}
	if ver >= 15 {
		dailyKills.title, dailyKills.xp, dailyKills.objectives = "Get 40 kills", 2500, []goal{{"kills", 40}}
	}
	list := []missionDef{
		dailyKills,
		{key: "daily-rounds", title: "Win 10 rounds", kind: "Daily", xp: 2000,
			from: "2021-11-16T00:00:00Z", to: "2021-11-23T00:00:00Z", objectives: []goal{{"rounds", 10}}},
		{key: "daily-spike", title: "Plant or defuse the spike 4 times", kind: "Daily", xp: 2000,
			from: "2021-11-16T00:00:00Z", to: "2021-11-23T00:00:00Z", objectives: []goal{{"spike", 4}}},
		{key: "weekly-1", title: "Get 150 kills and win 45 rounds", kind: "Weekly", xp: 12000,
			from: "2021-11-02T00:00:00Z", to: "2022-01-11T00:00:00Z", tags: []string{"Weekly", "Week1"}, objectives: []goal{{"kills", 150}, {"rounds", 45}}},
		{key: "weekly-2", title: "Play 15 matches", kind: "Weekly", xp: 12000,
			from: "2021-11-09T00:00:00Z", to: "2022-01-11T00:00:00Z", tags: []string{"Weekly", "Week2"}, objectives: []goal{{"matches", 15}}},
		{key: "progression", internal: true,
			from: "2021-11-02T00:00:00Z", to: "2022-01-11T00:00:00Z", objectives: []goal{{"progression", 1}}},
	}
	if ver >= 15 {
		list = append(list, missionDef{key: "weekly-3", title: "Get 20 headshot kills", kind: "Weekly", xp: 12000,
			from: "2021-11-16T00:00:00Z", to: "2022-01-11T00:00:00Z", tags: []string{"Weekly", "Week3"}, objectives: []goal{{"headshots", 20}}})
	}
	return list
}

func missions(ver int) []O {
	objectiveIDs := map[string]string{}
	for _, o := range objectiveDefs {
		objectiveIDs[o.key] = uuidFor("objective", o.key)
	}
	var out []O
	for _, m := range missionDefs(ver) {
		var objs []O
		progress := 0
		for _, g := range m.objectives {
			id, ok := objectiveIDs[g.objective]
			must(ok, "mission %s: unknown objective %q", m.key, g.objective)
			objs = append(objs, O{{"objectiveUuid", id}, {"value", g.value}})
			progress += g.value
		}
		var name, title, kind, tags any
		if !m.internal {
			name = m.kind + ": " + m.title
			title = m.title
			kind = "EAresMissionType::" + m.kind
		}
		if m.tags != nil {
			tags = m.tags
		}
		out = append(out, O{
			{"uuid", uuidFor("mission", m.key)},
			{"displayName", name},
			{"title", title},
			{"type", kind},
			{"xpGrant", m.xp},
			{"progressToComplete", progress},
			{"activationDate", m.from},
			{"expirationDate", m.to},
			{"tags", tags},
			{"objectives", objs},
			{"assetPath", fmt.Sprintf("ShooterGame/Content/Missions/Mission_%s_DataAsset", pascal(m.key))},
		})
	}
	return out
}
