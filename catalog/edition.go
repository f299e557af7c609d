package catalog

import (
	"bytes"
	"encoding/json"
	"fmt"
	"sync"

	"golang.org/x/sync/errgroup"

	"github.com/refdata/refdata/cores"
	"github.com/refdata/refdata/gen"
	"github.com/refdata/refdata/representation"
)

// table holds a category's bodies per locale; index AllLocales is language=all.
type table struct {
	list  [NumLocales + 1]*representation.Body
	items map[UUID]*[NumLocales + 1]*representation.Body
	order []UUID // as the source lists them
}

// Edition is one game version rendered: every body of every route in every locale.
// It is immutable once built; a server swaps whole editions, so a response never
// mixes two versions.
type Edition struct {
	ManifestID string
	// VersionField is ManifestID as the X-Data-Version header field, made once
	// for every answer from this edition (representation.Response).
	VersionField representation.Field
	Version      gen.Version
	// Fills counts the defaults filled in where the source lacked a field.
	Fills map[Fill]int
	// ContentHash is the version's ContentHash, set by the loader that knows its
	// files (fixtures, store); "" when unknown.
	ContentHash string

	version *representation.Body
	tables  [NumCategories]table
	// sources records, per source category, what its tables were built from
	// (BuildFilesReusing).
	sources    [NumCategories]sourcePart
	locresList *representation.Body
	locres     [NumLocales]*representation.Body

	// bodies is what Bodies returns, made at its first call: a swap asks for
	// both editions' several times, and each walk of an 18-locale one was
	// 12 ms of map work (BENCHMARKS.md § Stop 45).
	bodiesOnce sync.Once
	bodies     []*representation.Body
}

// List is the body of /v1/<category> in locale loc (AllLocales: language=all).
func (e *Edition) List(c Category, loc int) *representation.Body { return e.tables[c].list[loc] }

// Item is the body of /v1/<category>/<uuid> in locale loc (AllLocales:
// language=all), or nil.
func (e *Edition) Item(c Category, u UUID, loc int) *representation.Body {
	if b := e.tables[c].items[u]; b != nil {
		return b[loc]
	}
	return nil
}

// UUIDs lists the items of a category in source order.
func (e *Edition) UUIDs(c Category) []UUID { return e.tables[c].order }

// VersionBody is the body of /v1/version.
func (e *Edition) VersionBody() *representation.Body { return e.version }

// LocresList is the body of /v1/locres.
func (e *Edition) LocresList() *representation.Body { return e.locresList }

// Locres is the body of /v1/locres/{locale}.
func (e *Edition) Locres(loc int) *representation.Body { return e.locres[loc] }

// sourcePart is what one source category's tables were built from: the hash of
// its files in every locale ("" when not built from files) and the defaults its
// normalization filled in.
type sourcePart struct {
	key   string
	fills map[Fill]int
}

// rendered is one item's body (its JSON in the item envelope) and its UUID.
// An item is rendered into its envelope at once: its body is one allocation,
// and lists take its JSON from there.
type rendered struct {
	uuid string
	body []byte
}

// data is the item's JSON, without the envelope.
func (r rendered) data() []byte { return itemData(r.body) }

// Build normalizes a snapshot and renders it into an Edition. Categories whose file
// the snapshot lacks are empty. The snapshot is modified (normalized in place).
func Build(s *Snapshot) (*Edition, error) { return build(s, nil, nil, false, nil) }

// build is Build, taking from prev the tables of every source category whose
// key (the hash of its files) equals prev's, and from prior(c) (prior may be
// nil) the language=all bodies of category c's items that did not change.
// consume drops each source category's items from s once its bodies are
// rendered, for a caller that built s only for this: the decoded items of the
// categories done are then garbage while the later ones render, and the
// build's peak is lower (in a builder child every byte of the peak is a page
// fault).
func build(s *Snapshot, prev *Edition, keys *[NumCategories]string, consume bool, prior func(Category) allSource) (*Edition, error) {
	e := &Edition{Fills: map[Fill]int{}}
	if err := normalizeVersion(s.Version, e.Fills); err != nil {
		return nil, err
	}
	if err := convert(s.Version, &e.Version); err != nil {
		return nil, fmt.Errorf("version record: %w", err)
	}
	e.ManifestID = e.Version.ManifestId
	e.VersionField = representation.NewField("X-Data-Version", e.ManifestID)
	vb, err := encode(e.Version)
	if err != nil {
		return nil, err
	}
	e.version = representation.NewBody(itemEnvelope(vb), "")

	for _, src := range SourceCategories() {
		if keys != nil {
			e.sources[src].key = keys[src]
			if prev != nil && keys[src] != "" && prev.sources[src].key == keys[src] {
				e.reuse(src, prev)
				continue
			}
		}
		items := s.Sources[src]
		if items == nil {
			items = []any{}
		}
		fills := map[Fill]int{}
		if err := normalizeItems(src, items, fills); err != nil {
			return nil, err
		}
		e.sources[src].fills = fills
		for f, n := range fills {
			e.Fills[f] += n
		}
		en, err := renderSource(src, items)
		if err != nil {
			return nil, fmt.Errorf("render %s: %w", src.Name(), err)
		}
		for c, rs := range en {
			if err := e.setDefault(c, rs); err != nil {
				return nil, err
			}
		}
		// Translations render in parallel (they are independent); their results are
		// applied in locale order, so the edition is the same whatever the timing.
		var translated [NumLocales]map[Category][]rendered
		var g errgroup.Group
		g.SetLimit(cores.Workers())
		for loc := range Locales {
			over := s.Overlays[Locales[loc]][src]
			if loc == DefaultLocale || over == nil {
				continue
			}
			g.Go(func() error {
				tr, err := renderSource(src, mergeOverlay(items, over))
				if err != nil {
					return fmt.Errorf("render %s in %s: %w", src.Name(), Locales[loc], err)
				}
				translated[loc] = tr
				return nil
			})
		}
		if err := g.Wait(); err != nil {
			return nil, err
		}
		for loc := range Locales {
			if translated[loc] == nil {
				for c := range en {
					e.shareDefault(c, loc)
				}
				continue
			}
			for c, rs := range translated[loc] {
				e.setLocale(c, loc, rs)
			}
		}
		for c := range en {
			var before allSource
			if prior != nil {
				before = prior(c)
			}
			if err := e.renderAll(c, before); err != nil {
				return nil, fmt.Errorf("render %s for language=all: %w", c.Name(), err)
			}
		}
		if consume {
			delete(s.Sources, src)
			for _, over := range s.Overlays {
				delete(over, src)
			}
		}
	}
	return e, e.buildLocres(s.Locres)
}

// reuse takes src's tables and the categories flattened from it from prev, as
// they are: tables are immutable, so two editions can share them.
func (e *Edition) reuse(src Category, prev *Edition) {
	e.sources[src].fills = prev.sources[src].fills
	for f, n := range prev.sources[src].fills {
		e.Fills[f] += n
	}
	for c := range Category(NumCategories) {
		if categories[c].source == src {
			e.tables[c] = prev.tables[c]
		}
	}
}

func (e *Edition) setDefault(c Category, rs []rendered) error {
	t := &e.tables[c]
	t.items = make(map[UUID]*[NumLocales + 1]*representation.Body, len(rs))
	t.order = make([]UUID, 0, len(rs))
	for _, r := range rs {
		u, ok := ParseUUID(r.uuid)
		if !ok {
			return fmt.Errorf("%s: uuid %q is not a UUID", c.Name(), r.uuid)
		}
		if t.items[u] != nil {
			return fmt.Errorf("%s: duplicate uuid %s", c.Name(), r.uuid)
		}
		var bodies [NumLocales + 1]*representation.Body
		bodies[DefaultLocale] = representation.NewBody(r.body, Locales[DefaultLocale])
		t.items[u] = &bodies
		t.order = append(t.order, u)
	}
	t.list[DefaultLocale] = representation.NewBody(listEnvelope(rs), Locales[DefaultLocale])
	return nil
}

func (e *Edition) shareDefault(c Category, loc int) {
	t := &e.tables[c]
	t.list[loc] = t.list[DefaultLocale]
	for _, b := range t.items {
		b[loc] = b[DefaultLocale]
	}
}

// setLocale keeps a translated body only where it differs from en-US; an
// untranslated body is the en-US one, Content-Language included.
func (e *Edition) setLocale(c Category, loc int, rs []rendered) {
	t := &e.tables[c]
	lang := Locales[loc]
	for _, r := range rs {
		u, _ := ParseUUID(r.uuid)
		b := t.items[u]
		if b == nil {
			continue // mergeOverlay never adds items
		}
		if bytes.Equal(r.body, b[DefaultLocale].JSON) {
			b[loc] = b[DefaultLocale]
		} else {
			b[loc] = representation.NewBody(r.body, lang)
		}
	}
	if list := listEnvelope(rs); bytes.Equal(list, t.list[DefaultLocale].JSON) {
		t.list[loc] = t.list[DefaultLocale]
	} else {
		t.list[loc] = representation.NewBody(list, lang)
	}
}

func (e *Edition) buildLocres(tables map[string]map[string]map[string]string) error {
	summary := make([]gen.LocaleSummary, 0, NumLocales)
	for i, loc := range Locales {
		t := tables[loc]
		if t == nil {
			t = map[string]map[string]string{}
		}
		n := 0
		for _, ns := range t {
			n += len(ns)
		}
		summary = append(summary, gen.LocaleSummary{Locale: loc, Tables: len(t), Entries: n})
		b, err := encode(t)
		if err != nil {
			return fmt.Errorf("render locres %s: %w", loc, err)
		}
		e.locres[i] = representation.NewBody(itemEnvelope(b), loc)
	}
	b, err := encode(summary)
	if err != nil {
		return fmt.Errorf("render locres list: %w", err)
	}
	e.locresList = representation.NewBody(itemEnvelope(b), "")
	return nil
}

// renderSource renders the items of a source category and of the categories
// flattened from it, through gen's types so the bytes have the spec's shape.
func renderSource(src Category, items []any) (map[Category][]rendered, error) {
	out := map[Category][]rendered{}
	var err error
	p := new(cores.Pacer)
	switch src {
	case Weapons:
		var ws []gen.Weapon
		if err = decodeInto(p, items, &ws); err != nil {
			return nil, err
		}
		var skins []gen.WeaponSkin
		for _, w := range ws {
			skins = append(skins, w.Skins...)
		}
		var chromas []gen.SkinChroma
		var levels []gen.SkinLevel
		for _, s := range skins {
			chromas = append(chromas, s.Chromas...)
			levels = append(levels, s.Levels...)
		}
		if out[Weapons], err = each(p, ws, func(w *gen.Weapon) string { return w.Uuid }); err != nil {
			return nil, err
		}
		if out[WeaponSkins], err = each(p, skins, func(s *gen.WeaponSkin) string { return s.Uuid }); err != nil {
			return nil, err
		}
		if out[WeaponSkinChromas], err = each(p, chromas, func(s *gen.SkinChroma) string { return s.Uuid }); err != nil {
			return nil, err
		}
		out[WeaponSkinLevels], err = each(p, levels, func(s *gen.SkinLevel) string { return s.Uuid })
	case Buddies:
		var bs []gen.Buddy
		if err = decodeInto(p, items, &bs); err != nil {
			return nil, err
		}
		var levels []gen.BuddyLevel
		for _, b := range bs {
			levels = append(levels, b.Levels...)
		}
		if out[Buddies], err = each(p, bs, func(b *gen.Buddy) string { return b.Uuid }); err != nil {
			return nil, err
		}
		out[BuddyLevels], err = each(p, levels, func(b *gen.BuddyLevel) string { return b.Uuid })
	case Sprays:
		var ss []gen.Spray
		if err = decodeInto(p, items, &ss); err != nil {
			return nil, err
		}
		var levels []gen.SprayLevel
		for _, s := range ss {
			levels = append(levels, s.Levels...)
		}
		if out[Sprays], err = each(p, ss, func(s *gen.Spray) string { return s.Uuid }); err != nil {
			return nil, err
		}
		out[SprayLevels], err = each(p, levels, func(s *gen.SprayLevel) string { return s.Uuid })
	case Agents:
		out[src], err = decodeEach(p, items, func(x *gen.Agent) string { return x.Uuid })
	case Bundles:
		out[src], err = decodeEach(p, items, func(x *gen.Bundle) string { return x.Uuid })
	case Contracts:
		out[src], err = decodeEach(p, items, func(x *gen.Contract) string { return x.Uuid })
	case PlayerCards:
		out[src], err = decodeEach(p, items, func(x *gen.PlayerCard) string { return x.Uuid })
	case Maps:
		out[src], err = decodeEach(p, items, func(x *gen.Map) string { return x.Uuid })
	case Seasons:
		out[src], err = decodeEach(p, items, func(x *gen.Season) string { return x.Uuid })
	case CompetitiveSeasons:
		out[src], err = decodeEach(p, items, func(x *gen.CompetitiveSeason) string { return x.Uuid })
	case CompetitiveTiers:
		out[src], err = decodeEach(p, items, func(x *gen.CompetitiveTierSet) string { return x.Uuid })
	case PlayerTitles:
		out[src], err = decodeEach(p, items, func(x *gen.PlayerTitle) string { return x.Uuid })
	case Themes:
		out[src], err = decodeEach(p, items, func(x *gen.Theme) string { return x.Uuid })
	case Currencies:
		out[src], err = decodeEach(p, items, func(x *gen.Currency) string { return x.Uuid })
	case LevelBorders:
		out[src], err = decodeEach(p, items, func(x *gen.LevelBorder) string { return x.Uuid })
	case Flex:
		out[src], err = decodeEach(p, items, func(x *gen.FlexItem) string { return x.Uuid })
	case Events:
		out[src], err = decodeEach(p, items, func(x *gen.GameEvent) string { return x.Uuid })
	case GameModes:
		out[src], err = decodeEach(p, items, func(x *gen.GameMode) string { return x.Uuid })
	case GameModeEquippables:
		out[src], err = decodeEach(p, items, func(x *gen.GameModeEquippable) string { return x.Uuid })
	case PremierConferences:
		out[src], err = decodeEach(p, items, func(x *gen.PremierConference) string { return x.Uuid })
	case PremierLogos:
		out[src], err = decodeEach(p, items, func(x *gen.PremierLogo) string { return x.Uuid })
	default:
		return nil, fmt.Errorf("%s is not a source category", src.Name())
	}
	return out, err
}

func decodeEach[T any](p *cores.Pacer, items []any, id func(*T) string) ([]rendered, error) {
	var xs []T
	if err := decodeInto(p, items, &xs); err != nil {
		return nil, err
	}
	return each(p, xs, id)
}

func each[T any](p *cores.Pacer, xs []T, id func(*T) string) ([]rendered, error) {
	out := make([]rendered, 0, len(xs))
	for i := range xs {
		p.Yield()
		b, err := encodeItem(&xs[i])
		if err != nil {
			return nil, err
		}
		out = append(out, rendered{uuid: id(&xs[i]), body: b})
	}
	return out, nil
}

// convert converts a decoded JSON value into a gen type.
func convert(v any, into any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	return json.Unmarshal(b, into)
}

// decodeInto converts decoded JSON values into a slice of a gen type, an item
// at a time so that p can let requests in between items.
func decodeInto[T any](p *cores.Pacer, items []any, into *[]T) error {
	xs := make([]T, len(items))
	for i, v := range items {
		p.Yield()
		b, err := json.Marshal(v)
		if err != nil {
			return err
		}
		if err := json.Unmarshal(b, &xs[i]); err != nil {
			return fmt.Errorf("item %d: %w", i, err)
		}
	}
	*into = xs
	return nil
}

// encode marshals without HTML escaping, so text such as "R&D" keeps its bytes.
// The encoder and its buffer are pooled and the result copied out at its
// size: a new buffer per item grew by doubling, 55 of the 595 MB a builder
// child allocated to build an 18-locale version.
func encode(v any) ([]byte, error) { return appendEncoded(nil, v) }

// appendEncoded appends v, as encode renders it, to b.
func appendEncoded(b []byte, v any) ([]byte, error) {
	return encoded(v, func(j []byte) []byte { return append(b, j...) })
}

// encodeItem renders v in an item envelope (itemEnvelope(encode(v))), in one
// allocation of the body's size.
func encodeItem(v any) ([]byte, error) { return encoded(v, itemEnvelope) }

// encoded renders v with a pooled encoder and returns out of its JSON, which
// out must copy: the encoder's buffer is reused once out returns.
func encoded(v any, out func(j []byte) []byte) ([]byte, error) {
	e := encoders.Get().(*encoder)
	defer encoders.Put(e)
	e.buf.Reset()
	if err := e.enc.Encode(v); err != nil {
		return nil, err
	}
	return out(bytes.TrimSuffix(e.buf.Bytes(), []byte("\n"))), nil
}

type encoder struct {
	buf bytes.Buffer
	enc *json.Encoder
}

var encoders = sync.Pool{New: func() any {
	e := &encoder{}
	e.enc = json.NewEncoder(&e.buf)
	e.enc.SetEscapeHTML(false)
	return e
}}

// itemPrefix opens an item's envelope; a '}' closes it.
const itemPrefix = `{"status":200,"data":`

func itemEnvelope(item []byte) []byte {
	b := make([]byte, 0, len(item)+24)
	b = append(b, itemPrefix...)
	b = append(b, item...)
	return append(b, '}')
}

func listEnvelope(rs []rendered) []byte {
	n := 24
	for _, r := range rs {
		n += len(r.data()) + 1
	}
	b := make([]byte, 0, n)
	b = append(b, `{"status":200,"data":[`...)
	for i, r := range rs {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, r.data()...)
	}
	return append(b, "]}"...)
}

// Bodies lists every distinct body of the edition (shared ones once), for
// package representation to compress them. The list is the edition's: callers
// read it, and an append makes a copy.
func (e *Edition) Bodies() []*representation.Body {
	e.bodiesOnce.Do(func() {
		out := e.walkBodies()
		e.bodies = out[:len(out):len(out)]
	})
	return e.bodies
}

func (e *Edition) walkBodies() []*representation.Body {
	seen := map[*representation.Body]bool{}
	var out []*representation.Body
	add := func(b *representation.Body) {
		if b != nil && !seen[b] {
			seen[b] = true
			out = append(out, b)
		}
	}
	add(e.version)
	add(e.locresList)
	for _, b := range e.locres {
		add(b)
	}
	for c := range e.tables {
		t := &e.tables[c]
		for _, b := range t.list {
			add(b)
		}
		for _, u := range t.order {
			for _, b := range t.items[u] {
				add(b)
			}
		}
	}
	return out
}
