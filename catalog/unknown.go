package catalog

import (
	"fmt"
	"sort"
	"strconv"

	"github.com/getkin/kin-openapi/openapi3"
)

// An upstream adds fields to its items every few patches. Those openapi.yaml
// does not describe are served as the upstream sent them (the item schemas
// admit additional properties), diffed like the rest, and reported once per
// catalog and field. Bounds keep one broken or hostile upstream from filling
// the server: past them the version is refused.
const (
	// MaxUnknownDepth is the deepest nesting inside one unknown field.
	MaxUnknownDepth = 8
	// MaxUnknownPerItem is the most bytes of unknown fields one item carries.
	MaxUnknownPerItem = 64 << 10
	// MaxUnknownPerVersion is the most bytes of unknown fields in a version.
	MaxUnknownPerVersion = 16 << 20
)

// Unknown is one field openapi.yaml does not describe, in one catalog.
type Unknown struct {
	Category Category `json:"category"`
	// Field is where it is in an item: "background", or "skins[].levels[].foo"
	// for one nested in an item's arrays and objects.
	Field string `json:"field"`
	// Items counts the items that carry it; Example is one of their uuids.
	Items   int    `json:"items"`
	Example string `json:"example"`
	// FirstSeen is the manifest ID of the first version that had it, as far
	// as the store remembers ("" when not known).
	FirstSeen string `json:"firstSeen,omitempty"`
}

func (u Unknown) String() string {
	s := fmt.Sprintf("%s: %s in %d items (e.g. %s)", u.Category.Name(), u.Field, u.Items, u.Example)
	if u.FirstSeen != "" {
		s += ", first seen in " + u.FirstSeen
	}
	return s
}

// SinceFirstSeen gives each of now's unknown fields the version it was first
// seen in: before's when before (the previous version's) had it, else id.
func SinceFirstSeen(now, before []Unknown, id string) []Unknown {
	type key struct {
		c Category
		f string
	}
	seen := map[key]string{}
	for _, u := range before {
		seen[key{u.Category, u.Field}] = u.FirstSeen
	}
	out := make([]Unknown, len(now))
	for i, u := range now {
		u.FirstSeen = id
		if first, ok := seen[key{u.Category, u.Field}]; ok && first != "" {
			u.FirstSeen = first
		}
		out[i] = u
	}
	return out
}

// unknownFields finds the unknown fields of one item of category c and
// checks them against the bounds: it returns the fields and how many bytes
// they hold, or a rejection.
func unknownFields(sc *openapi3.Schema, item map[string]any) (fields []string, size int, reject string) {
	seen := map[string]bool{}
	var walk func(sc *openapi3.Schema, v any, path string)
	walk = func(sc *openapi3.Schema, v any, path string) {
		if sc == nil || reject != "" {
			return
		}
		sc = unwrapAllOf(sc)
		switch x := v.(type) {
		case map[string]any:
			for k, pv := range x {
				ps := sc.Properties[k]
				if ps != nil && ps.Value != nil {
					walk(ps.Value, pv, join(path, k))
					continue
				}
				name := join(path, k)
				n, depth := measure(pv)
				switch {
				case depth > MaxUnknownDepth:
					reject = fmt.Sprintf("unknown field %s nests %d levels deep, more than the %d allowed", name, depth, MaxUnknownDepth)
				case size+n > MaxUnknownPerItem:
					reject = fmt.Sprintf("unknown fields of %d bytes or more, more than the %d an item may carry (%s)", size+n, MaxUnknownPerItem, name)
				}
				size += n
				if !seen[name] {
					seen[name] = true
					fields = append(fields, name)
				}
			}
		case []any:
			if sc.Items != nil {
				for _, e := range x {
					walk(sc.Items.Value, e, path+"[]")
				}
			}
		}
	}
	walk(sc, item, "")
	sort.Strings(fields)
	return fields, size, reject
}

func join(path, k string) string {
	if path == "" {
		return k
	}
	return path + "." + k
}

// measure returns roughly how many bytes of JSON v is, and how deeply it
// nests (a scalar is 0).
func measure(v any) (size, depth int) {
	switch x := v.(type) {
	case map[string]any:
		size = 2
		for k, e := range x {
			n, d := measure(e)
			size += len(k) + 4 + n
			depth = max(depth, d)
		}
		return size, depth + 1
	case []any:
		size = 2
		for _, e := range x {
			n, d := measure(e)
			size += n + 1
			depth = max(depth, d)
		}
		return size, depth + 1
	case string:
		return len(x) + 2, 0
	case float64:
		return len(strconv.FormatFloat(x, 'g', -1, 64)), 0
	}
	return 5, 0
}
