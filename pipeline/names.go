package pipeline

import (
	"encoding/json"
	"fmt"
	"io/fs"
	"maps"
	"path"
	"slices"
	"strings"

	"github.com/refdata/refdata/catalog"
)

// applyNames lays the name files of names (--names, docs/pipeline.md §
// Translations) under files' translations and reports what it took; a name
// file that cannot be read is a problem.
func applyNames(names fs.FS, maxFile int64, files map[string][]byte, r *Report) []catalog.Problem {
	var ps []catalog.Problem
	taken := map[string][]string{} // catalog → locales
	applied, stray := 0, 0
	for _, c := range catalog.SourceCategories() {
		entries, err := fs.ReadDir(names, c.Name())
		if err != nil {
			continue // no name files for this catalog
		}
		en, p := decodeItems("en-US/"+c.File(), files["en-US/"+c.File()])
		if p != nil {
			continue // validation reports the en-US file
		}
		owner := itemOwners(en)
		fields, err := nameFields(c, en)
		if err != nil {
			return append(ps, catalog.Problem{File: "names/" + c.Name(), Reason: err.Error()})
		}
		for _, e := range entries {
			lang := strings.TrimSuffix(e.Name(), ".json")
			loc, ok := catalog.ParseLocale(lang)
			if e.IsDir() || !strings.HasSuffix(e.Name(), ".json") || !ok || catalog.Locales[loc] != lang || loc == catalog.DefaultLocale {
				r.Ignored = append(r.Ignored, path.Join("names", c.Name(), e.Name()))
				continue
			}
			name := path.Join(c.Name(), e.Name())
			if info, err := e.Info(); err == nil && info.Size() > maxFile {
				ps = append(ps, catalog.Problem{File: "names/" + name, Reason: fmt.Sprintf("larger than the per-file limit of %d bytes (raise it with --max-file-bytes)", maxFile)})
				continue
			}
			b, err := fs.ReadFile(names, name)
			if err != nil {
				ps = append(ps, catalog.Problem{File: "names/" + name, Reason: err.Error()})
				continue
			}
			var items []map[string]any
			if err := json.Unmarshal(b, &items); err != nil {
				ps = append(ps, catalog.Problem{File: "names/" + name, Reason: "not a JSON array of items: " + err.Error()})
				continue
			}
			text, err := catalog.TextOnly(c, anys(items))
			if err != nil {
				return append(ps, catalog.Problem{File: "names/" + name, Reason: err.Error()})
			}
			n, s, merged, err := mergeNames(files[path.Join(lang, c.File())], text, owner, fields)
			if err != nil {
				ps = append(ps, catalog.Problem{File: path.Join(lang, c.File()), Reason: err.Error()})
				continue
			}
			applied, stray = applied+n, stray+s
			if n > 0 {
				files[path.Join(lang, c.File())] = merged
				taken[c.Name()] = append(taken[c.Name()], lang)
			}
		}
	}
	for _, c := range slices.Sorted(maps.Keys(taken)) {
		r.note("names: %s in %d locales (%s) taken as translations", c, len(taken[c]), strings.Join(taken[c], ", "))
	}
	if applied+stray > 0 {
		r.note("names: %d entries applied, %d name items this version does not have", applied, stray)
	}
	return ps
}

// itemOwners maps the uuid of every item, and of every item's first nested
// level, to the item's uuid.
func itemOwners(items []any) map[string]string {
	out := map[string]string{}
	for _, it := range items {
		m, _ := it.(map[string]any)
		id, _ := m["uuid"].(string)
		if id == "" {
			continue
		}
		out[id] = id
		if levels, _ := m["levels"].([]any); len(levels) > 0 {
			if l, _ := levels[0].(map[string]any); l != nil {
				if lid, _ := l["uuid"].(string); lid != "" {
					if _, taken := out[lid]; !taken {
						out[lid] = id
					}
				}
			}
		}
	}
	return out
}

// nameFields says which top-level fields of a name entry an item takes: text
// (TextOnly has kept only text) that is not null — a null names nothing, and
// taken it would blank en-US's text — in a field the item schema names or the
// en-US item carries. A field neither has would be served in that locale alone
// (not in en-US nor language=all) and reported nowhere.
func nameFields(c catalog.Category, en []any) (func(item, field string, v any) bool, error) {
	doc, err := catalog.Spec()
	if err != nil {
		return nil, err
	}
	ref := doc.Components.Schemas[c.Schema()]
	if ref == nil || ref.Value == nil {
		return nil, fmt.Errorf("openapi.yaml has no schema %s", c.Schema())
	}
	sc := ref.Value
	if len(sc.AllOf) == 1 && sc.AllOf[0].Value != nil {
		sc = sc.AllOf[0].Value
	}
	carried := catalog.ItemsByUUID(en)
	return func(item, field string, v any) bool {
		if v == nil {
			return false
		}
		if _, named := sc.Properties[field]; named {
			return true
		}
		_, has := carried[item][field]
		return has
	}, nil
}

// mergeNames lays text (partial items of one locale) under the translation
// file existing (nil: none): the file's fields win. take says which fields of
// an entry for an item are taken (nameFields). It returns how many entries it
// applied and how many name no item of the version.
func mergeNames(existing []byte, text []any, owner map[string]string, take func(item, field string, v any) bool) (applied, stray int, merged []byte, err error) {
	var over []any
	if existing != nil {
		if over, _ = decodeItems("", existing); over == nil {
			return 0, 0, nil, fmt.Errorf("not a translation file")
		}
	}
	byID := catalog.ItemsByUUID(over)
	for _, it := range text {
		m, _ := it.(map[string]any)
		id, _ := m["uuid"].(string)
		target, ok := owner[id]
		if !ok {
			stray++
			continue
		}
		applied++
		cur := byID[target]
		if cur == nil {
			cur = map[string]any{"uuid": target}
			byID[target] = cur
			over = append(over, cur)
		}
		for k, v := range m {
			if _, has := cur[k]; !has && k != "uuid" && !(target != id && k == "levels") && take(target, k, v) {
				cur[k] = v
			}
		}
	}
	merged, err = json.Marshal(over)
	return applied, stray, merged, err
}

func anys(items []map[string]any) []any {
	out := make([]any, len(items))
	for i, it := range items {
		out[i] = it
	}
	return out
}
