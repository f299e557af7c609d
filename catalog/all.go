package catalog

import (
	"maps"
	"slices"
	"strings"

	"github.com/getkin/kin-openapi/openapi3"
)

// AllLocales is the locale index of language=all: localized text is an
// object keyed by the 18 locale codes.
const AllLocales = NumLocales

// AllLanguages is the Content-Language of a language=all body: the 18 codes.
var AllLanguages = strings.Join(Locales[:], ", ")

// appendAll appends the language=all JSON of one value in the 18 locales
// (vals[i] is locale i's), guided by the schema: localized text becomes an
// object keyed by locale code, objects and arrays merge field by field and
// element by element, the rest is en-US's. It writes as it merges: building
// the merged tree to encode it was two thirds of the cost.
func appendAll(b []byte, sc *openapi3.Schema, vals []any) ([]byte, error) {
	base := vals[DefaultLocale]
	if r, ok := base.(rawJSON); ok {
		return append(b, r...), nil // a nested item, rendered already
	}
	if sc == nil {
		return appendJSON(b, base)
	}
	sc = unwrapAllOf(sc)
	var err error
	if isLocalized(sc) {
		return appendLocalized(b, vals)
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
			for i := range vals {
				m, _ := vals[i].(map[string]any)
				sv, ok := m[k]
				if !ok {
					sv = v
				}
				sub[i] = sv
			}
			if ps := sc.Properties[k]; ps == nil || ps.Value == nil {
				b, err = appendUnnamed(b, sub)
			} else {
				b, err = appendAll(b, ps.Value, sub)
			}
			if err != nil {
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
				sub[i] = v
				if a, _ := vals[i].([]any); j < len(a) {
					sub[i] = a[j]
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

// appendUnnamed appends the language=all JSON of a field openapi.yaml does
// not describe: localized when it is text in every locale, not all the same.
func appendUnnamed(b []byte, vals []any) ([]byte, error) {
	base := vals[DefaultLocale]
	differs := false
	for _, v := range vals {
		s, ok := v.(string)
		if !ok {
			return appendJSON(b, base)
		}
		differs = differs || s != base
	}
	if !differs {
		return appendJSON(b, base)
	}
	return appendLocalized(b, vals)
}

// appendLocalized appends {locale: value} for the 18 locales' values.
func appendLocalized(b []byte, vals []any) ([]byte, error) {
	b = append(b, '{')
	for n, i := range localesByCode {
		if n > 0 {
			b = append(b, ',')
		}
		b = append(b, localeKeys[i]...)
		var err error
		if b, err = appendJSON(b, vals[i]); err != nil {
			return nil, err
		}
	}
	return append(b, '}'), nil
}

// localesByCode is the locale indexes in sorted code order; localeKeys[i] is `"code":`.
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

// unwrapAllOf is the schema an allOf of one wraps (a nullable reference), else sc.
func unwrapAllOf(sc *openapi3.Schema) *openapi3.Schema {
	if len(sc.AllOf) == 1 && sc.AllOf[0].Value != nil {
		return sc.AllOf[0].Value
	}
	return sc
}

// isLocalized reports whether a schema is localized text (x-localized: true).
func isLocalized(sc *openapi3.Schema) bool {
	loc, _ := sc.Extensions["x-localized"].(bool)
	return loc && sc.Type.Is("string")
}

// TextOnly reduces full items of a source category in one locale to a
// translation overlay: each item's uuid and localized text, with the uuid or
// tier of nested elements so the merge finds them. Items without text are
// left out.
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
	sc = unwrapAllOf(sc)
	if isLocalized(sc) {
		return v, true
	}
	switch x := v.(type) {
	case map[string]any:
		out := map[string]any{}
		for k, pv := range x {
			ps := sc.Properties[k]
			if ps == nil || ps.Value == nil {
				if s, ok := pv.(string); ok { // unnamed text may be localized
					out[k] = s
				}
				continue
			}
			if t, ok := textOnly(ps.Value, pv); ok {
				out[k] = t
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

// SplitAll splits items captured with language=all into the en-US items and
// one translation overlay per other locale; ok is false (items unchanged)
// when no text is an object keyed by locale code.
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

// pickLocale copies v with every localized object replaced by its text in loc.
func pickLocale(sc *openapi3.Schema, v any, loc int, found *bool) any {
	if sc == nil {
		return v
	}
	sc = unwrapAllOf(sc)
	if isLocalized(sc) {
		m, ok := v.(map[string]any)
		if !ok {
			return v
		}
		*found = true
		return textIn(m, loc)
	}
	switch x := v.(type) {
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, pv := range x {
			switch ps := sc.Properties[k]; {
			case ps != nil && ps.Value != nil:
				out[k] = pickLocale(ps.Value, pv, loc, found)
			case isLocaleObject(pv): // unnamed, localized
				*found = true
				out[k] = textIn(pv.(map[string]any), loc)
			default:
				out[k] = pv
			}
		}
		return out
	case []any:
		out := slices.Clone(x)
		for i, e := range x {
			if sc.Items != nil {
				out[i] = pickLocale(sc.Items.Value, e, loc, found)
			}
		}
		return out
	}
	return v
}

// textIn is a localized object's text in locale loc, en-US's when it lacks loc.
func textIn(m map[string]any, loc int) any {
	if t, ok := m[Locales[loc]]; ok {
		return t
	}
	return m[Locales[DefaultLocale]]
}

// isLocaleObject reports whether v is an object with an en-US key, only
// locale codes as keys and only text or null as values.
func isLocaleObject(v any) bool {
	m, ok := v.(map[string]any)
	if !ok {
		return false
	}
	if _, ok := m[Locales[DefaultLocale]]; !ok {
		return false
	}
	for k, t := range m {
		if loc, ok := ParseLocale(k); !ok || Locales[loc] != k {
			return false
		}
		if _, text := t.(string); !text && t != nil {
			return false
		}
	}
	return true
}

// pruneItem reduces n, an item of category c (schema sc) in a locale whose
// en-US item is en, to what appendAll reads of it (pruneForAll), without
// the fields its nested items are spliced into: once the locale's bodies are
// rendered, that is all language=all needs of it.
func pruneItem(sc *openapi3.Schema, en, n *node) map[string]any {
	v := map[string]any{}
	if p, ok := pruneForAll(sc, en.v, n.v); ok {
		v = p.(map[string]any)
	}
	for _, k := range en.kids {
		delete(v, k.field)
	}
	return v
}

// pruneForAll reduces v, a locale's value of what is base in en-US, to what
// appendAll reads of it: its localized text and the text of fields
// openapi.yaml does not name (or null where such a field is not text), in
// the objects and arrays that hold them; false when appendAll reads nothing
// of it. Where it leaves a field out appendAll takes en-US's, as it does for
// what it would not read; an array element it does not keep is nil, which
// appendAll also takes as en-US's (a localized one is always kept).
func pruneForAll(sc *openapi3.Schema, base, v any) (any, bool) {
	if _, ok := base.(rawJSON); ok || sc == nil {
		return nil, false
	}
	sc = unwrapAllOf(sc)
	if isLocalized(sc) {
		return v, true
	}
	switch x := base.(type) {
	case map[string]any:
		m, ok := v.(map[string]any)
		if !ok {
			return nil, false
		}
		out := map[string]any{}
		for k, bv := range x {
			lv, ok := m[k]
			if !ok {
				continue
			}
			if ps := sc.Properties[k]; ps == nil || ps.Value == nil {
				s, isText := lv.(string)
				switch {
				case !isText:
					out[k] = nil // not text: appendUnnamed takes en-US's
				case s != bv:
					out[k] = s
				}
				continue
			}
			if ls, ok := lv.(string); ok && isLocalized(unwrapAllOf(sc.Properties[k].Value)) && bv == any(ls) {
				continue // en-US's text
			}
			if p, ok := pruneForAll(sc.Properties[k].Value, bv, lv); ok {
				out[k] = p
			}
		}
		return out, len(out) > 0
	case []any:
		a, ok := v.([]any)
		if !ok || sc.Items == nil || sc.Items.Value == nil {
			return nil, false
		}
		out := make([]any, min(len(a), len(x)))
		kept := 0
		for j := range out {
			if p, ok := pruneForAll(sc.Items.Value, x[j], a[j]); ok {
				out[j], kept = p, j+1
			}
		}
		return out[:kept], kept > 0
	}
	return nil, false
}
