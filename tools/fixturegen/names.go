package main

// REAL localized text of more catalogs: the repository's copies of
// ../shared/data/l10n-names (names of buddies, sprays, player cards, player
// titles, bundles, currencies, weapons and contracts in 18 locales) and of
// ../shared/data/upstream-2023-pt-BR (pt-BR agents, maps and callouts, rank
// names and weapon shop categories), reduced to the items of the snapshots.

import (
	"bytes"
	"encoding/json"
	"log"
	"path/filepath"
)

// nameCatalogs are the folders of l10n-names.
var nameCatalogs = []string{"buddies", "sprays", "playercards", "playertitles", "bundles", "currencies", "weapons", "contracts"}

// nameRec is one item of l10n-names; buddies are keyed by their first level's uuid.
type nameRec struct {
	UUID               string  `json:"uuid"`
	DisplayName        *string `json:"displayName"`
	TitleText          *string `json:"titleText"`
	ExtraDescription   *string `json:"extraDescription"`
	DisplayNameSubText *string `json:"displayNameSubText"`
}

// names: catalog -> locale -> key -> record.
type names map[string]map[string]map[string]nameRec

// nameKeys lists, per l10n-names catalog, the keys the snapshots use: the
// uuids of their items (of a buddy's first level for buddies; of the authored
// currencies, which use the real currency uuids).
func nameKeys(dirs []string) map[string]map[string]bool {
	keys := map[string]map[string]bool{}
	for _, c := range nameCatalogs {
		keys[c] = map[string]bool{}
	}
	for _, d := range dirs {
		r := loadReal(d)
		for _, b := range r.buddies {
			if len(b.Levels) > 0 {
				keys["buddies"][b.Levels[0].UUID] = true
			}
		}
		for _, w := range r.weapons {
			keys["weapons"][w.UUID] = true
		}
		for _, s := range r.sprays {
			keys["sprays"][s.UUID] = true
		}
		for c, items := range map[string][]named{"playercards": r.cards, "playertitles": r.titles, "contracts": r.contracts} {
			for _, it := range items {
				keys[c][it.UUID] = true
			}
		}
		for _, b := range r.bundles {
			keys["bundles"][b.UUID] = true
		}
	}
	for _, c := range currencyDefs(0) {
		keys["currencies"][c.uuid] = true
	}
	return keys
}

// copyNames copies src/<catalog>/<locale>.json into dst, keeping only the
// items the snapshots have, each item's text as it is there.
func copyNames(src, dst string, dirs []string) {
	keys := nameKeys(dirs)
	for _, c := range nameCatalogs {
		for _, loc := range locales {
			var items []json.RawMessage
			readData(filepath.Join(src, c, loc+".json"), &items)
			var kept []json.RawMessage
			for _, raw := range items {
				var rec nameRec
				if err := json.Unmarshal(raw, &rec); err != nil {
					log.Fatalf("%s/%s: %v", c, loc, err)
				}
				if keys[c][rec.UUID] {
					kept = append(kept, raw)
				}
			}
			writeJSON(filepath.Join(dst, c, loc+".json"), kept)
		}
	}
}

func loadNames(dir string) names {
	out := names{}
	for _, c := range nameCatalogs {
		out[c] = map[string]map[string]nameRec{}
		for _, loc := range locales {
			var items []nameRec
			readData(filepath.Join(dir, c, loc+".json"), &items)
			m := map[string]nameRec{}
			for _, it := range items {
				m[it.UUID] = it
			}
			out[c][loc] = m
		}
	}
	return out
}

// text is a record's field, "" when null or blank.
func text(s *string) string {
	if s == nil || len(bytes.TrimSpace([]byte(*s))) == 0 {
		return ""
	}
	return *s
}

// ---------------------------------------------------------------------------
// pt-BR answers of 2023, reduced to their text and what matches it to the
// 2021 items (role uuid, ability slot, callout location, tier division,
// weapon shop category).

type ptRole struct {
	UUID        string `json:"uuid"`
	DisplayName string `json:"displayName"`
	Description string `json:"description"`
}

type ptAbility struct {
	Slot        string `json:"slot"`
	DisplayName string `json:"displayName"`
	Description string `json:"description"`
}

type ptAgent struct {
	UUID          string      `json:"uuid"`
	DisplayName   string      `json:"displayName"`
	Description   string      `json:"description"`
	CharacterTags []string    `json:"characterTags"`
	Role          *ptRole     `json:"role"`
	Abilities     []ptAbility `json:"abilities"`
}

type location struct {
	X float64 `json:"x"`
	Y float64 `json:"y"`
}

type callout struct {
	RegionName      string   `json:"regionName"`
	SuperRegionName string   `json:"superRegionName"`
	Location        location `json:"location"`
}

type ptMap struct {
	UUID        string    `json:"uuid"`
	DisplayName string    `json:"displayName"`
	Callouts    []callout `json:"callouts"`
}

type ptTier struct {
	Tier         int    `json:"tier"`
	TierName     string `json:"tierName"`
	Division     string `json:"division"`
	DivisionName string `json:"divisionName"`
}

type ptTierSet struct {
	UUID            string   `json:"uuid"`
	AssetObjectName string   `json:"assetObjectName"`
	Tiers           []ptTier `json:"tiers"`
}

type ptShop struct {
	Category     string `json:"category"`
	CategoryText string `json:"categoryText"`
}

type ptWeapon struct {
	UUID        string  `json:"uuid"`
	DisplayName string  `json:"displayName"`
	ShopData    *ptShop `json:"shopData"`
}

type ptBR struct {
	agents  []ptAgent
	maps    []ptMap
	tiers   []ptTierSet
	weapons []ptWeapon
}

// copyPtBR copies the four answers of src the generator reads into dst,
// reduced to the items of the snapshots and to the fields above.
func copyPtBR(src, dst string, dirs []string) {
	keep := map[string]bool{}
	for _, d := range dirs {
		r := loadReal(d)
		for _, a := range r.agents {
			keep[a.UUID] = true
		}
		for _, m := range r.maps {
			keep[m.UUID] = true
		}
		for _, t := range r.tierSets {
			keep[t.UUID] = true
		}
		for _, w := range r.weapons {
			keep[w.UUID] = true
		}
	}
	var p ptBR
	readData(filepath.Join(src, "agents.json"), &p.agents)
	readData(filepath.Join(src, "maps.json"), &p.maps)
	readData(filepath.Join(src, "competitivetiers.json"), &p.tiers)
	readData(filepath.Join(src, "weapons.json"), &p.weapons)
	write := func(name string, n int, uuid func(int) string, item func(int) any) {
		var out []any
		for i := 0; i < n; i++ {
			if keep[uuid(i)] {
				out = append(out, item(i))
			}
		}
		writeJSON(filepath.Join(dst, name), envelope(out))
	}
	write("agents.json", len(p.agents), func(i int) string { return p.agents[i].UUID }, func(i int) any { return p.agents[i] })
	write("maps.json", len(p.maps), func(i int) string { return p.maps[i].UUID }, func(i int) any { return p.maps[i] })
	write("competitivetiers.json", len(p.tiers), func(i int) string { return p.tiers[i].UUID }, func(i int) any { return p.tiers[i] })
	write("weapons.json", len(p.weapons), func(i int) string { return p.weapons[i].UUID }, func(i int) any { return p.weapons[i] })
}

func loadPtBR(dir string) ptBR {
	var p ptBR
	readData(filepath.Join(dir, "agents.json"), &p.agents)
	readData(filepath.Join(dir, "maps.json"), &p.maps)
	readData(filepath.Join(dir, "competitivetiers.json"), &p.tiers)
	readData(filepath.Join(dir, "weapons.json"), &p.weapons)
	return p
}
