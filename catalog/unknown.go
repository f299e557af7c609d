package catalog

import (
	"cmp"
	"fmt"
	"sort"
	"strconv"

	"github.com/getkin/kin-openapi/openapi3"
)

// Fields openapi.yaml does not describe are served as sent, within bounds
// past which the version is refused.
const (
	MaxUnknownDepth      = 8        // deepest nesting inside one unknown field
	MaxUnknownPerItem    = 64 << 10 // bytes of unknown fields in one item
	MaxUnknownPerVersion = 16 << 20 // bytes of unknown fields in a version
)

// Unknown is one field openapi.yaml does not describe, in one catalog.
type Unknown struct {
	Category Category `json:"category"`
	Field    string   `json:"field"` // e.g. "background", "skins[].levels[].foo"
	// Items counts the items that carry it; Example is one of their uuids.
	Items   int    `json:"items"`
	Example string `json:"example"`
	// FirstSeen is the first version known to have had it ("" when unknown).
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
		u.FirstSeen = cmp.Or(seen[key{u.Category, u.Field}], id)
		out[i] = u
	}
	return out
}

// unknownFields returns an item's unknown fields and their bytes, or a
// rejection when they pass the bounds.
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

// measure returns about how many bytes of JSON v is, and how deep it nests.
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
