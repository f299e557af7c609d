package edition

import (
	"encoding/json"
	"slices"
	"sort"
	"time"

	"github.com/refdata/refdata/catalog"
	"github.com/refdata/refdata/representation"
)

// rules are the contract's client-side rules made into look-ups, read from the
// en-US item bodies when the edition is assembled: the level border of an
// account level, the events active at an instant, a season's tier set, a
// Premier logo's base image.
type rules struct {
	borders []border // ascending startingLevel, source order among equals
	// bounds are every event start and end, ascending and distinct; active[i]
	// is the list of the events active from bounds[i-1] (or the beginning of
	// time) until bounds[i] (or forever), per locale.
	bounds []time.Time
	active [][catalog.NumLocales + 1]*representation.Body
	tiers  map[catalog.UUID]catalog.UUID // competitive season → tier set
	logos  map[catalog.UUID]string       // premier logo → its displayIcon ("" for none)
}

// The envelopes of an item's and a list's body (catalog renders them so).
const (
	itemPrefix = `{"status":200,"data":`
	listPrefix = itemPrefix + "["
)

type border struct {
	start float64
	uuid  catalog.UUID
}

type span struct {
	uuid       catalog.UUID
	start, end time.Time
}

func (e *Edition) makeRules() {
	var r rules
	for _, u := range e.UUIDs(catalog.LevelBorders) {
		var v struct {
			Data struct{ StartingLevel *float64 }
		}
		if json.Unmarshal(e.Item(catalog.LevelBorders, u, catalog.DefaultLocale).JSON, &v) == nil && v.Data.StartingLevel != nil {
			r.borders = append(r.borders, border{*v.Data.StartingLevel, u})
		}
	}
	slices.SortStableFunc(r.borders, func(a, b border) int {
		return cmpFloat(a.start, b.start)
	})
	var spans []span
	for _, u := range e.UUIDs(catalog.Events) {
		var v struct {
			Data struct{ StartTime, EndTime string }
		}
		_ = json.Unmarshal(e.Item(catalog.Events, u, catalog.DefaultLocale).JSON, &v)
		start, err1 := time.Parse(time.RFC3339, v.Data.StartTime)
		end, err2 := time.Parse(time.RFC3339, v.Data.EndTime)
		if err1 == nil && err2 == nil && start.Before(end) { // else never active
			spans = append(spans, span{u, start, end})
			r.bounds = append(r.bounds, start, end)
		}
	}
	slices.SortFunc(r.bounds, time.Time.Compare)
	r.bounds = slices.CompactFunc(r.bounds, time.Time.Equal)
	r.active = make([][catalog.NumLocales + 1]*representation.Body, len(r.bounds)+1)
	made := map[string]*representation.Body{} // intervals with the same events share bodies
	for i := range r.active {
		for loc := range catalog.NumLocales + 1 {
			b := []byte(listPrefix)
			for _, s := range spans {
				if i > 0 && !s.start.After(r.bounds[i-1]) && s.end.After(r.bounds[i-1]) {
					if len(b) > len(listPrefix) {
						b = append(b, ',')
					}
					item := e.Item(catalog.Events, s.uuid, loc).JSON // {"status":200,"data":{…}}
					b = append(b, item[len(itemPrefix):len(item)-1]...)
				}
			}
			b = append(b, "]}"...)
			lang := e.List(catalog.Events, loc).Lang
			if made[lang+string(b)] == nil {
				made[lang+string(b)] = representation.Assemble(b, representation.ETag(b), lang, nil, "", nil, "")
			}
			r.active[i][loc] = made[lang+string(b)]
		}
	}
	r.tiers = map[catalog.UUID]catalog.UUID{}
	for _, u := range e.UUIDs(catalog.CompetitiveSeasons) {
		var v struct {
			Data struct{ CompetitiveTiersUuid string }
		}
		_ = json.Unmarshal(e.Item(catalog.CompetitiveSeasons, u, catalog.DefaultLocale).JSON, &v)
		if t, ok := catalog.ParseUUID(v.Data.CompetitiveTiersUuid); ok {
			r.tiers[u] = t
		}
	}
	r.logos = map[catalog.UUID]string{}
	for _, u := range e.UUIDs(catalog.PremierLogos) {
		var v struct {
			Data struct{ DisplayIcon *string }
		}
		_ = json.Unmarshal(e.Item(catalog.PremierLogos, u, catalog.DefaultLocale).JSON, &v)
		r.logos[u] = ""
		if v.Data.DisplayIcon != nil {
			r.logos[u] = *v.Data.DisplayIcon
		}
	}
	e.rules = r
}

func cmpFloat(a, b float64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// LevelBorder is the body of the level border for an account level in locale
// loc: the one with the greatest startingLevel not above level (the first in
// source order among equals); nil below the lowest, which is lowest (false when
// there is no border at all).
func (e *Edition) LevelBorder(level float64, loc int) (b *representation.Body, lowest float64, ok bool) {
	bs := e.rules.borders
	if len(bs) == 0 {
		return nil, 0, false
	}
	i := sort.Search(len(bs), func(i int) bool { return bs[i].start > level })
	if i == 0 {
		return nil, bs[0].start, true
	}
	first := sort.Search(i, func(j int) bool { return bs[j].start >= bs[i-1].start })
	return e.Item(catalog.LevelBorders, bs[first].uuid, loc), bs[0].start, true
}

// ActiveEvents is the body of the list of the events active at t in locale
// loc (start ≤ t < end), and the next instant after t when that list changes
// (the zero Time: never).
func (e *Edition) ActiveEvents(t time.Time, loc int) (*representation.Body, time.Time) {
	r := &e.rules
	if r.active == nil {
		return e.List(catalog.Events, loc), time.Time{} // an edition with no tables
	}
	i := sort.Search(len(r.bounds), func(i int) bool { return r.bounds[i].After(t) })
	var next time.Time
	if i < len(r.bounds) {
		next = r.bounds[i]
	}
	return r.active[i][loc], next
}

// SeasonTiers is the tier set a competitive season names (its
// competitiveTiersUuid), and whether the season is in the edition.
func (e *Edition) SeasonTiers(season catalog.UUID) (catalog.UUID, bool) {
	t, ok := e.rules.tiers[season]
	if !ok && e.Item(catalog.CompetitiveSeasons, season, catalog.DefaultLocale) != nil {
		return catalog.UUID{}, true
	}
	return t, ok
}

// LogoImage is the URL of a Premier logo's base image, the one its colors are
// mapped on ("" when it has none), and whether the logo is in the edition.
func (e *Edition) LogoImage(logo catalog.UUID) (string, bool) {
	icon, ok := e.rules.logos[logo]
	return icon, ok
}
