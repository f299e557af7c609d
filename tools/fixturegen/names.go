package main

// REAL localized text of more catalogs: the repository's copies of
// ../shared/data/l10n-names (names of buddies, sprays, player cards, player
// titles, bundles, currencies, weapons and contracts in 18 locales) and of
// ../shared/data/upstream-2023-pt-BR (pt-BR agents, maps and callouts, rank
// names and weapon shop categories), reduced to the items of the snapshots.

import (
	"encoding/json"
	"path/filepath"
	"slices"
	"strings"
)

// nameCatalogs are the folders of l10n-names.
var nameCatalogs = []string{"buddies", "sprays", "playercards", "playertitles", "bundles", "currencies", "weapons", "contracts"}

// nameRec is one item of l10n-names; buddies are keyed by their first level's uuid.
type nameRec struct {
	UUID                                     string
	DisplayName, TitleText, ExtraDescription *string
}

// names: catalog -> locale -> key -> record.
type names map[string]map[string]map[string]nameRec

// nameKeys lists, per l10n-names catalog, r's items and the keys l10n-names
// has them by: {item uuid, key}. The key is the uuid, a buddy's first level's
// for buddies; the authored currencies use the real currency uuids.
func nameKeys(r realData) map[string][][2]string {
	keys := map[string][][2]string{}
	add := func(cat, uuid, key string) { keys[cat] = append(keys[cat], [2]string{uuid, key}) }
	for _, w := range r.weapons {
		add("weapons", w.UUID, w.UUID)
	}
	for _, b := range r.buddies {
		if len(b.Levels) > 0 {
			add("buddies", b.UUID, b.Levels[0].UUID)
		}
	}
	for _, s := range r.sprays {
		add("sprays", s.UUID, s.UUID)
	}
	for _, b := range r.bundles {
		add("bundles", b.UUID, b.UUID)
	}
	for cat, items := range map[string][]named{"playercards": r.cards, "playertitles": r.titles, "contracts": r.contracts} {
		for _, it := range items {
			add(cat, it.UUID, it.UUID)
		}
	}
	for _, c := range currencyDefs(0) {
		add("currencies", c.UUID, c.UUID)
	}
	return keys
}

// snapshotKeys is every key the real texts have an item of the snapshots by:
// the uuids of their skins, chromas, levels, agents, maps and tier sets, and
// the keys of nameKeys.
func snapshotKeys(dirs []string) map[string]bool {
	keep := map[string]bool{}
	for _, d := range dirs {
		r := loadReal(d)
		for _, w := range r.weapons {
			for _, s := range w.Skins {
				keep[s.UUID] = true
				for _, e := range slices.Concat(s.Chromas, s.Levels) {
					keep[e.UUID] = true
				}
			}
		}
		for _, a := range r.agents {
			keep[a.UUID] = true
		}
		for _, m := range r.maps {
			keep[m.UUID] = true
		}
		for _, t := range r.tierSets {
			keep[t.UUID] = true
		}
		for _, ks := range nameKeys(r) {
			for _, k := range ks {
				keep[k[1]] = true
			}
		}
	}
	return keep
}

// copyNames copies src/<catalog>/<locale>.json into dst, keeping only the
// items the snapshots have, each item's text as it is there.
func copyNames(src, dst string, dirs []string) {
	keep := snapshotKeys(dirs)
	for _, c := range nameCatalogs {
		for _, loc := range locales {
			file := filepath.Join(src, c, loc+".json")
			var items []json.RawMessage
			var recs []nameRec
			readData(file, &items)
			readData(file, &recs)
			var kept []json.RawMessage
			for i, raw := range items {
				if keep[recs[i].UUID] {
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
	if s == nil || strings.TrimSpace(*s) == "" {
		return ""
	}
	return *s
}

// pt-BR answers of 2023, reduced to their text and what matches it to the
// 2021 items (role uuid, ability slot, callout location, tier division,
// weapon shop category).

type role struct {
	UUID        string `json:"uuid"`
	DisplayName string `json:"displayName"`
	Description string `json:"description"`
}

type ability struct {
	Slot        string `json:"slot"`
	DisplayName string `json:"displayName"`
	Description string `json:"description"`
}

// agent is an agent of en-US or of the pt-BR answers.
type agent struct {
	UUID          string    `json:"uuid"`
	DisplayName   string    `json:"displayName"`
	Description   string    `json:"description"`
	CharacterTags []string  `json:"characterTags"`
	Role          *role     `json:"role"`
	Abilities     []ability `json:"abilities"`
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

type ptWeapon struct {
	UUID        string    `json:"uuid"`
	DisplayName string    `json:"displayName"`
	ShopData    *shopData `json:"shopData"`
}

type ptBR struct {
	agents  []agent
	maps    []gameMap
	tiers   []tierSet
	weapons []ptWeapon
}

// copyPtBR copies the four answers of src the generator reads into dst,
// reduced to the items of the snapshots and to the fields above.
func copyPtBR(src, dst string, dirs []string) {
	keep := snapshotKeys(dirs)
	p := loadPtBR(src)
	keepOnly(dst, "agents.json", p.agents, keep, func(a agent) string { return a.UUID })
	keepOnly(dst, "maps.json", p.maps, keep, func(m gameMap) string { return m.UUID })
	keepOnly(dst, "competitivetiers.json", p.tiers, keep, func(t tierSet) string { return t.UUID })
	keepOnly(dst, "weapons.json", p.weapons, keep, func(w ptWeapon) string { return w.UUID })
}

// keepOnly writes dst/name: the items whose uuid keep holds.
func keepOnly[T any](dst, name string, items []T, keep map[string]bool, uuid func(T) string) {
	var out []T
	for _, it := range items {
		if keep[uuid(it)] {
			out = append(out, it)
		}
	}
	writeJSON(filepath.Join(dst, name), envelope(out))
}

func loadPtBR(dir string) ptBR {
	var p ptBR
	readData(filepath.Join(dir, "agents.json"), &p.agents)
	readData(filepath.Join(dir, "maps.json"), &p.maps)
	readData(filepath.Join(dir, "competitivetiers.json"), &p.tiers)
	readData(filepath.Join(dir, "weapons.json"), &p.weapons)
	return p
}
