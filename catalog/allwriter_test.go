package catalog_test

import (
	"bytes"
	"encoding/json"
	"math"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"

	"github.com/refdata/refdata/catalog"
	"github.com/refdata/refdata/fixtures"
)

// TestAppendAllMatchesTree: the language=all writer gives, for every item of
// both sample versions in every category, the bytes of the obvious way —
// build the merged tree (mergeTree, the rule as the spec states it) and encode
// it with encoding/json (trimmed with -short and -race: dataRendered).
func TestAppendAllMatchesTree(t *testing.T) {
	t.Parallel()
	n, localized := 0, 0
	wantItems, wantLocalized := 1000, 100
	if raceOn || testing.Short() {
		wantItems, wantLocalized = 100, 10
	}
	for _, v := range fixtures.Versions() {
		r := dataRendered(t, v)
		for _, c := range catalog.Categories() {
			sc, err := catalog.ComponentSchema(c.Schema())
			if err != nil {
				t.Fatal(err)
			}
			for _, u := range r.UUIDs(c) {
				vals := make([]any, catalog.NumLocales)
				distinct := map[string]bool{}
				for loc := range catalog.Locales {
					b := item(r, c, u, loc)
					distinct[string(b.Bytes())] = true
					var env struct{ Data any }
					if err := json.Unmarshal(b.Bytes(), &env); err != nil {
						t.Fatal(err)
					}
					vals[loc] = env.Data
				}
				want, err := catalog.Encode(mergeTree(sc, vals))
				if err != nil {
					t.Fatal(err)
				}
				got, err := catalog.AppendAll(nil, sc, vals)
				if err != nil {
					t.Fatal(err)
				}
				if !bytes.Equal(got, want) {
					t.Fatalf("%s %s:\n got %s\nwant %s", c.Name(), u, got, want)
				}
				// The language=all body is that item, in its envelope.
				if b := item(r, c, u, catalog.AllLocales).JSON; !bytes.Equal(b, []byte(`{"status":200,"data":`+string(want)+`}`)) {
					t.Fatalf("%s %s: the language=all body is not the merged item:\n got %s\nwant %s", c.Name(), u, b, want)
				}
				n++
				if len(distinct) > 1 {
					localized++
				}
			}
		}
	}
	if n < wantItems || localized < wantLocalized {
		t.Errorf("compared %d items, %d of them translated, want at least %d and %d", n, localized, wantItems, wantLocalized)
	}
	t.Logf("compared %d items, %d of them translated", n, localized)
}

// TestAppendJSONMatchesEncode: values the sample may lack — escapes, U+2028,
// invalid UTF-8, numbers at encoding/json's exponent cutoffs — come out as
// encoding/json writes them; NaN is refused as it refuses it.
func TestAppendJSONMatchesEncode(t *testing.T) {
	t.Parallel()
	for _, v := range []any{
		nil, true, false, "", "plain", "R&D <b>", `quote " and \ backslash`, "tab\tnew\nline\x01\x7f",
		"line\u2028sep\u2029", "日本語", "bad \xff utf-8", "\u00e9t\u00e9",
		0.0, math.Copysign(0, -1), 1.0, -5.0, 123.456, 1e-6, 9.99e-7, 1e-7, 1e20, 1e21, 1.5e300, -2.5e-10,
		map[string]any{"b": 1.0, "a": []any{"x", nil, map[string]any{"é": "y", "A": false}}, "": "empty key"},
		[]any{}, map[string]any{},
	} {
		want, err := catalog.Encode(v)
		if err != nil {
			t.Fatal(err)
		}
		got, err := catalog.AppendJSON([]byte("prefix"), v)
		if err != nil || !bytes.Equal(got, append([]byte("prefix"), want...)) {
			t.Errorf("%#v: got %s (%v), want prefix%s", v, got, err, want)
		}
	}
	if _, err := catalog.AppendJSON(nil, math.NaN()); err == nil {
		t.Error("NaN: no error")
	}
}

// mergeTree is the language=all rule on decoded values: localized text (a
// string schema with x-localized) becomes an object keyed by locale code;
// objects and arrays merge field by field and element by element (a locale
// lacking one takes en-US's); a field the schema does not name is localized
// like text when it is text in every locale and not the same text in all;
// anything else is the en-US value.
func mergeTree(sc *openapi3.Schema, vals []any) any {
	base := vals[catalog.DefaultLocale]
	if sc == nil {
		return base
	}
	if len(sc.AllOf) == 1 && sc.AllOf[0].Value != nil {
		sc = sc.AllOf[0].Value
	}
	if loc, _ := sc.Extensions["x-localized"].(bool); loc && sc.Type.Is("string") {
		m := make(map[string]any, catalog.NumLocales)
		for i, l := range catalog.Locales {
			m[l] = vals[i]
		}
		return m
	}
	switch x := base.(type) {
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, v := range x {
			sub := make([]any, catalog.NumLocales)
			for i := range vals {
				m, _ := vals[i].(map[string]any)
				sv, ok := m[k]
				if !ok {
					sv = v
				}
				sub[i] = sv
			}
			ps := sc.Properties[k]
			if ps == nil || ps.Value == nil {
				out[k] = mergeUnnamed(sub)
				continue
			}
			out[k] = mergeTree(ps.Value, sub)
		}
		return out
	case []any:
		if sc.Items == nil || sc.Items.Value == nil {
			return x
		}
		out := make([]any, len(x))
		for j, v := range x {
			sub := make([]any, catalog.NumLocales)
			for i := range vals {
				if a, _ := vals[i].([]any); j < len(a) {
					sub[i] = a[j]
				} else {
					sub[i] = v
				}
			}
			out[j] = mergeTree(sc.Items.Value, sub)
		}
		return out
	}
	return base
}

// mergeUnnamed is the language=all rule for a field the schema does not name.
func mergeUnnamed(vals []any) any {
	differs := false
	for _, v := range vals {
		s, ok := v.(string)
		if !ok {
			return vals[catalog.DefaultLocale]
		}
		differs = differs || s != vals[catalog.DefaultLocale]
	}
	if !differs {
		return vals[catalog.DefaultLocale]
	}
	m := make(map[string]any, catalog.NumLocales)
	for i, l := range catalog.Locales {
		m[l] = vals[i]
	}
	return m
}
