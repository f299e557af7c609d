package pipeline

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"path"
	"reflect"
	"slices"
	"strings"

	"github.com/refdata/refdata/catalog"
	"github.com/refdata/refdata/envelope"
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

// detectLayout: an en-US/ directory means a snapshot; a top-level catalog file
// a capture.
func detectLayout(fsys fs.FS) (Layout, error) {
	if st, err := fs.Stat(fsys, "en-US"); err == nil && st.IsDir() {
		// A capture with per-locale folders has the dedicated skins endpoint; a
		// snapshot never does.
		if _, err := fs.Stat(fsys, "en-US/skins.json"); err == nil {
			return CaptureLayout, nil
		}
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

// captureFiles maps a capture directory onto the snapshot layout
// (docs/pipeline.md § Layouts): catalog files become en-US/<file>; skins.json,
// the dedicated endpoint, is authoritative over the skins nested in
// weapons.json (the more complete side where they were seen to differ), and
// skinchromas.json and skinlevels.json are only compared.
func captureFiles(sf *snapshotFiles, r *Report) (map[string][]byte, []catalog.Problem, error) {
	files := map[string][]byte{}
	entries, err := fs.ReadDir(sf.FS(), ".")
	if err != nil {
		return nil, nil, err
	}
	var localeDirs []string
	for _, e := range entries {
		name := e.Name()
		switch {
		case name == readyFile || strings.HasPrefix(name, "."):
		case e.IsDir():
			if loc, ok := catalog.ParseLocale(name); ok && name == catalog.Locales[loc] {
				localeDirs = append(localeDirs, name)
			} else {
				r.Ignored = append(r.Ignored, name+"/")
			}
		case name == "version.json" || bySourceFile[name]:
			key := name
			if bySourceFile[name] {
				key = "en-US/" + name
			}
			if files[key], err = sf.ReadFile(name); err != nil {
				return nil, nil, err
			}
		case derivedFile[name]:
		default:
			r.Ignored = append(r.Ignored, name)
		}
	}
	// A capture whose en-US payloads sit in an en-US/ folder beside the others.
	// Its skins endpoints are read from there too, unless a top-level copy wins
	// (as a top-level catalog file wins over the folder's).
	skinsDir := ""
	if slices.Contains(localeDirs, "en-US") {
		got, err := readCatalogDir(sf, "en-US", r, func(file string) bool { return files["en-US/"+file] == nil })
		for file, b := range got {
			files["en-US/"+file] = b
		}
		if err != nil {
			return nil, nil, err
		}
		if _, err := fs.Stat(sf.FS(), "skins.json"); errors.Is(err, fs.ErrNotExist) {
			skinsDir = "en-US"
		}
	}
	rejections, err := mergeCaptureSkins(sf, skinsDir, files, "en-US/weapons.json", r)
	if err != nil {
		return nil, nil, err
	}
	if ps, err := splitAllCaptures(files, r); err != nil || len(ps) > 0 {
		return files, append(rejections, ps...), err
	}
	for _, loc := range localeDirs {
		if loc == "en-US" {
			continue
		}
		ps, err := localizedCapture(sf, loc, files, r)
		if err != nil {
			return nil, nil, err
		}
		rejections = append(rejections, ps...)
	}
	return files, rejections, nil
}

var (
	bySourceFile = func() map[string]bool {
		m := map[string]bool{}
		for _, c := range catalog.SourceCategories() {
			m[c.File()] = true
		}
		return m
	}()
	derivedFile = map[string]bool{"skins.json": true, "skinchromas.json": true, "skinlevels.json": true}
)

// readCatalogDir reads the catalog files of dir that want takes, by file name;
// anything else but the skins endpoints is named as ignored (so is a file want
// refuses: in en-US/, one a top-level file of the same name wins over).
func readCatalogDir(sf *snapshotFiles, dir string, r *Report, want func(file string) bool) (map[string][]byte, error) {
	entries, err := fs.ReadDir(sf.FS(), dir)
	if err != nil {
		return nil, err
	}
	got := map[string][]byte{}
	for _, e := range entries {
		name := path.Join(dir, e.Name())
		switch {
		case strings.HasPrefix(e.Name(), "."):
		case !e.IsDir() && bySourceFile[e.Name()] && want(e.Name()):
			if got[e.Name()], err = sf.ReadFile(name); err != nil {
				return nil, err
			}
		case !e.IsDir() && derivedFile[e.Name()]:
		default:
			r.Ignored = append(r.Ignored, name)
		}
	}
	return got, nil
}

// localizedCapture imports <loc>/<catalog>.json, the public API's full payload
// in one locale, as that locale's translation: the skins rule applies as for
// en-US, then each file is reduced to its localized text (catalog.TextOnly).
func localizedCapture(sf *snapshotFiles, loc string, files map[string][]byte, r *Report) ([]catalog.Problem, error) {
	got, err := readCatalogDir(sf, loc, r, func(string) bool { return true })
	if err != nil {
		return nil, err
	}
	full := map[string][]byte{}
	for file, b := range got {
		full[path.Join(loc, file)] = b
	}
	ps, err := mergeCaptureSkins(sf, loc, full, path.Join(loc, "weapons.json"), r)
	if err != nil || len(ps) > 0 {
		return ps, err
	}
	var names []string
	for _, c := range catalog.SourceCategories() {
		name := path.Join(loc, c.File())
		b, ok := full[name]
		if !ok {
			continue
		}
		items, p := decodeItems(name, b)
		if p != nil {
			ps = append(ps, *p)
			continue
		}
		text, err := catalog.TextOnly(c, items)
		if err != nil {
			return nil, err
		}
		if files[name], err = json.Marshal(text); err != nil {
			return nil, err
		}
		names = append(names, c.File())
	}
	if len(names) > 0 {
		r.note("%s/: %s imported as %s translations (their localized text)", loc, strings.Join(names, ", "), loc)
	}
	return ps, nil
}

// splitAllCaptures turns en-US files captured with language=all (localized text
// as objects keyed by locale) into the en-US file and one translation per locale.
func splitAllCaptures(files map[string][]byte, r *Report) ([]catalog.Problem, error) {
	var ps []catalog.Problem
	var split []string
	for _, c := range catalog.SourceCategories() {
		name := "en-US/" + c.File()
		b, ok := files[name]
		if !ok {
			continue
		}
		items, p := decodeItems(c.File(), b)
		if p != nil {
			ps = append(ps, *p)
			continue
		}
		en, overlays, ok, err := catalog.SplitAll(c, items)
		if err != nil {
			return nil, err
		}
		if !ok {
			continue
		}
		if files[name], err = envelope.Marshal(en); err != nil {
			return nil, err
		}
		for loc, over := range overlays {
			key := path.Join(loc, c.File())
			if _, exists := files[key]; exists {
				continue
			}
			if files[key], err = json.Marshal(over); err != nil {
				return nil, err
			}
		}
		split = append(split, c.File())
	}
	if len(split) > 0 {
		r.note("language=all capture: %s imported as en-US plus a translation in each of the other %d locales", strings.Join(split, ", "), catalog.NumLocales-1)
	}
	return ps, nil
}

// mergeCaptureSkins applies the skins rule (captureFiles) to files[key], with
// the skins endpoints' files in dir ("" for the top level).
func mergeCaptureSkins(sf *snapshotFiles, dir string, files map[string][]byte, key string, r *Report) ([]catalog.Problem, error) {
	var rejections []catalog.Problem
	where := ""
	if dir != "" {
		where = dir + "/"
	}
	wb, ok := files[key]
	if !ok {
		return nil, nil
	}
	skinsRaw, err := sf.ReadFile(path.Join(dir, "skins.json"))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil // nested skins as they are
	}
	if err != nil {
		return nil, err
	}
	weapons, p := decodeItems(where+"weapons.json", wb)
	if p != nil {
		return []catalog.Problem{*p}, nil
	}
	skins, p := decodeItems(where+"skins.json", skinsRaw)
	if p != nil {
		return []catalog.Problem{*p}, nil
	}
	standalone, differ, orphans := replaceNestedSkins(weapons, skins)
	if len(differ) > 0 {
		r.note("%sweapons.json and %sskins.json disagree on %s; skins.json is authoritative and replaced the nested copies: %s", where, where, count(len(differ), "skin"), capList(differ))
	}
	if len(orphans) > 0 {
		r.note("%sskins.json has %s no weapon lists; they cannot be placed and were left out: %s", where, count(len(orphans), "skin"), capList(orphans))
	}
	for _, f := range []struct{ file, field string }{{"skinchromas.json", "chromas"}, {"skinlevels.json", "levels"}} {
		raw, err := sf.ReadFile(path.Join(dir, f.file))
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return nil, err
		}
		items, p := decodeItems(where+f.file, raw)
		if p != nil {
			rejections = append(rejections, *p)
			continue
		}
		want := map[string]any{}
		for _, s := range standalone {
			elems, _ := s[f.field].([]any)
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
			slices.Sort(off)
			r.note("%s%s disagrees with the %s of skins.json on %d entries (skins.json wins): %s", where, f.file, f.field, len(off), capList(off))
		}
	}
	b, err := envelope.Marshal(weapons)
	if err != nil {
		return nil, err
	}
	files[key] = b
	return rejections, nil
}

// replaceNestedSkins replaces each skin nested in a weapon by the standalone
// entry with its uuid. It returns the standalone skins by uuid, the uuids whose
// copies differed and those no weapon lists.
func replaceNestedSkins(weapons, skins []any) (standalone map[string]map[string]any, differ, orphans []string) {
	standalone = catalog.ItemsByUUID(skins)
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
	for _, id := range slices.Sorted(maps.Keys(standalone)) {
		if !attached[id] {
			orphans = append(orphans, id)
		}
	}
	slices.Sort(differ)
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
		notes = append(notes, fmt.Sprintf("/v1/weapons and /v1/weapons/skins disagree on %s; the latter is authoritative: %s", count(len(differ), "skin"), capList(differ)))
	}
	if len(orphans) > 0 {
		notes = append(notes, fmt.Sprintf("/v1/weapons/skins has %s no weapon lists; left out: %s", count(len(orphans), "skin"), capList(orphans)))
	}
	b, err := envelope.Marshal(weapons)
	return b, notes, err
}

// decodeItems decodes an enveloped or bare array file, as a Problem when it is not.
func decodeItems(file string, b []byte) ([]any, *catalog.Problem) {
	items, err := envelope.DecodeArray(b)
	if err != nil {
		return nil, problemIn(file, err)
	}
	return items, nil
}

// problemIn locates an envelope error in file.
func problemIn(file string, err error) *catalog.Problem {
	p := &catalog.Problem{File: file, Reason: err.Error()}
	var e *envelope.Error
	if errors.As(err, &e) {
		p.Pointer = e.Pointer
	}
	return p
}

func capList(ids []string) string {
	const max = 10
	if len(ids) <= max {
		return strings.Join(ids, ", ")
	}
	return strings.Join(ids[:max], ", ") + fmt.Sprintf(", … (%d more)", len(ids)-max)
}
