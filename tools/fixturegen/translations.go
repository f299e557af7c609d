package main

// Translations: the partial items of <locale>/<file>.json. Each text is the
// REAL one where fixtures/l10n-skins, l10n-names or pt-BR-2023 has it (main.go,
// names.go), else the AUTHORED one (testdata/authored.json), else the field is
// left out and falls back to en-US.

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// sources are the real texts.
type sources struct {
	skins map[string]map[string]string // locale -> uuid -> name
	names names
	ptBR  ptBR
}

// coverage counts, per catalog (its API name) and locale, the items that got
// real text, out of the catalog's items.
type coverage struct {
	total map[string]int
	real  map[[2]string]int // {catalog, locale}
}

// coverageCatalogs are the catalogs that get real text somewhere, in table order.
var coverageCatalogs = []string{
	"weapons", "weapons/skins", "weapons/skinchromas", "weapons/skinlevels",
	"buddies", "buddies/levels", "sprays", "sprays/levels", "playercards", "playertitles", "bundles",
	"currencies", "contracts", "agents", "maps", "competitivetiers",
}

// set adds a field to a partial item.
func (o *O) set(k string, v any) { *o = append(*o, F{k, v}) }

// either sets field k to the real text when there is one (and says so), else
// to the authored one when there is one.
func (o *O) either(k, real, authored string) bool {
	if real != "" {
		o.set(k, real)
	} else if authored != "" {
		o.set(k, authored)
	}
	return real != ""
}

// addTo appends the item to list when it translates anything.
func (o O) addTo(list []O) []O {
	if len(o) > 1 {
		return append(list, o)
	}
	return list
}

// writeTranslations writes every locale's partial items under dir for
// version ver, and returns how many items got real text.
func writeTranslations(dir string, ver int, r realData, src sources) *coverage {
	cov := &coverage{total: map[string]int{}, real: map[[2]string]int{}}
	cov.count(ver, r)
	pi := indexPtBR(src.ptBR)
	for _, loc := range otherLocales {
		l := &localeWriter{loc: loc, t: authored.Translations[loc], pt: loc == "pt-BR", dir: filepath.Join(dir, loc), ver: ver, r: r, src: src, cov: cov, ptIndex: pi}
		l.weapons()
		l.buddies()
		l.named()
		l.titles()
		l.bundles()
		l.currencies()
		if l.pt {
			l.out("agents.json", ptAgents(l.r, l.src.ptBR, func() { l.realText("agents") }))
		}
		l.maps()
		l.tiers()
		l.gameModes()
	}
	return cov
}

// count counts the items of each catalog that gets real text somewhere.
func (cov *coverage) count(ver int, r realData) {
	cov.total["weapons"] = len(r.weapons)
	for _, w := range r.weapons {
		cov.total["weapons/skins"] += len(w.Skins)
		for _, s := range w.Skins {
			cov.total["weapons/skinchromas"] += len(s.Chromas)
			cov.total["weapons/skinlevels"] += len(s.Levels)
		}
	}
	for cat, items := range map[string][]leveled{"buddies": r.buddies, "sprays": r.sprays} {
		cov.total[cat] = len(items)
		for _, it := range items {
			cov.total[cat+"/levels"] += len(it.Levels)
		}
	}
	cov.total["playercards"] = len(r.cards)
	cov.total["playertitles"] = len(r.titles)
	cov.total["bundles"] = len(r.bundles)
	cov.total["currencies"] = len(currencyDefs(ver))
	cov.total["contracts"] = len(r.contracts)
	cov.total["agents"] = len(r.agents)
	cov.total["maps"] = len(r.maps)
	cov.total["competitivetiers"] = len(r.tierSets)
}

// ptIndex is the pt-BR answers of 2023 by uuid (tiers by set and tier number).
type ptIndex struct {
	ptWeapons map[string]ptWeapon
	ptMaps    map[string]gameMap
	ptSets    map[string]map[int]tier
}

func indexPtBR(src ptBR) ptIndex {
	ptWeapons, ptMaps, ptSets := map[string]ptWeapon{}, map[string]gameMap{}, map[string]map[int]tier{}
	for _, w := range src.weapons {
		ptWeapons[w.UUID] = w
	}
	for _, m := range src.maps {
		ptMaps[m.UUID] = m
	}
	for _, s := range src.tiers {
		ptSets[s.UUID] = map[int]tier{}
		for _, tr := range s.Tiers {
			ptSets[s.UUID][tr.Tier] = tr
		}
	}
	return ptIndex{ptWeapons, ptMaps, ptSets}
}

// localeWriter writes one locale's partial items (writeTranslations). Each
// method names the fields it reads as locals, the names its code had in the
// loop over the locales it came from.
type localeWriter struct {
	loc string
	t   localeText
	pt  bool   // the pt-BR answers apply
	dir string // the locale's directory
	ver int
	r   realData
	src sources
	cov *coverage
	ptIndex
}

// realText counts an item of cat that got real text.
func (l *localeWriter) realText(cat string) { l.cov.real[[2]string{cat, l.loc}]++ }

// out writes the file of items, unless none translates anything.
func (l *localeWriter) out(file string, items []O) {
	if len(items) > 0 {
		writeJSON(filepath.Join(l.dir, file), items)
	}
}

// weapons writes the weapons: real weapon names (l10n-names), pt-BR shop
// categories (pt-BR-2023), real skin, chroma and level names (l10n-skins).
func (l *localeWriter) weapons() {
	t, pt, r, src, loc, realText, out, ptWeapons := l.t, l.pt, l.r, l.src, l.loc, l.realText, l.out, l.ptWeapons
	names := src.skins[loc]
	wnames := src.names["weapons"][loc]
	usedW := map[string]bool{}
	var ws []O
	for _, w := range r.weapons {
		item := O{{"uuid", w.UUID}}
		a, own := t.Weapons[w.DisplayName]
		if own {
			usedW[w.DisplayName] = true
		}
		gotReal := item.either("displayName", text(wnames[w.UUID].DisplayName), a)
		if p, ok := ptWeapons[w.UUID]; ok && pt && w.ShopData != nil && p.ShopData != nil && p.ShopData.Category == w.ShopData.Category && p.ShopData.CategoryText != "" {
			item.set("shopData", O{{"categoryText", p.ShopData.CategoryText}})
			gotReal = true
		}
		if gotReal {
			realText("weapons")
		}
		var ss []O
		for _, s := range w.Skins {
			si := O{{"uuid", s.UUID}}
			if n := names[s.UUID]; n != "" {
				si.set("displayName", n)
				realText("weapons/skins")
			}
			for _, part := range []struct {
				field, cat string
				elems      []named
			}{{"chromas", "weapons/skinchromas", s.Chromas}, {"levels", "weapons/skinlevels", s.Levels}} {
				var es []O
				for _, e := range part.elems {
					if n := names[e.UUID]; n != "" {
						es = append(es, O{{"uuid", e.UUID}, {"displayName", n}})
						realText(part.cat)
					}
				}
				if len(es) > 0 {
					si.set(part.field, es)
				}
			}
			ss = si.addTo(ss)
		}
		if len(ss) > 0 {
			item.set("skins", ss)
		}
		ws = item.addTo(ws)
	}
	must(len(usedW) == len(t.Weapons), "%s: an authored weapon name names no weapon", loc)
	out("weapons.json", ws)
}

// buddies writes the buddies: l10n-names keys a buddy by its first level's
// uuid; the level carries the buddy's name wherever en-US gives it the
// buddy's name.
func (l *localeWriter) buddies() {
	r, src, loc, realText, out := l.r, l.src, l.loc, l.realText, l.out
	var bs []O
	for _, b := range r.buddies {
		if len(b.Levels) == 0 {
			continue
		}
		n := text(src.names["buddies"][loc][b.Levels[0].UUID].DisplayName)
		if n == "" {
			continue
		}
		realText("buddies")
		item := O{{"uuid", b.UUID}, {"displayName", n}}
		var ls []O
		for _, l := range b.Levels {
			if l.DisplayName == b.DisplayName {
				ls = append(ls, O{{"uuid", l.UUID}, {"displayName", n}})
				realText("buddies/levels")
			}
		}
		if len(ls) > 0 {
			item.set("levels", ls)
		}
		bs = append(bs, item)
	}
	out("buddies.json", bs)
}

// named writes the sprays, player cards and contracts: displayName. (l10n-names
// has no spray level names: spray levels keep their en-US text.)
func (l *localeWriter) named() {
	r, src, loc, realText, out := l.r, l.src, l.loc, l.realText, l.out
	sprays := make([]named, len(r.sprays))
	for i, s := range r.sprays {
		sprays[i] = named{s.UUID, s.DisplayName}
	}
	for _, c := range []struct {
		cat   string
		items []named
	}{{"sprays", sprays}, {"playercards", r.cards}, {"contracts", r.contracts}} {
		var items []O
		for _, it := range c.items {
			if n := text(src.names[c.cat][loc][it.UUID].DisplayName); n != "" {
				realText(c.cat)
				items = append(items, O{{"uuid", it.UUID}, {"displayName", n}})
			}
		}
		out(c.cat+".json", items)
	}
}

// titles writes the player titles: displayName and titleText.
func (l *localeWriter) titles() {
	t, r, src, loc, realText, out := l.t, l.r, l.src, l.loc, l.realText, l.out
	usedT := 0
	var ts []O
	for _, p := range r.titles {
		rec := src.names["playertitles"][loc][p.UUID]
		item := O{{"uuid", p.UUID}}
		a, own := t.Titles[p.DisplayName]
		if own {
			usedT++
		}
		if item.either("displayName", text(rec.DisplayName), a[0]) {
			realText("playertitles")
		}
		item.either("titleText", text(rec.TitleText), a[1])
		ts = item.addTo(ts)
	}
	must(usedT == len(t.Titles), "%s: an authored title names no title", loc)
	out("playertitles.json", ts)
}

// bundles writes the bundles: displayName, and extraDescription where en-US
// has one. (displayNameSubText is neither in the captures nor in the Bundle
// schema: left out.)
func (l *localeWriter) bundles() {
	r, src, loc, realText, out := l.r, l.src, l.loc, l.realText, l.out
	var us []O
	for _, b := range r.bundles {
		rec := src.names["bundles"][loc][b.UUID]
		n := text(rec.DisplayName)
		if n == "" {
			continue
		}
		realText("bundles")
		item := O{{"uuid", b.UUID}, {"displayName", n}}
		if b.ExtraDescription != nil && *b.ExtraDescription != "" {
			if d := text(rec.ExtraDescription); d != "" {
				item.set("extraDescription", d)
			}
		}
		us = append(us, item)
	}
	out("bundles.json", us)
}

// currencies writes the currencies: displayName, and the authored singular
// of radianite.
func (l *localeWriter) currencies() {
	t, src, loc, realText, out, ver := l.t, l.src, l.loc, l.realText, l.out, l.ver
	var cs []O
	for _, c := range currencyDefs(ver) {
		item := O{{"uuid", c.UUID}}
		var a [2]string
		if c.Key == "radianite" {
			a = t.Radianite
		}
		if item.either("displayName", text(src.names["currencies"][loc][c.UUID].DisplayName), a[0]) {
			realText("currencies")
		}
		item.either("displayNameSingular", "", a[1])
		cs = item.addTo(cs)
	}
	out("currencies.json", cs)
}

// maps writes the maps: pt-BR real names and callouts; authored names elsewhere.
func (l *localeWriter) maps() {
	t, pt, r, loc, realText, out, ptMaps := l.t, l.pt, l.r, l.loc, l.realText, l.out, l.ptMaps
	var ms []O
	usedM := 0
	for _, m := range r.maps {
		item := O{{"uuid", m.UUID}}
		a, own := t.Maps[m.DisplayName]
		if own {
			usedM++
		}
		p, ok := ptMaps[m.UUID]
		switch {
		case ok && pt && p.DisplayName != "":
			item.set("displayName", p.DisplayName)
			realText("maps")
			if cos, ok := calloutsLineUp(m.Callouts, p.Callouts); ok && len(cos) > 0 {
				item.set("callouts", cos)
			}
		case own:
			item.set("displayName", a)
		}
		ms = item.addTo(ms)
	}
	must(usedM == len(t.Maps), "%s: an authored map name names no map", loc)
	out("maps.json", ms)
}

// tiers writes the competitive tiers: pt-BR real tier and division names,
// matched by tier number within the same tier set and checked by division;
// authored elsewhere.
func (l *localeWriter) tiers() {
	t, pt, r, realText, out, ptSets := l.t, l.pt, l.r, l.realText, l.out, l.ptSets
	var sets []O
	for _, set := range r.tierSets {
		var tiers []O
		gotReal := false
		for _, tr := range set.Tiers {
			item := O{{"tier", tr.Tier}}
			p, ok := ptSets[set.UUID][tr.Tier]
			if !ok || !pt || p.Division != tr.Division {
				p = tier{}
			}
			gotReal = item.either("tierName", p.TierName, t.Tiers[tr.TierName]) || gotReal
			gotReal = item.either("divisionName", p.DivisionName, t.Tiers[tr.DivisionName]) || gotReal
			tiers = item.addTo(tiers)
		}
		if gotReal {
			realText("competitivetiers")
		}
		if len(tiers) > 0 {
			sets = append(sets, O{{"uuid", set.UUID}, {"tiers", tiers}})
		}
	}
	out("competitivetiers.json", sets)
}

// gameModes writes the game modes' authored names and descriptions.
func (l *localeWriter) gameModes() {
	t, loc, out := l.t, l.loc, l.out
	var gs []O
	for _, g := range authored.GameModes {
		n, ok := t.Modes[g.Name]
		if !ok {
			continue
		}
		item := O{{"uuid", uuidFor("gamemode", g.Name)}, {"displayName", n[0]}}
		if n[1] != "" {
			item = append(item, F{"description", n[1]})
		}
		gs = append(gs, item)
	}
	must(len(gs) == len(t.Modes), "%s: unknown game mode", loc)
	out("gamemodes.json", gs)
}

// ptAgents: the pt-BR partial agents. Abilities are matched by position, so
// they are given only when the 2023 agent has the same slots in the same
// order; the role only when it is the same role; character tags only when
// both have the same number.
func ptAgents(r realData, p ptBR, counted func()) []O {
	byID := map[string]agent{}
	for _, a := range p.agents {
		byID[a.UUID] = a
	}
	var out []O
	for _, a := range r.agents {
		pa, ok := byID[a.UUID]
		if !ok || pa.DisplayName == "" {
			continue
		}
		counted()
		item := O{{"uuid", a.UUID}, {"displayName", pa.DisplayName}}
		if pa.Description != "" {
			item.set("description", pa.Description)
		}
		if len(a.CharacterTags) > 0 && len(a.CharacterTags) == len(pa.CharacterTags) {
			item.set("characterTags", pa.CharacterTags)
		}
		if a.Role != nil && pa.Role != nil && a.Role.UUID == pa.Role.UUID {
			item.set("role", O{{"uuid", a.Role.UUID}, {"displayName", pa.Role.DisplayName}, {"description", pa.Role.Description}})
		}
		if slices.EqualFunc(a.Abilities, pa.Abilities, func(en, pt ability) bool { return en.Slot == pt.Slot }) {
			var abs []O
			for _, ab := range pa.Abilities {
				abs = append(abs, O{{"displayName", ab.DisplayName}, {"description", ab.Description}})
			}
			item.set("abilities", abs)
		}
		out = append(out, item)
	}
	return out
}

// calloutsLineUp returns the pt-BR callouts as the full partial array in the
// en-US order when the two lists line up: callouts have no uuid, so the merge
// matches them by position. They line up when they have the same length, at
// least 90 % of the positions hold the same location, and every en-US
// super-region is translated one way only (a moved callout keeps its place).
func calloutsLineUp(en, pt []callout) ([]O, bool) {
	if len(en) == 0 || len(en) != len(pt) {
		return nil, false
	}
	same := 0
	super := map[string]string{}
	for i := range en {
		if en[i].Location == pt[i].Location {
			same++
		}
		if s, ok := super[en[i].SuperRegionName]; ok && s != pt[i].SuperRegionName {
			return nil, false
		}
		super[en[i].SuperRegionName] = pt[i].SuperRegionName
	}
	if same*10 < len(en)*9 {
		return nil, false
	}
	out := make([]O, len(pt))
	for i, c := range pt {
		out[i] = O{{"regionName", c.RegionName}, {"superRegionName", c.SuperRegionName}}
	}
	return out, true
}

// print prints the counts of real text per catalog and locale.
func (c *coverage) print(version string) {
	fmt.Printf("fixturegen: %s: items with real text per locale (real/items)\n", version)
	fmt.Printf("  %-20s", "catalog")
	for _, loc := range otherLocales {
		fmt.Printf(" %-7s", loc[:2]+loc[3:])
	}
	fmt.Println()
	for _, cat := range coverageCatalogs {
		fmt.Printf("  %-20s", cat)
		for _, loc := range otherLocales {
			fmt.Printf(" %-7s", fmt.Sprintf("%d/%d", c.real[[2]string{cat, loc}], c.total[cat]))
		}
		fmt.Println()
	}
}

// checkNames reads back the translation files written in dir and stops the
// generator when, in some locale, fewer than 90 % of the items of a catalog
// that l10n-names names (by uuid; buddies by their first level's uuid) carry
// that name there.
func checkNames(dir string, r realData, src sources) {
	keys := nameKeys(r)
	var bad []string
	for _, cat := range nameCatalogs {
		for _, loc := range otherLocales {
			written := map[string]string{}
			f := filepath.Join(dir, loc, cat+".json")
			if _, err := os.Stat(f); err == nil {
				var items []named
				readData(f, &items)
				for _, it := range items {
					written[it.UUID] = it.DisplayName
				}
			}
			want, got := 0, 0
			for _, k := range keys[cat] {
				n := text(src.names[cat][loc][k[1]].DisplayName)
				if n == "" {
					continue
				}
				want++
				if written[k[0]] == n {
					got++
				}
			}
			if want == 0 || got*10 < want*9 {
				bad = append(bad, fmt.Sprintf("%s %s: %d of %d named items", cat, loc, got, want))
			}
		}
	}
	must(len(bad) == 0, "%s: real names below 90 %%:\n%s", dir, strings.Join(bad, "\n"))
}

// markdown is the README table: the share of items with real text, per
// catalog and locale.
func (c *coverage) markdown() string {
	var b strings.Builder
	b.WriteString("| catalog (items) |")
	for _, loc := range otherLocales {
		b.WriteString(" " + loc + " |")
	}
	b.WriteString("\n|---|" + strings.Repeat("---:|", len(otherLocales)) + "\n")
	for _, cat := range coverageCatalogs {
		fmt.Fprintf(&b, "| %s (%d) |", cat, c.total[cat])
		for _, loc := range otherLocales {
			n, t := c.real[[2]string{cat, loc}], c.total[cat]
			pct := 0
			if t > 0 {
				pct = n * 100 / t
			}
			fmt.Fprintf(&b, " %d %% |", pct)
		}
		b.WriteString("\n")
	}
	return b.String()
}
