package catalog

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"path"
	"runtime"

	"golang.org/x/sync/errgroup"

	"github.com/refdata/refdata/envelope"
)

// Snapshot is one game version as read, before normalization: decoded JSON
// values exactly as the files hold them.
type Snapshot struct {
	Version  map[string]any                          // the version record
	Sources  map[Category][]any                      // en-US items of each file present
	Overlays map[string]map[Category][]any           // locale → category → partial items
	Locres   map[string]map[string]map[string]string // locale → namespace → key → text

	// files, for a snapshot LoadLazy read, are its catalogs' files, decoded
	// each time one is needed (Sources and Overlays stay empty).
	files map[string][]byte
}

// FileError names the snapshot file a problem was found in.
type FileError struct {
	File string
	Err  error
}

func (e *FileError) Error() string { return e.File + ": " + e.Err.Error() }
func (e *FileError) Unwrap() error { return e.Err }

// LoadSnapshot reads a snapshot in the layout of fixtures/README.md from dir
// in fsys. A missing catalog file leaves its category out of Sources; a broken
// file is an error naming it.
func LoadSnapshot(fsys fs.FS, dir string) (*Snapshot, error) {
	return loadSnapshot(dir, func(name string) ([]byte, error) { return fs.ReadFile(fsys, name) })
}

// LoadFiles reads a snapshot held in memory (slash paths of the snapshot
// layout) as LoadSnapshot reads a directory.
func LoadFiles(files map[string][]byte) (*Snapshot, error) {
	return loadSnapshot(".", func(name string) ([]byte, error) {
		if b, ok := files[name]; ok {
			return b, nil
		}
		return nil, &fs.PathError{Op: "read", Path: name, Err: fs.ErrNotExist}
	})
}

// LoadLazy is LoadFiles decoding only the version record and the string
// tables: a catalog's files are decoded each time Validate or RenderEach
// needs them, a category and a locale at a time, and not kept, so a
// snapshot is never held decoded whole (JSON decoded into Go values is some
// three times its bytes). files must not change while the snapshot is used,
// but RenderEach deletes from it each catalog's files as it decodes them
// for the last time; a broken catalog file is Validate's or RenderEach's
// error.
func LoadLazy(files map[string][]byte) (*Snapshot, error) {
	s, err := loadSnapshot(".", func(name string) ([]byte, error) {
		if b, ok := files[name]; ok && (name == "version.json" || path.Dir(name) == "locres") {
			return b, nil
		}
		return nil, &fs.PathError{Op: "read", Path: name, Err: fs.ErrNotExist}
	})
	if err != nil {
		return nil, err
	}
	s.files = files
	return s, nil
}

// source is category c's en-US items and whether the snapshot has them;
// decoded anew from a lazy snapshot's file, and repaired (Repair).
func (s *Snapshot) source(c Category) ([]any, bool, error) {
	items, ok, err := s.sourceAsRead(c)
	if s.files != nil && ok && err == nil {
		repairItems(c, items, func(Problem) {})
	}
	return items, ok, err
}

// sourceAsRead is source without a lazy snapshot's repairs: what Repair
// reports them on.
func (s *Snapshot) sourceAsRead(c Category) ([]any, bool, error) {
	if s.files == nil {
		items, ok := s.Sources[c]
		return items, ok, nil
	}
	name := path.Join(Locales[DefaultLocale], c.File())
	if _, ok := s.files[name]; !ok {
		return nil, false, nil
	}
	items, err := readItems(s.read, name)
	return items, true, err
}

// hasOverlay says whether the snapshot has category c's file in locale lang.
func (s *Snapshot) hasOverlay(lang string, c Category) bool {
	if s.files == nil {
		_, ok := s.Overlays[lang][c]
		return ok
	}
	_, ok := s.files[path.Join(lang, c.File())]
	return ok
}

// overlay is category c's items in locale lang; decoded anew from a lazy
// snapshot's file.
func (s *Snapshot) overlay(lang string, c Category) ([]any, error) {
	if s.files == nil {
		return s.Overlays[lang][c], nil
	}
	return readItems(s.read, path.Join(lang, c.File()))
}

// size is a measure of category c's en-US items: the nodes decoded, or a
// lazy snapshot's file's bytes.
func (s *Snapshot) size(c Category) int {
	if s.files == nil {
		return nodes(s.Sources[c])
	}
	return len(s.files[path.Join(Locales[DefaultLocale], c.File())])
}

func (s *Snapshot) read(name string) ([]byte, error) {
	if b, ok := s.files[name]; ok {
		return b, nil
	}
	return nil, &FileError{name, fs.ErrNotExist}
}

// loadSnapshot reads the snapshot under dir with readFS, which reads a whole file.
func loadSnapshot(dir string, readFS func(name string) ([]byte, error)) (*Snapshot, error) {
	read := func(name string) ([]byte, error) {
		b, err := readFS(name)
		if err != nil && !errors.Is(err, fs.ErrNotExist) {
			err = &FileError{name, err}
		}
		return b, err
	}
	s := &Snapshot{
		Sources:  map[Category][]any{},
		Overlays: map[string]map[Category][]any{},
		Locres:   map[string]map[string]map[string]string{},
	}
	var version any
	if err := readEnveloped(read, path.Join(dir, "version.json"), &version); err != nil {
		return nil, err
	}
	vm, ok := version.(map[string]any)
	if !ok {
		return nil, &FileError{path.Join(dir, "version.json"), errors.New("data is not an object")}
	}
	s.Version = vm
	// The files decode in parallel; the first error in file order is reported.
	type file struct {
		loc   string
		c     Category
		items []any
		table map[string]map[string]string
		err   error
	}
	en := Locales[DefaultLocale]
	var files []*file
	for _, c := range SourceCategories() {
		files = append(files, &file{loc: en, c: c})
	}
	for _, loc := range Locales {
		for _, c := range SourceCategories() {
			if loc != en {
				files = append(files, &file{loc: loc, c: c})
			}
		}
		files = append(files, &file{loc: loc, c: -1})
	}
	var g errgroup.Group
	g.SetLimit(runtime.GOMAXPROCS(0))
	for _, f := range files {
		g.Go(func() error {
			if f.c >= 0 {
				f.items, f.err = readItems(read, path.Join(dir, f.loc, f.c.File()))
				return nil
			}
			name := path.Join(dir, "locres", f.loc+".json")
			var b []byte
			if b, f.err = read(name); f.err == nil {
				if err := json.Unmarshal(b, &f.table); err != nil {
					f.err = &FileError{name, fmt.Errorf("not a string table: %w", err)}
				}
			}
			return nil
		})
	}
	_ = g.Wait()
	for _, f := range files {
		switch {
		case errors.Is(f.err, fs.ErrNotExist):
		case f.err != nil:
			return nil, f.err
		case f.c < 0:
			s.Locres[f.loc] = f.table
		case f.loc == en:
			s.Sources[f.c] = f.items
		default:
			if s.Overlays[f.loc] == nil {
				s.Overlays[f.loc] = map[Category][]any{}
			}
			s.Overlays[f.loc][f.c] = f.items
		}
	}
	return s, nil
}

func readItems(read func(string) ([]byte, error), name string) ([]any, error) {
	var v any
	if err := readEnveloped(read, name, &v); err != nil {
		return nil, err
	}
	items, ok := v.([]any)
	if !ok {
		return nil, &FileError{name, errors.New("data is not an array")}
	}
	return items, nil
}

// readEnveloped decodes a file holding an API body or the bare data.
func readEnveloped(read func(string) ([]byte, error), name string, into *any) error {
	b, err := read(name)
	if err != nil {
		return err
	}
	v, err := envelope.Decode(b)
	if err != nil {
		return &FileError{name, err}
	}
	*into = v
	return nil
}
