package catalog

import (
	"bytes"
	"encoding/json"
	"maps"
	"math"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/refdata/refdata/cores"
	"github.com/refdata/refdata/representation"
)

// AllLocales is the locale index of language=all: every localized text field is
// an object keyed by the 18 locale codes, as the public API serves it.
const AllLocales = NumLocales

// AllLanguages is the Content-Language of a language=all body: the 18 codes.
var AllLanguages = strings.Join(Locales[:], ", ")

// renderAll renders the language=all bodies of a category from its 18 locale
// bodies: each field openapi.yaml marks x-localized becomes {locale: text}.
// Locales that share a body are decoded once. An item whose 18 locale bodies
// are the ones its previous language=all body was merged from, as prior (nil:
// no previous version) knows it, keeps that body: merging is the costly part
// of a swap's render.
func (e *Edition) renderAll(c Category, prior allSource) error {
	sc, err := componentSchema(c.Schema())
	if err != nil {
		return err
	}
	t := &e.tables[c]
	rs := make([]rendered, 0, len(t.order))
	vals := make([]any, NumLocales)
	var scratch []byte
	var p cores.Pacer
	for _, u := range t.order {
		p.Yield()
		bodies := t.items[u]
		if prior != nil {
			if old := prior.priorAll(u, bodies); old != nil {
				bodies[AllLocales] = old
				rs = append(rs, rendered{uuid: u.String(), body: old.JSON})
				continue
			}
		}
		decoded := map[*representation.Body]any{}
		for loc := range Locales {
			b := bodies[loc]
			v, ok := decoded[b]
			if !ok {
				var env struct{ Data any }
				if err := json.Unmarshal(b.JSON, &env); err != nil {
					return err
				}
				v = env.Data
				decoded[b] = v
			}
			vals[loc] = v
		}
		// Merged in a buffer the items share, kept at its size: an edition
		// holds every body for as long as it is served.
		scratch, err = appendAll(append(scratch[:0], itemPrefix...), sc, vals)
		if err != nil {
			return err
		}
		j := bytes.Clone(append(scratch, '}'))
		bodies[AllLocales] = representation.NewBody(j, AllLanguages)
		rs = append(rs, rendered{uuid: u.String(), body: j})
	}
	t.list[AllLocales] = representation.NewBody(listEnvelope(rs), AllLanguages)
	return nil
}

// An allSource knows the language=all bodies of the previous version: a
// table of the previous edition in this process, or what a build plan
// carries to a builder process (priorAlls).
type allSource interface {
	// priorAll returns the language=all body item u had if bodies, its 18
	// locale bodies now, are those that body was merged from; else nil.
	priorAll(u UUID, bodies *[NumLocales + 1]*representation.Body) *representation.Body
}

func (t *table) priorAll(u UUID, bodies *[NumLocales + 1]*representation.Body) *representation.Body {
	if old := t.items[u]; old != nil && sameLocales(bodies, old) {
		return old[AllLocales]
	}
	return nil
}

// sameLocales reports whether two items' bodies agree in every locale.
func sameLocales(a, b *[NumLocales + 1]*representation.Body) bool {
	for loc := range NumLocales {
		if a[loc] != b[loc] && !bytes.Equal(a[loc].JSON, b[loc].JSON) {
			return false
		}
	}
	return b[AllLocales] != nil
}

// itemData is the data of an item envelope (itemEnvelope's inverse).
func itemData(body []byte) []byte {
	return body[len(itemPrefix) : len(body)-1]
}

// appendAll appends the language=all JSON of one value in the 18 locales
// (vals[i] is locale i's), guided by the schema: localized text becomes an
// object keyed by locale code; objects and arrays are merged field by field and
// element by element; everything else is the en-US value. The bytes are those
// of encoding/json (sorted object keys, no HTML escaping), written as the
// merge goes instead of building the merged tree and encoding it: that was
// two thirds of rendering language=all (BenchmarkLoadEdition's profile).
func appendAll(b []byte, sc *openapi3.Schema, vals []any) ([]byte, error) {
	base := vals[DefaultLocale]
	if sc == nil {
		return appendJSON(b, base)
	}
	if len(sc.AllOf) == 1 && sc.AllOf[0].Value != nil {
		sc = sc.AllOf[0].Value
	}
	var err error
	if isLocalized(sc) {
		b = append(b, '{')
		for n, i := range localesByCode {
			if n > 0 {
				b = append(b, ',')
			}
			b = append(b, localeKeys[i]...)
			if b, err = appendJSON(b, vals[i]); err != nil {
				return nil, err
			}
		}
		return append(b, '}'), nil
	}
	switch x := base.(type) {
	case map[string]any:
		sub := make([]any, NumLocales)
		b = append(b, '{')
		for n, k := range slices.Sorted(maps.Keys(x)) {
			if b, err = appendKey(b, n, k); err != nil {
				return nil, err
			}
			v := x[k]
			ps := sc.Properties[k]
			if ps == nil || ps.Value == nil {
				if b, err = appendJSON(b, v); err != nil {
					return nil, err
				}
				continue
			}
			for i := range vals {
				m, _ := vals[i].(map[string]any)
				sv, ok := m[k]
				if !ok {
					sv = v
				}
				sub[i] = sv
			}
			if b, err = appendAll(b, ps.Value, sub); err != nil {
				return nil, err
			}
		}
		return append(b, '}'), nil
	case []any:
		if sc.Items == nil || sc.Items.Value == nil {
			return appendJSON(b, x)
		}
		sub := make([]any, NumLocales)
		b = append(b, '[')
		for j, v := range x {
			if j > 0 {
				b = append(b, ',')
			}
			for i := range vals {
				a, _ := vals[i].([]any)
				if j < len(a) {
					sub[i] = a[j]
				} else {
					sub[i] = v
				}
			}
			if b, err = appendAll(b, sc.Items.Value, sub); err != nil {
				return nil, err
			}
		}
		return append(b, ']'), nil
	}
	return appendJSON(b, base)
}

// localesByCode is the locale indexes in the order encoding/json sorts their
// codes as object keys; localeKeys[i] is `"code":`.
var localesByCode, localeKeys = func() ([]int, [NumLocales][]byte) {
	idx := make([]int, NumLocales)
	var keys [NumLocales][]byte
	for i, l := range Locales {
		idx[i] = i
		keys[i] = []byte(`"` + l + `":`)
	}
	slices.SortFunc(idx, func(a, b int) int { return strings.Compare(Locales[a], Locales[b]) })
	return idx, keys
}()

// appendJSON appends v, a value as encoding/json decodes into any, as encode
// writes it. Strings that need no escaping and numbers in the range encoding/json
// writes in plain decimal are written here with the calls it makes; anything
// else goes through encode, so the bytes are its bytes.
func appendJSON(b []byte, v any) ([]byte, error) {
	switch x := v.(type) {
	case nil:
		return append(b, "null"...), nil
	case bool:
		return strconv.AppendBool(b, x), nil
	case string:
		if plainString(x) {
			b = append(b, '"')
			b = append(b, x...)
			return append(b, '"'), nil
		}
	case float64:
		if a := math.Abs(x); a == 0 || a >= 1e-6 && a < 1e21 {
			return strconv.AppendFloat(b, x, 'f', -1, 64), nil
		}
	case map[string]any:
		b = append(b, '{')
		for n, k := range slices.Sorted(maps.Keys(x)) {
			var err error
			if b, err = appendKey(b, n, k); err != nil {
				return nil, err
			}
			if b, err = appendJSON(b, x[k]); err != nil {
				return nil, err
			}
		}
		return append(b, '}'), nil
	case []any:
		b = append(b, '[')
		for j, e := range x {
			if j > 0 {
				b = append(b, ',')
			}
			var err error
			if b, err = appendJSON(b, e); err != nil {
				return nil, err
			}
		}
		return append(b, ']'), nil
	}
	return appendEncoded(b, v)
}

// appendKey appends the n-th key of an object (n from 0) and its colon, with
// the comma before it after the first.
func appendKey(b []byte, n int, k string) ([]byte, error) {
	if n > 0 {
		b = append(b, ',')
	}
	b, err := appendJSON(b, k)
	if err != nil {
		return nil, err
	}
	return append(b, ':'), nil
}

// plainString reports whether encoding/json (without HTML escaping) writes s
// between quotes as it is: no quote, backslash or control byte, valid UTF-8,
// and neither U+2028 nor U+2029 (which it escapes).
func plainString(s string) bool {
	ascii := true
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c < 0x20 || c == '"' || c == '\\' {
			return false
		}
		if c >= utf8.RuneSelf {
			ascii = false
		}
	}
	return ascii || utf8.ValidString(s) && !strings.ContainsRune(s, '\u2028') && !strings.ContainsRune(s, '\u2029')
}

// isLocalized reports whether a schema is localized text (x-localized: true).
func isLocalized(sc *openapi3.Schema) bool {
	loc, _ := sc.Extensions["x-localized"].(bool)
	return loc && sc.Type.Is("string")
}

// TextOnly reduces full items of a source category — a localized capture's
// payload, as the public API serves it in one locale — to a translation overlay:
// each item's uuid and its localized text (x-localized), with the uuid or tier
// of nested elements so the merge finds them (fixtures/README.md, translation
// merge rule). Items without text are left out.
func TextOnly(c Category, items []any) ([]any, error) {
	sc, err := componentSchema(c.Schema())
	if err != nil {
		return nil, err
	}
	out := make([]any, 0, len(items))
	for _, it := range items {
		if t, ok := textOnly(sc, it); ok {
			out = append(out, t)
		}
	}
	return out, nil
}

func textOnly(sc *openapi3.Schema, v any) (any, bool) {
	if sc == nil {
		return nil, false
	}
	if len(sc.AllOf) == 1 && sc.AllOf[0].Value != nil {
		sc = sc.AllOf[0].Value
	}
	if isLocalized(sc) {
		return v, true
	}
	switch x := v.(type) {
	case map[string]any:
		out := map[string]any{}
		for k, pv := range x {
			if ps := sc.Properties[k]; ps != nil && ps.Value != nil {
				if t, ok := textOnly(ps.Value, pv); ok {
					out[k] = t
				}
			}
		}
		if len(out) == 0 {
			return nil, false
		}
		keys(x, out)
		return out, true
	case []any:
		if sc.Items == nil {
			return nil, false
		}
		out := make([]any, len(x))
		found := false
		for i, e := range x {
			if t, ok := textOnly(sc.Items.Value, e); ok {
				out[i] = t
				found = true
				continue
			}
			// Keep the position (elements without uuid or tier match by index).
			m := map[string]any{}
			if em, ok := e.(map[string]any); ok {
				keys(em, m)
			}
			out[i] = m
		}
		return out, found
	}
	return nil, false
}

// keys copies the fields a merge matches elements by.
func keys(from, to map[string]any) {
	for _, k := range []string{"uuid", "tier"} {
		if v, ok := from[k]; ok {
			to[k] = v
		}
	}
}

// SplitAll recognizes items captured with language=all (localized text as an
// object keyed by locale code) and splits them into the en-US items and one
// translation overlay per other locale; ok is false when no text is such an
// object (the items are then returned unchanged).
func SplitAll(c Category, items []any) (en []any, overlays map[string][]any, ok bool, err error) {
	sc, err := componentSchema(c.Schema())
	if err != nil {
		return nil, nil, false, err
	}
	found := false
	en = make([]any, len(items))
	for i, it := range items {
		en[i] = pickLocale(sc, it, DefaultLocale, &found)
	}
	if !found {
		return items, nil, false, nil
	}
	overlays = map[string][]any{}
	for loc, lang := range Locales {
		if loc == DefaultLocale {
			continue
		}
		one := make([]any, len(items))
		for i, it := range items {
			one[i] = pickLocale(sc, it, loc, &found)
		}
		if overlays[lang], err = TextOnly(c, one); err != nil {
			return nil, nil, false, err
		}
	}
	return en, overlays, true, nil
}

// pickLocale copies v with every localized object replaced by its text in locale
// loc (en-US when the object lacks that locale).
func pickLocale(sc *openapi3.Schema, v any, loc int, found *bool) any {
	if sc == nil {
		return v
	}
	if len(sc.AllOf) == 1 && sc.AllOf[0].Value != nil {
		sc = sc.AllOf[0].Value
	}
	if isLocalized(sc) {
		m, ok := v.(map[string]any)
		if !ok {
			return v
		}
		*found = true
		if t, ok := m[Locales[loc]]; ok {
			return t
		}
		return m[Locales[DefaultLocale]]
	}
	switch x := v.(type) {
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, pv := range x {
			if ps := sc.Properties[k]; ps != nil && ps.Value != nil {
				out[k] = pickLocale(ps.Value, pv, loc, found)
			} else {
				out[k] = pv
			}
		}
		return out
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			if sc.Items != nil {
				out[i] = pickLocale(sc.Items.Value, e, loc, found)
			} else {
				out[i] = e
			}
		}
		return out
	}
	return v
}
