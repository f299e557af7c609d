package edition

import (
	"cmp"
	"encoding/json"
	"fmt"
	"slices"
	"sort"
	"time"

	"github.com/refdata/refdata/catalog"
	"github.com/refdata/refdata/representation"
)

// rules are the contract's client-side rules made into look-ups, read from the
// en-US item bodies when the edition is assembled.
type rules struct {
	borders []border // ascending startingLevel, source order among equals
	// bounds are every event start and end, ascending and distinct; active[i]
	// lists the events active from bounds[i-1] (or ever) until bounds[i] (or
	// forever), per locale.
	bounds []time.Time
	active [][catalog.NumLocales + 1]*representation.Body
	tiers  map[catalog.UUID]catalog.UUID // competitive season → tier set
	logos  map[catalog.UUID]string       // premier logo → its displayIcon ("" for none)
}

type border struct {
	start float64
	uuid  catalog.UUID
}

type span struct {
	uuid       catalog.UUID
	start, end time.Time
}

// eachItem calls f with the data of each en-US item of c decoded into a T;
// an error when a body cannot be read.
func eachItem[T any](e *Edition, c catalog.Category, f func(catalog.UUID, T)) error {
	for _, u := range e.UUIDs(c) {
		b, err := e.Item(c, u, catalog.DefaultLocale).JSON()
		if err != nil {
			return fmt.Errorf("%s %s: %w", c.Name(), u, err)
		}
		var v struct{ Data T }
		_ = json.Unmarshal(b, &v)
		f(u, v.Data)
	}
	return nil
}

func (e *Edition) makeRules() error {
	var r rules
	err := eachItem(e, catalog.LevelBorders, func(u catalog.UUID, v struct{ StartingLevel *float64 }) {
		if v.StartingLevel != nil {
			r.borders = append(r.borders, border{*v.StartingLevel, u})
		}
	})
	if err != nil {
		return err
	}
	slices.SortStableFunc(r.borders, func(a, b border) int { return cmp.Compare(a.start, b.start) })
	var spans []span
	err = eachItem(e, catalog.Events, func(u catalog.UUID, v struct{ StartTime, EndTime string }) {
		start, err1 := time.Parse(time.RFC3339, v.StartTime)
		end, err2 := time.Parse(time.RFC3339, v.EndTime)
		if err1 == nil && err2 == nil && start.Before(end) { // else never active
			spans = append(spans, span{u, start, end})
			r.bounds = append(r.bounds, start, end)
		}
	})
	if err != nil {
		return err
	}
	slices.SortFunc(r.bounds, time.Time.Compare)
	r.bounds = slices.CompactFunc(r.bounds, time.Time.Equal)
	r.active = make([][catalog.NumLocales + 1]*representation.Body, len(r.bounds)+1)
	made := map[string]*representation.Body{} // intervals with the same events share bodies
	for i := range r.active {
		for loc := range catalog.NumLocales + 1 {
			var items [][]byte
			for _, s := range spans {
				if i > 0 && !s.start.After(r.bounds[i-1]) && s.end.After(r.bounds[i-1]) {
					b, err := e.Item(catalog.Events, s.uuid, loc).JSON()
					if err != nil {
						return fmt.Errorf("events %s: %w", s.uuid, err)
					}
					items = append(items, b)
				}
			}
			b := catalog.ListEnvelope(items)
			lang := e.List(catalog.Events, loc).Lang
			if made[lang+string(b)] == nil {
				made[lang+string(b)] = representation.Assemble(b, representation.ETag(b), lang, nil, "", nil, "")
			}
			r.active[i][loc] = made[lang+string(b)]
		}
	}
	r.tiers = map[catalog.UUID]catalog.UUID{}
	err = eachItem(e, catalog.CompetitiveSeasons, func(u catalog.UUID, v struct{ CompetitiveTiersUuid string }) {
		if t, ok := catalog.ParseUUID(v.CompetitiveTiersUuid); ok {
			r.tiers[u] = t
		}
	})
	if err != nil {
		return err
	}
	r.logos = map[catalog.UUID]string{}
	err = eachItem(e, catalog.PremierLogos, func(u catalog.UUID, v struct{ DisplayIcon *string }) {
		r.logos[u] = ""
		if v.DisplayIcon != nil {
			r.logos[u] = *v.DisplayIcon
		}
	})
	e.rules = r
	return err
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
