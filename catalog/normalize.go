package catalog

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"

	"github.com/getkin/kin-openapi/openapi3"

	"github.com/refdata/refdata"
)

// Fill records one default filled in where a source record lacked a field the
// contract requires.
type Fill struct {
	Schema string // component schema, e.g. "Map"
	Field  string
	Value  any
}

// spec parses openapi.yaml itself: gen's embedded copy has operationIds rewritten.
var spec = sync.OnceValues(func() (*openapi3.T, error) {
	doc, err := openapi3.NewLoader().LoadFromData(refdata.OpenAPIYAML)
	if err != nil {
		return nil, fmt.Errorf("load openapi.yaml: %w", err)
	}
	if err := doc.Validate(openapi3.NewLoader().Context); err != nil {
		return nil, fmt.Errorf("openapi.yaml is invalid: %w", err)
	}
	return doc, nil
})

// Spec returns the parsed openapi.yaml; callers must not modify it.
func Spec() (*openapi3.T, error) { return spec() }

func componentSchema(name string) (*openapi3.Schema, error) {
	doc, err := spec()
	if err != nil {
		return nil, err
	}
	ref, ok := doc.Components.Schemas[name]
	if !ok || ref.Value == nil {
		return nil, fmt.Errorf("openapi.yaml has no schema %q", name)
	}
	return ref.Value, nil
}

// fillDefaults gives every required property a record lacks a value: null
// where nullable, "" for strings, false for booleans, [] for arrays. Identity
// fields, numbers and objects are never invented: validation rejects them.
func fillDefaults(sc *openapi3.Schema, name string, v any, fills map[Fill]int) {
	if sc == nil {
		return
	}
	if len(sc.AllOf) == 1 && sc.AllOf[0].Value != nil {
		fillDefaults(sc.AllOf[0].Value, refName(sc.AllOf[0], name), v, fills)
		return
	}
	switch x := v.(type) {
	case map[string]any:
		for _, req := range sc.Required {
			if _, ok := x[req]; ok || req == "uuid" || req == "manifestId" {
				continue
			}
			ps := sc.Properties[req]
			if ps == nil || ps.Value == nil {
				continue
			}
			var def any
			switch {
			case ps.Value.Nullable:
				def = nil
			case ps.Value.Type.Is("string"):
				def = ""
			case ps.Value.Type.Is("boolean"):
				def = false
			case ps.Value.Type.Is("array"):
				def = []any{}
			default:
				continue
			}
			x[req] = def
			fills[Fill{Schema: name, Field: req, Value: fmt.Sprint(def)}]++
		}
		for k, pv := range x {
			ps := sc.Properties[k]
			if pv == nil && isText(ps) {
				x[k] = ""
				fills[Fill{Schema: name, Field: k, Value: `"" (null in the source)`}]++
				continue
			}
			if ps != nil {
				fillDefaults(ps.Value, refName(ps, name+"."+k), pv, fills)
			}
		}
	case []any:
		if sc.Items != nil {
			for _, it := range x {
				fillDefaults(sc.Items.Value, refName(sc.Items, name+"[]"), it, fills)
			}
		}
	}
}

// isText reports whether a property is localized text that is not nullable.
func isText(ps *openapi3.SchemaRef) bool {
	return ps != nil && ps.Value != nil && !ps.Value.Nullable && isLocalized(ps.Value)
}

func refName(r *openapi3.SchemaRef, fallback string) string {
	if name, ok := strings.CutPrefix(r.Ref, "#/components/schemas/"); ok && name != "" {
		return name
	}
	return fallback
}

// normalizeVersion maps the old version record's fields onto the contract's,
// keeping the public API's names as aliases.
func normalizeVersion(v map[string]any, fills map[Fill]int) error {
	alias := func(contract, old string) {
		if _, ok := v[contract]; !ok {
			if ov, ok := v[old]; ok {
				v[contract] = ov
			}
		}
		if cv, ok := v[contract]; ok {
			v[old] = cv
		}
	}
	alias("publisherClientVersion", "riotClientVersion")
	alias("publisherClientBuild", "riotClientBuild")
	sc, err := componentSchema("Version")
	if err != nil {
		return err
	}
	fillDefaults(sc, "Version", v, fills)
	return nil
}

// normalizeItems brings items to the contract's shape, in place. Items merged
// from a translation (translated) share en-US's converted values, so only
// their defaults are filled.
func normalizeItems(c Category, items []any, fills map[Fill]int, translated bool) error {
	sc, err := componentSchema(c.Schema())
	if err != nil {
		return err
	}
	for _, it := range items {
		m, ok := it.(map[string]any)
		if !ok {
			continue // validation reports it
		}
		switch {
		case translated:
		case c == Maps:
			normalizeCallouts(m)
		case c == GameModes:
			normalizeMinimap(m)
		}
		fillDefaults(sc, c.Schema(), m, fills)
	}
	return nil
}

// normalizeCallouts converts callout locations from world coordinates to the
// minimap position, axes swapped as the game does (1481 of 1490 captured
// callouts land in [0, 1] so, 485 taken literally).
func normalizeCallouts(m map[string]any) {
	xm, ok1 := m["xMultiplier"].(float64)
	ym, ok2 := m["yMultiplier"].(float64)
	xa, ok3 := m["xScalarToAdd"].(float64)
	ya, ok4 := m["yScalarToAdd"].(float64)
	callouts, ok5 := m["callouts"].([]any)
	if !ok1 || !ok2 || !ok3 || !ok4 || !ok5 {
		return
	}
	for _, c := range callouts {
		cm, _ := c.(map[string]any)
		loc, _ := cm["location"].(map[string]any)
		wx, okx := loc["x"].(float64)
		wy, oky := loc["y"].(float64)
		if !okx || !oky {
			continue
		}
		loc["x"] = wy*xm + xa
		loc["y"] = wx*ym + ya
	}
}

// normalizeMinimap publishes the minimap flag under both names, consistently.
func normalizeMinimap(m map[string]any) {
	hidden, hasHidden := m["isMinimapHidden"].(bool)
	allowed, hasAllowed := m["isMinimapAllowed"].(bool)
	switch {
	case hasHidden && !hasAllowed:
		m["isMinimapAllowed"] = !hidden
	case hasAllowed && !hasHidden:
		m["isMinimapHidden"] = !allowed
	}
}

// Translate lays a translation's partial items over the en-US items by the
// translation merge rule (fixtures/README.md). base is not modified: what the
// overlay touches is copied, the rest shared.
func Translate(base, overlay []any) []any {
	return mergeValue(base, overlay).([]any)
}

func mergeValue(base, over any) any {
	switch o := over.(type) {
	case map[string]any:
		b, ok := base.(map[string]any)
		if !ok {
			return over
		}
		m := maps.Clone(b)
		for k, ov := range o {
			m[k] = mergeValue(m[k], ov)
		}
		return m
	case []any:
		b, ok := base.([]any)
		if !ok {
			return over
		}
		s := slices.Clone(b)
		for i, ov := range o {
			j := MatchElement(b, ov, i)
			if j < 0 {
				continue // translations never add items
			}
			s[j] = mergeValue(s[j], ov)
		}
		return s
	default:
		return over
	}
}

// MatchElement is the translation merge rule's element match: the index in
// base of the element with over's uuid, else its tier, else at pos; or -1.
func MatchElement(base []any, over any, pos int) int {
	om, ok := over.(map[string]any)
	if ok {
		for _, key := range []string{"uuid", "tier"} {
			if want, ok := om[key]; ok {
				for j, bv := range base {
					if bm, ok := bv.(map[string]any); ok && bm[key] == want {
						return j
					}
				}
				return -1
			}
		}
	}
	if pos < len(base) {
		return pos
	}
	return -1
}

func deepCopy(v any) any {
	switch x := v.(type) {
	case map[string]any:
		m := make(map[string]any, len(x))
		for k, vv := range x {
			m[k] = deepCopy(vv)
		}
		return m
	case []any:
		s := make([]any, len(x))
		for i, vv := range x {
			s[i] = deepCopy(vv)
		}
		return s
	default:
		return v
	}
}
