package catalog

import (
	"cmp"
	"errors"
	"fmt"
	"maps"
	"path"
	"slices"
	"strconv"
	"strings"

	"github.com/getkin/kin-openapi/openapi3"
)

// Problem is one finding about a snapshot: the file, the item's uuid (when it
// has one), a JSON pointer into the file's data and the reason.
type Problem struct {
	File    string `json:"file"`
	UUID    string `json:"uuid,omitempty"`
	Pointer string `json:"pointer"`
	Reason  string `json:"reason"`
}

func (p Problem) String() string {
	id := ""
	if p.UUID != "" {
		id = " uuid " + p.UUID
	}
	return p.File + id + " at " + cmp.Or(p.Pointer, "/") + ": " + p.Reason
}

// Validation is what Validate found. Rejections make a version unfit to
// publish; unknown fields do not (they are served).
type Validation struct {
	Items      int // en-US items validated
	Rejections []Problem
	Unknown    []Unknown // once per catalog and field, in that order
	// Fills counts the defaults the normalizer filled in, as Build will.
	Fills map[Fill]int
}

// Repair removes null elements from the en-US items' nested arrays of objects,
// as the public API's flattened endpoints leave them out, and returns one
// Problem per removal. Call it before Validate and Render; it is idempotent.
// A lazy snapshot's items are repaired each time they are decoded: Repair
// reports what is repaired.
func Repair(s *Snapshot) []Problem {
	var notes []Problem
	for _, c := range SourceCategories() {
		items, _, err := s.sourceAsRead(c)
		if err != nil {
			continue // Validate reports it
		}
		repairItems(c, items, func(p Problem) { notes = append(notes, p) })
	}
	return notes
}

// repairItems is Repair of category c's en-US items.
func repairItems(c Category, items []any, note func(Problem)) {
	file := "en-US/" + c.File()
	for i, it := range items {
		m, ok := it.(map[string]any)
		if !ok {
			continue
		}
		id, _ := m["uuid"].(string)
		repairNulls(m, "/"+strconv.Itoa(i), func(ptr string) {
			note(Problem{File: file, UUID: id, Pointer: ptr, Reason: "null array element removed"})
		})
	}
}

func repairNulls(v any, ptr string, note func(string)) {
	switch x := v.(type) {
	case map[string]any:
		for _, k := range slices.Sorted(maps.Keys(x)) {
			p := ptr + "/" + escapePointer(k)
			arr, ok := x[k].([]any)
			if !ok {
				repairNulls(x[k], p, note)
				continue
			}
			objects, nulls := 0, 0
			for _, e := range arr {
				switch e.(type) {
				case map[string]any:
					objects++
				case nil:
					nulls++
				}
			}
			if nulls > 0 && objects > 0 && objects+nulls == len(arr) {
				kept := arr[:0:0]
				for j, e := range arr {
					if e == nil {
						note(p + "/" + strconv.Itoa(j))
						continue
					}
					kept = append(kept, e)
				}
				x[k] = kept
				arr = kept
			}
			for j, e := range arr {
				repairNulls(e, p+"/"+strconv.Itoa(j), note)
			}
		}
	case []any:
		for j, e := range x {
			repairNulls(e, ptr+"/"+strconv.Itoa(j), note)
		}
	}
}

// Validate checks copies of a snapshot's items, normalized as Render does,
// against openapi.yaml, and their identities: every item served on its own
// has a unique, well-formed uuid; translations name existing items. It fails
// only when the schemas cannot be loaded.
func Validate(s *Snapshot) (*Validation, error) {
	v := &Validation{Fills: map[Fill]int{}}

	ver := deepCopy(s.Version).(map[string]any)
	if err := normalizeVersion(ver, v.Fills); err != nil {
		return nil, err
	}
	sc, err := componentSchema("Version")
	if err != nil {
		return nil, err
	}
	v.check(sc, ver, "version.json", "", "")
	unknownBytes := 0

	// A category at a time, its translations after it: a lazy snapshot's
	// files are decoded one at a time. Reported as before, en-US's files
	// first, then each locale's (order).
	for _, c := range SourceCategories() {
		raw, ok, err := s.source(c)
		if err != nil {
			return nil, err
		}
		if !ok {
			continue
		}
		v.Items += len(raw)
		file := "en-US/" + c.File()
		items := deepCopy(raw).([]any)
		if err := normalizeItems(c, items, v.Fills, false); err != nil {
			return nil, err
		}
		sc, err := componentSchema(c.Schema())
		if err != nil {
			return nil, err
		}
		unknown := map[string]*Unknown{}
		for i, it := range items {
			ptr := "/" + strconv.Itoa(i)
			m, ok := it.(map[string]any)
			if !ok {
				v.reject(file, "", ptr, fmt.Sprintf("item is %s, want an object", jsonKind(it)))
				continue
			}
			id, _ := m["uuid"].(string)
			v.check(sc, m, file, id, ptr)
			fields, size, why := unknownFields(sc, m)
			if why != "" {
				v.reject(file, id, ptr, why)
			}
			unknownBytes += size
			for _, f := range fields {
				if unknown[f] == nil {
					unknown[f] = &Unknown{Category: c, Field: f, Example: id}
				}
				unknown[f].Items++
			}
		}
		for _, f := range slices.Sorted(maps.Keys(unknown)) {
			v.Unknown = append(v.Unknown, *unknown[f])
		}
		v.checkIdentities(c, file, items)
		items = nil
		for _, loc := range Locales {
			if loc == Locales[DefaultLocale] || !s.hasOverlay(loc, c) {
				continue
			}
			over, err := s.overlay(loc, c)
			if err != nil {
				return nil, err
			}
			unknownBytes += v.checkOverlay(c, path.Join(loc, c.File()), raw, over)
		}
	}
	if unknownBytes > MaxUnknownPerVersion {
		v.reject("(snapshot)", "", "", fmt.Sprintf("unknown fields of %d bytes in all, more than the %d a version may carry", unknownBytes, MaxUnknownPerVersion))
	}
	slices.SortStableFunc(v.Rejections, func(a, b Problem) int { return cmp.Compare(order(a.File), order(b.File)) })
	return v, nil
}

// order ranks a file as Validate reports it: the version record, en-US's
// catalogs, each other locale's, the snapshot as a whole.
func order(file string) int {
	loc, name, _ := strings.Cut(file, "/")
	l, ok := ParseLocale(loc)
	switch {
	case file == "version.json":
		return 0
	case !ok || Locales[l] != loc:
		return 1 << 20
	}
	c := slices.IndexFunc(SourceCategories(), func(c Category) bool { return c.File() == name })
	if l == DefaultLocale {
		return 1 + c
	}
	return 1 + (1+l)*64 + c // fewer than 64 source categories
}

func (v *Validation) reject(file, id, ptr, reason string) {
	v.Rejections = append(v.Rejections, Problem{File: file, UUID: id, Pointer: ptr, Reason: reason})
}

// check validates one value against its schema.
func (v *Validation) check(sc *openapi3.Schema, val any, file, id, ptr string) {
	err := sc.VisitJSON(val, openapi3.MultiErrors())
	if err == nil {
		return
	}
	for _, se := range flattenSchemaErrors(err) {
		p := ptr
		for _, t := range se.JSONPointer() {
			p += "/" + escapePointer(t)
		}
		v.reject(file, id, p, cmp.Or(se.Reason, se.Error()))
	}
}

// flattenSchemaErrors reaches the leaf errors of kin-openapi's MultiError and
// of allOf wrappers (nullable references), so each is reported where it is.
func flattenSchemaErrors(err error) []*openapi3.SchemaError {
	var out []*openapi3.SchemaError
	var walk func(error)
	walk = func(err error) {
		if me, ok := err.(openapi3.MultiError); ok && me != nil {
			for _, e := range me {
				walk(e)
			}
			return
		}
		var se *openapi3.SchemaError
		if !errors.As(err, &se) {
			out = append(out, &openapi3.SchemaError{Reason: err.Error()})
			return
		}
		for o := se.Origin; o != nil; o = errors.Unwrap(o) {
			if m, ok := o.(openapi3.MultiError); ok {
				walk(m)
				return
			}
		}
		out = append(out, se)
	}
	walk(err)
	return out
}

// checkIdentities rejects missing, malformed and duplicate uuids in a source
// category and the categories flattened from it.
func (v *Validation) checkIdentities(c Category, file string, items []any) {
	seen := map[Category]map[UUID]string{}
	add := func(cat Category, it any, ptr string) {
		m, ok := it.(map[string]any)
		if !ok {
			return
		}
		raw, present := m["uuid"]
		id, isString := raw.(string)
		switch {
		case !present:
			if cat != c { // the schema check already reports a top-level missing uuid
				v.reject(file, "", ptr, "missing uuid")
			}
			return
		case !isString:
			return // the schema check reports the type
		}
		u, ok := ParseUUID(id)
		if !ok {
			v.reject(file, id, ptr+"/uuid", fmt.Sprintf("uuid %q is not 8-4-4-4-12 hexadecimal digits", id))
			return
		}
		if seen[cat] == nil {
			seen[cat] = map[UUID]string{}
		}
		if first, dup := seen[cat][u]; dup {
			v.reject(file, id, ptr+"/uuid", fmt.Sprintf("duplicate %s uuid (first at %s)", cat.Noun(), first))
			return
		}
		seen[cat][u] = ptr
	}
	var visit func(cat Category, it any, ptr string)
	visit = func(cat Category, it any, ptr string) {
		add(cat, it, ptr)
		m, _ := it.(map[string]any)
		for _, n := range nested[cat] {
			for j, e := range arrayField(m, n.field) {
				visit(n.c, e, ptr+"/"+n.field+"/"+strconv.Itoa(j))
			}
		}
	}
	for i, it := range items {
		visit(c, it, "/"+strconv.Itoa(i))
	}
}

// checkOverlay checks a translation file: partial items with a uuid of an
// en-US item, valid once merged, and it returns the bytes of their unknown
// fields (bounded as en-US's are).
func (v *Validation) checkOverlay(c Category, file string, base, over []any) (unknownBytes int) {
	byID := ItemsByUUID(base)
	sc, err := componentSchema(c.Schema())
	if err != nil {
		v.reject(file, "", "", err.Error())
		return 0
	}
	for i, it := range over {
		ptr := "/" + strconv.Itoa(i)
		m, ok := it.(map[string]any)
		if !ok {
			v.reject(file, "", ptr, fmt.Sprintf("partial item is %s, want an object", jsonKind(it)))
			continue
		}
		id, _ := m["uuid"].(string)
		_, size, why := unknownFields(sc, m)
		if why != "" {
			v.reject(file, id, ptr, why)
		}
		unknownBytes += size
		b, ok := byID[id]
		if !ok {
			v.reject(file, id, ptr+"/uuid", "translation names no en-US item of this version")
			continue
		}
		// Copies: Translate shares what the overlay leaves alone, and
		// normalizeItems converts in place.
		merged := Translate([]any{deepCopy(b)}, []any{deepCopy(m)})
		if err := normalizeItems(c, merged, map[Fill]int{}, false); err != nil {
			v.reject(file, id, ptr, err.Error())
			continue
		}
		v.check(sc, merged[0], file, id, ptr)
	}
	return unknownBytes
}

// ItemsByUUID indexes the items that are objects with a string uuid.
func ItemsByUUID(items []any) map[string]map[string]any {
	byID := map[string]map[string]any{}
	for _, it := range items {
		if m, ok := it.(map[string]any); ok {
			if id, ok := m["uuid"].(string); ok {
				byID[id] = m
			}
		}
	}
	return byID
}

func arrayField(m map[string]any, k string) []any {
	a, _ := m[k].([]any)
	return a
}

// escapePointer escapes a key for a JSON pointer (RFC 6901).
var escapePointer = strings.NewReplacer("~", "~0", "/", "~1").Replace

func jsonKind(v any) string {
	switch v.(type) {
	case nil:
		return "null"
	case bool:
		return "a boolean"
	case float64:
		return "a number"
	case string:
		return "a string"
	case []any:
		return "an array"
	case map[string]any:
		return "an object"
	}
	return fmt.Sprintf("%T", v)
}
