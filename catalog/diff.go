package catalog

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"reflect"
	"slices"
	"strings"
	"time"

	"github.com/refdata/refdata/gen"
)

// Items is a rendered version as a diff reads it: a Rendered or an edition.
type Items interface {
	// ID is the version's manifest ID.
	ID() string
	// UUIDs lists a category's items in source order.
	UUIDs(c Category) []UUID
	// ItemJSON returns an item's body in locale loc (nil: no such item), and
	// whether it is en-US's, shared by a locale without text of its own; an
	// error when its stored bytes cannot be read.
	ItemJSON(c Category, u UUID, loc int) (body []byte, english bool, err error)
	// ItemSum is ItemJSON's sha256 where known without reading it (zero
	// where not), so items with equal sums need not be read.
	ItemSum(c Category, u UUID, loc int) (sum Sum, english bool)
}

// Diff compares two editions item by item (contract 2.24): an item has changed
// when the rendered JSON of a top-level field differs in any locale. Every
// category is present, empty ones included.
func Diff(from, to Items, generatedAt time.Time) (gen.Diff, error) {
	d := gen.Diff{
		FromVersion: from.ID(),
		ToVersion:   to.ID(),
		GeneratedAt: generatedAt.UTC().Format(time.RFC3339),
	}
	cats := categoryFields(&d.Categories)
	for _, c := range Categories() {
		cd, err := diffCategory(from, to, c)
		if err != nil {
			return gen.Diff{}, fmt.Errorf("diff %s: %w", c.Name(), err)
		}
		*cats[c] = cd
		d.Summary.TotalAdded += len(cd.Added)
		d.Summary.TotalRemoved += len(cd.Removed)
		d.Summary.TotalChanged += len(cd.Changed)
	}
	return d, nil
}

// DiffBody renders a diff as the body of /v1/diff/….
func DiffBody(d gen.Diff) ([]byte, error) {
	b, err := Encode(gen.DiffBody{Status: 200, Data: d})
	if err != nil {
		return nil, fmt.Errorf("render diff: %w", err)
	}
	return b, nil
}

// categoryFields maps each category to its field of gen.DiffCategories by
// JSON name, so a category missing from either cannot go unnoticed.
func categoryFields(dc *gen.DiffCategories) [NumCategories]*gen.CategoryDiff {
	var out [NumCategories]*gen.CategoryDiff
	rv := reflect.ValueOf(dc).Elem()
	rt := rv.Type()
	byName := map[string]*gen.CategoryDiff{}
	for i := range rt.NumField() {
		byName[rt.Field(i).Tag.Get("json")] = rv.Field(i).Addr().Interface().(*gen.CategoryDiff)
	}
	for _, c := range Categories() {
		p := byName[c.Name()]
		if p == nil {
			panic("gen.DiffCategories has no field for " + c.Name())
		}
		out[c] = p
	}
	return out
}

func diffCategory(from, to Items, c Category) (gen.CategoryDiff, error) {
	cd := gen.CategoryDiff{Added: []string{}, Removed: []string{}, Changed: []gen.ChangedItem{}}
	old := map[UUID]bool{}
	for _, u := range from.UUIDs(c) {
		old[u] = true
	}
	for _, u := range to.UUIDs(c) {
		if !old[u] {
			cd.Added = append(cd.Added, u.String())
			continue
		}
		fields, err := changedFields(from, to, c, u)
		if err != nil {
			return cd, fmt.Errorf("uuid %s: %w", u, err)
		}
		if len(fields) > 0 {
			cd.Changed = append(cd.Changed, gen.ChangedItem{Uuid: u.String(), Fields: fields})
		}
		delete(old, u)
	}
	for u := range old {
		cd.Removed = append(cd.Removed, u.String())
	}
	slices.Sort(cd.Added)
	slices.Sort(cd.Removed)
	slices.SortFunc(cd.Changed, func(a, b gen.ChangedItem) int { return strings.Compare(a.Uuid, b.Uuid) })
	return cd, nil
}

// changedFields returns the sorted top-level fields of one item whose rendered
// JSON differs in any locale (one that is en-US's on both sides is skipped).
func changedFields(from, to Items, c Category, u UUID) ([]string, error) {
	set := map[string]bool{}
	var zero Sum
	for loc := range Locales {
		sa, aEnglish := from.ItemSum(c, u, loc)
		sb, bEnglish := to.ItemSum(c, u, loc)
		if aEnglish && bEnglish || sa != zero && sa == sb {
			continue
		}
		a, _, err := from.ItemJSON(c, u, loc)
		if err != nil {
			return nil, err
		}
		b, _, err := to.ItemJSON(c, u, loc)
		if err != nil {
			return nil, err
		}
		if bytes.Equal(a, b) {
			continue
		}
		fa, err := itemFields(a)
		if err != nil {
			return nil, err
		}
		fb, err := itemFields(b)
		if err != nil {
			return nil, err
		}
		for _, f := range []map[string]json.RawMessage{fa, fb} {
			for k := range f {
				if !bytes.Equal(fa[k], fb[k]) { // a present field is never empty
					set[k] = true
				}
			}
		}
	}
	return slices.Sorted(maps.Keys(set)), nil
}

// itemFields splits an item body into its top-level fields' raw JSON
// (canonical: the bodies are our own rendering).
func itemFields(body []byte) (map[string]json.RawMessage, error) {
	var env struct {
		Data map[string]json.RawMessage `json:"data"`
	}
	if err := json.Unmarshal(body, &env); err != nil {
		return nil, fmt.Errorf("split item body: %w", err)
	}
	return env.Data, nil
}
