package pipeline

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"path"
	"reflect"
	"sort"
	"strings"

	"github.com/refdata/refdata/catalog"
)

// Layout names the two directory shapes an import accepts.
type Layout string

const (
	// SnapshotLayout is fixtures/README.md's: version.json, en-US/, <locale>/, locres/.
	SnapshotLayout Layout = "snapshot"
	// CaptureLayout is one en-US {status,data} file per upstream endpoint at the top
	// level (../shared/data/upstream-en-US/NN_*): weapons.json, skins.json, …
	CaptureLayout Layout = "capture"
)

// detectLayout: an en-US/ directory means a snapshot; a top-level weapons.json
// (or any catalog file) a capture.
func detectLayout(fsys fs.FS) (Layout, error) {
	if st, err := fs.Stat(fsys, "en-US"); err == nil && st.IsDir() {
		return SnapshotLayout, nil
	}
	for _, c := range catalog.SourceCategories() {
		if _, err := fs.Stat(fsys, c.File()); err == nil {
			return CaptureLayout, nil
		}
	}
	if _, err := fs.Stat(fsys, "version.json"); err != nil {
		return "", errors.New("neither a snapshot (no en-US/) nor a capture (no weapons.json or other catalog file), and no version.json")
	}
	return SnapshotLayout, nil // a snapshot of only a version record: every catalog carried over
}

// snapshotNames is every path the snapshot layout names.
func snapshotNames() map[string]bool {
	known := map[string]bool{"version.json": true}
	for _, loc := range catalog.Locales {
		for _, c := range catalog.SourceCategories() {
			known[path.Join(loc, c.File())] = true
		}
		known[path.Join("locres", loc+".json")] = true
	}
	return known
}

// readSnapshotFiles collects the files of a snapshot-layout directory that the
// format names; anything else is listed in ignored.
func readSnapshotFiles(sf *snapshotFiles) (files map[string][]byte, ignored []string, err error) {
	known := snapshotNames()
	files = map[string][]byte{}
	err = fs.WalkDir(sf.FS(), ".", func(name string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if name != "." && strings.HasPrefix(d.Name(), ".") {
				return fs.SkipDir
			}
			return nil
		}
		if !known[name] {
			if name != readyFile && !strings.HasPrefix(d.Name(), ".") {
				ignored = append(ignored, name)
			}
			return nil
		}
		b, err := sf.ReadFile(name)
		if err != nil {
			return err
		}
		files[name] = b
		return nil
	})
	return files, ignored, err
}

// captureFiles maps a capture directory onto the snapshot layout. Catalog files
// named like a snapshot's become en-US/<file>; skins.json, skinchromas.json and
// skinlevels.json are the dedicated endpoints of the skins nested in weapons.json.
//
// Rule when they disagree: the standalone skins.json is authoritative for skins
// (with their chromas and levels) — it is the dedicated endpoint, and in the one
// disagreement seen (09_: 43 skins) it is the more complete side (it has the
// streamedVideo URLs the nested copies lack). Each skin nested in a weapon is
// replaced by the skins.json entry with its uuid; the disagreement is reported
// (count and uuids). skinchromas.json and skinlevels.json are only compared.
func captureFiles(sf *snapshotFiles, r *Report) (map[string][]byte, []catalog.Problem, error) {
	files := map[string][]byte{}
	var rejections []catalog.Problem
	entries, err := fs.ReadDir(sf.FS(), ".")
	if err != nil {
		return nil, nil, err
	}
	bySource := map[string]bool{}
	for _, c := range catalog.SourceCategories() {
		bySource[c.File()] = true
	}
	derived := map[string]bool{"skins.json": true, "skinchromas.json": true, "skinlevels.json": true}
	for _, e := range entries {
		name := e.Name()
		switch {
		case e.IsDir() || name == readyFile || strings.HasPrefix(name, "."):
		case name == "version.json":
			b, err := sf.ReadFile(name)
			if err != nil {
				return nil, nil, err
			}
			files[name] = b
		case bySource[name]:
			b, err := sf.ReadFile(name)
			if err != nil {
				return nil, nil, err
			}
			files["en-US/"+name] = b
		case derived[name]:
		default:
			r.Ignored = append(r.Ignored, name)
		}
	}
	wb, ok := files["en-US/weapons.json"]
	if !ok {
		return files, nil, nil
	}
	skinsRaw, err := sf.ReadFile("skins.json")
	if errors.Is(err, fs.ErrNotExist) {
		return files, nil, nil // nested skins as they are
	}
	if err != nil {
		return nil, nil, err
	}
	weapons, p := decodeItems("weapons.json", wb)
	if p != nil {
		return files, []catalog.Problem{*p}, nil
	}
	skins, p := decodeItems("skins.json", skinsRaw)
	if p != nil {
		return files, []catalog.Problem{*p}, nil
	}
	standalone, differ, orphans := replaceNestedSkins(weapons, skins)
	if len(differ) > 0 {
		r.note("weapons.json and skins.json disagree on %d skins; skins.json is authoritative and replaced the nested copies: %s", len(differ), capList(differ))
	}
	if len(orphans) > 0 {
		r.note("skins.json has %d skins no weapon lists; they cannot be placed and were left out: %s", len(orphans), capList(orphans))
	}
	for _, f := range []struct{ file, field string }{{"skinchromas.json", "chromas"}, {"skinlevels.json", "levels"}} {
		raw, err := sf.ReadFile(f.file)
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return nil, nil, err
		}
		items, p := decodeItems(f.file, raw)
		if p != nil {
			rejections = append(rejections, *p)
			continue
		}
		want := map[string]any{}
		for _, s := range standalone {
			elems, _ := s.(map[string]any)[f.field].([]any)
			for _, e := range elems {
				if m, ok := e.(map[string]any); ok {
					want[fmt.Sprint(m["uuid"])] = m
				}
			}
		}
		var off []string
		for _, it := range items {
			m, _ := it.(map[string]any)
			id := fmt.Sprint(m["uuid"])
			if !reflect.DeepEqual(want[id], m) {
				off = append(off, id)
			}
		}
		if len(off) > 0 {
			sort.Strings(off)
			r.note("%s disagrees with the %s of skins.json on %d entries (skins.json wins): %s", f.file, f.field, len(off), capList(off))
		}
	}
	b, err := encodeEnvelope(weapons)
	if err != nil {
		return nil, nil, err
	}
	files["en-US/weapons.json"] = b
	return files, rejections, nil
}

// replaceNestedSkins applies the rule above: each skin nested in a weapon is
// replaced by the standalone entry with its uuid. It returns the standalone
// skins by uuid, the uuids whose copies differed and those no weapon lists.
func replaceNestedSkins(weapons, skins []any) (standalone map[string]any, differ, orphans []string) {
	standalone = map[string]any{}
	for _, s := range skins {
		if m, ok := s.(map[string]any); ok {
			if id, ok := m["uuid"].(string); ok {
				standalone[id] = m
			}
		}
	}
	attached := map[string]bool{}
	for _, w := range weapons {
		wm, _ := w.(map[string]any)
		nested, _ := wm["skins"].([]any)
		for j, s := range nested {
			sm, _ := s.(map[string]any)
			id, _ := sm["uuid"].(string)
			alone, ok := standalone[id]
			if !ok {
				continue
			}
			attached[id] = true
			if !reflect.DeepEqual(sm, alone) {
				differ = append(differ, id)
			}
			nested[j] = alone
		}
	}
	for id := range standalone {
		if !attached[id] {
			orphans = append(orphans, id)
		}
	}
	sort.Strings(differ)
	sort.Strings(orphans)
	return standalone, differ, orphans
}

// WeaponsWithSkins applies the capture rule to the answers of /v1/weapons and
// /v1/weapons/skins (en-US, as sent): the weapons file exactly as importing a
// capture of the two writes it, and what the rule found.
func WeaponsWithSkins(weaponsBody, skinsBody []byte) ([]byte, []string, error) {
	weapons, p := decodeItems("weapons.json", weaponsBody)
	if p != nil {
		return nil, nil, fmt.Errorf("weapons: %s", p.Reason)
	}
	skins, p := decodeItems("skins.json", skinsBody)
	if p != nil {
		return nil, nil, fmt.Errorf("weapons/skins: %s", p.Reason)
	}
	_, differ, orphans := replaceNestedSkins(weapons, skins)
	var notes []string
	if len(differ) > 0 {
		notes = append(notes, fmt.Sprintf("/v1/weapons and /v1/weapons/skins disagree on %d skins; the latter is authoritative: %s", len(differ), capList(differ)))
	}
	if len(orphans) > 0 {
		notes = append(notes, fmt.Sprintf("/v1/weapons/skins has %d skins no weapon lists; left out: %s", len(orphans), capList(orphans)))
	}
	b, err := encodeEnvelope(weapons)
	return b, notes, err
}

// decodeItems decodes an enveloped or bare array file, as a Problem when it is not.
func decodeItems(file string, b []byte) ([]any, *catalog.Problem) {
	dec := json.NewDecoder(bytes.NewReader(b))
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, &catalog.Problem{File: file, Reason: jsonReason(err)}
	}
	if m, ok := v.(map[string]any); ok {
		if st, has := m["status"]; has {
			if st != float64(200) {
				return nil, &catalog.Problem{File: file, Pointer: "/status", Reason: fmt.Sprintf("wrong envelope: status is %v, want 200", st)}
			}
			v = m["data"]
		}
	}
	items, ok := v.([]any)
	if !ok {
		return nil, &catalog.Problem{File: file, Reason: "wrong envelope: data is not an array"}
	}
	return items, nil
}

func jsonReason(err error) string {
	if errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF) {
		return "truncated file: JSON ends early"
	}
	return "malformed JSON: " + err.Error()
}

func encodeEnvelope(data any) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(map[string]any{"status": 200, "data": data}); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

func capList(ids []string) string {
	const max = 10
	if len(ids) <= max {
		return strings.Join(ids, ", ")
	}
	return strings.Join(ids[:max], ", ") + fmt.Sprintf(", … (%d more)", len(ids)-max)
}
