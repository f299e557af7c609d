package catalog

import (
	"encoding/json"
	"strings"

	"github.com/getkin/kin-openapi/openapi3"
)

// AllLocales is the locale index of language=all: every localized text field is
// an object keyed by the 18 locale codes, as the public API serves it.
const AllLocales = NumLocales

// AllLanguages is the Content-Language of a language=all body: the 18 codes.
var AllLanguages = strings.Join(Locales[:], ", ")

// renderAll renders the language=all bodies of a category from its 18 locale
// bodies: each field openapi.yaml marks x-localized becomes {locale: text}.
// Locales that share a body are decoded once.
func (e *Edition) renderAll(c Category) error {
	sc, err := componentSchema(c.Schema())
	if err != nil {
		return err
	}
	t := &e.tables[c]
	rs := make([]rendered, 0, len(t.order))
	vals := make([]any, NumLocales)
	for _, u := range t.order {
		bodies := t.items[u]
		decoded := map[*Body]any{}
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
		j, err := encode(mergeAll(sc, vals))
		if err != nil {
			return err
		}
		bodies[AllLocales] = NewBody(itemEnvelope(j), AllLanguages)
		rs = append(rs, rendered{uuid: u.String(), json: j})
	}
	t.list[AllLocales] = NewBody(listEnvelope(rs), AllLanguages)
	return nil
}

// mergeAll combines one value in the 18 locales (vals[i] is locale i's) into the
// language=all value, guided by the schema: localized text becomes an object
// keyed by locale code; objects and arrays are merged field by field and
// element by element; everything else is the en-US value.
func mergeAll(sc *openapi3.Schema, vals []any) any {
	base := vals[DefaultLocale]
	if sc == nil {
		return base
	}
	if len(sc.AllOf) == 1 && sc.AllOf[0].Value != nil {
		sc = sc.AllOf[0].Value
	}
	if isLocalized(sc) {
		m := make(map[string]any, NumLocales)
		for i, l := range Locales {
			m[l] = vals[i]
		}
		return m
	}
	switch x := base.(type) {
	case map[string]any:
		out := make(map[string]any, len(x))
		sub := make([]any, NumLocales)
		for k, v := range x {
			ps := sc.Properties[k]
			if ps == nil || ps.Value == nil {
				out[k] = v
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
			out[k] = mergeAll(ps.Value, sub)
		}
		return out
	case []any:
		if sc.Items == nil || sc.Items.Value == nil {
			return x
		}
		out := make([]any, len(x))
		sub := make([]any, NumLocales)
		for j, v := range x {
			for i := range vals {
				a, _ := vals[i].([]any)
				if j < len(a) {
					sub[i] = a[j]
				} else {
					sub[i] = v
				}
			}
			out[j] = mergeAll(sc.Items.Value, sub)
		}
		return out
	}
	return base
}

// isLocalized reports whether a schema is localized text (x-localized: true).
func isLocalized(sc *openapi3.Schema) bool {
	loc, _ := sc.Extensions["x-localized"].(bool)
	return loc && sc.Type.Is("string")
}
