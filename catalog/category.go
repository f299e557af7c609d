package catalog

import (
	"fmt"
	"slices"
	"strings"
)

// Category is one catalog of the API, named by its path after /v1/.
type Category int

// The categories, in the order diffs list them.
const (
	Weapons Category = iota
	WeaponSkins
	WeaponSkinChromas
	WeaponSkinLevels
	Buddies
	BuddyLevels
	Maps
	Seasons
	CompetitiveSeasons
	CompetitiveTiers
	PlayerTitles
	Themes
	Currencies
	LevelBorders
	Flex
	Events
	GameModes
	GameModeEquippables
	PremierConferences
	PremierLogos
	Agents
	Bundles
	Contracts
	PlayerCards
	Sprays
	SprayLevels
	ContentTiers
	Gear
	Ceremonies
	Missions
	Objectives
	NumCategories
)

// categories: name, component schema of one item, noun for messages, and the
// category it is flattened from (itself for one with a file in a snapshot).
var categories = [NumCategories]struct {
	name, schema, noun string
	source             Category
}{
	Weapons:             {"weapons", "Weapon", "weapon", Weapons},
	WeaponSkins:         {"weapons/skins", "WeaponSkin", "weapon skin", Weapons},
	WeaponSkinChromas:   {"weapons/skinchromas", "SkinChroma", "skin chroma", Weapons},
	WeaponSkinLevels:    {"weapons/skinlevels", "SkinLevel", "skin level", Weapons},
	Buddies:             {"buddies", "Buddy", "buddy", Buddies},
	BuddyLevels:         {"buddies/levels", "BuddyLevel", "buddy level", Buddies},
	Maps:                {"maps", "Map", "map", Maps},
	Seasons:             {"seasons", "Season", "season", Seasons},
	CompetitiveSeasons:  {"seasons/competitive", "CompetitiveSeason", "competitive season", CompetitiveSeasons},
	CompetitiveTiers:    {"competitivetiers", "CompetitiveTierSet", "competitive tier set", CompetitiveTiers},
	PlayerTitles:        {"playertitles", "PlayerTitle", "player title", PlayerTitles},
	Themes:              {"themes", "Theme", "theme", Themes},
	Currencies:          {"currencies", "Currency", "currency", Currencies},
	LevelBorders:        {"levelborders", "LevelBorder", "level border", LevelBorders},
	Flex:                {"flex", "FlexItem", "flex item", Flex},
	Events:              {"events", "GameEvent", "event", Events},
	GameModes:           {"gamemodes", "GameMode", "game mode", GameModes},
	GameModeEquippables: {"gamemodes/equippables", "GameModeEquippable", "game mode equippable", GameModeEquippables},
	PremierConferences:  {"premier/conferences", "PremierConference", "premier conference", PremierConferences},
	PremierLogos:        {"premier/logos", "PremierLogo", "premier team logo", PremierLogos},
	Agents:              {"agents", "Agent", "agent", Agents},
	Bundles:             {"bundles", "Bundle", "bundle", Bundles},
	Contracts:           {"contracts", "Contract", "contract", Contracts},
	PlayerCards:         {"playercards", "PlayerCard", "player card", PlayerCards},
	Sprays:              {"sprays", "Spray", "spray", Sprays},
	SprayLevels:         {"sprays/levels", "SprayLevel", "spray level", Sprays},
	ContentTiers:        {"contenttiers", "ContentTier", "content tier", ContentTiers},
	Gear:                {"gear", "Gear", "piece of gear", Gear},
	Ceremonies:          {"ceremonies", "Ceremony", "ceremony", Ceremonies},
	Missions:            {"missions", "Mission", "mission", Missions},
	Objectives:          {"objectives", "Objective", "objective", Objectives},
}

// Name is the category's path after /v1/, e.g. "weapons/skins".
func (c Category) Name() string { return categories[c].name }

// Noun names one item of the category in messages, e.g. "weapon skin".
func (c Category) Noun() string { return categories[c].noun }

// Schema is the component schema of one item in openapi.yaml.
func (c Category) Schema() string { return categories[c].schema }

// IsSource reports whether the category has its own file in a snapshot.
func (c Category) IsSource() bool { return categories[c].source == c }

// File is the snapshot file name of a source category: the name with "/" as "-".
func (c Category) File() string {
	return strings.ReplaceAll(c.Name(), "/", "-") + ".json"
}

// MarshalText writes the category's name.
func (c Category) MarshalText() ([]byte, error) {
	if c < 0 || c >= NumCategories {
		return nil, fmt.Errorf("category %d", int(c))
	}
	return []byte(c.Name()), nil
}

// UnmarshalText reads a category's name.
func (c *Category) UnmarshalText(b []byte) error {
	found, ok := CategoryNamed(string(b))
	if !ok {
		return fmt.Errorf("no category %q", b)
	}
	*c = found
	return nil
}

// Categories lists every category in diff order.
func Categories() []Category {
	cs := make([]Category, NumCategories)
	for i := range cs {
		cs[i] = Category(i)
	}
	return cs
}

// CategoryNamed returns the category with this name.
func CategoryNamed(name string) (Category, bool) {
	for _, c := range Categories() {
		if c.Name() == name {
			return c, true
		}
	}
	return 0, false
}

// SourceCategories lists the categories that have a file in a snapshot.
func SourceCategories() []Category {
	return slices.DeleteFunc(Categories(), func(c Category) bool { return !c.IsSource() })
}

// UnknownOf lists the fields openapi.yaml does not describe that c's items
// carry, as dotted paths within an item ("callouts.hint": a path goes
// through arrays), from a version's Unknown, which names them in the items
// of c's source category ("skins[].chromas[].hint" for a skin chroma's).
func UnknownOf(c Category, unknown []Unknown) []string {
	src, prefix := categories[c].source, ""
	if src != c {
		var find func(in Category, at string) bool
		find = func(in Category, at string) bool {
			for _, n := range nested[in] {
				if p := at + n.field + "[]."; n.c == c {
					prefix = p
					return true
				} else if find(n.c, p) {
					return true
				}
			}
			return false
		}
		find(src, "")
	}
	var out []string
	for _, u := range unknown {
		if rest, ok := strings.CutPrefix(u.Field, prefix); ok && u.Category == src {
			out = append(out, strings.ReplaceAll(rest, "[]", ""))
		}
	}
	return out
}
