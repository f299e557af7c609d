package catalog

import (
	"bytes"
	"compress/gzip"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"path"
	"runtime"
	"sync"

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
	// each time one is needed (Sources and Overlays stay empty); gzipped once
	// Packed, when sizes has each one's length.
	files map[string][]byte
	sizes map[string]int
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
// for the last time, and Pack moves them all out; a broken catalog file is
// Validate's or RenderEach's error.
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

// source is category c's en-US items, repaired, and whether the snapshot
// has them; decoded anew from a lazy snapshot's file.
func (s *Snapshot) source(c Category) ([]any, bool, error) {
	if s.files == nil {
		items, ok := s.Sources[c]
		return items, ok, nil
	}
	name := path.Join(Locales[DefaultLocale], c.File())
	if _, ok := s.files[name]; !ok {
		return nil, false, nil
	}
	items, err := readItems(s.read, name)
	if err != nil {
		return nil, true, err
	}
	repairItems(c, items, func(Problem) {})
	return items, true, nil
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
	name := path.Join(Locales[DefaultLocale], c.File())
	if s.sizes != nil {
		return s.sizes[name]
	}
	return len(s.files[name])
}

func (s *Snapshot) read(name string) ([]byte, error) {
	if b, ok := s.files[name]; ok {
		return s.unpack(name, b)
	}
	return nil, &FileError{name, fs.ErrNotExist}
}

// Pack keeps a lazy snapshot's files gzipped (at the fastest level) until
// each is decoded, moving them out of the map LoadLazy was given: what a
// version holds while it renders is then a fifth of its JSON, for about a
// second of CPU per 100 MB (compressing on every core, and inflating each
// file as it is decoded). Validate first: an import packs once a snapshot is
// accepted and its files stored.
func (s *Snapshot) Pack() {
	if s.files == nil || s.sizes != nil {
		return
	}
	names := make([]string, 0, len(s.files))
	for name := range s.files {
		names = append(names, name)
	}
	packed := make([][]byte, len(names))
	var g errgroup.Group
	g.SetLimit(runtime.GOMAXPROCS(0))
	for i, name := range names {
		b := s.files[name]
		g.Go(func() error {
			packed[i] = gzipFile(b)
			return nil
		})
	}
	_ = g.Wait() // gzipFile cannot fail
	files, sizes := make(map[string][]byte, len(names)), make(map[string]int, len(names))
	for i, name := range names {
		files[name], sizes[name] = packed[i], len(s.files[name])
		delete(s.files, name)
	}
	s.files, s.sizes = files, sizes
}

// unpack is file name's bytes b as the snapshot holds them, inflated when
// packed.
func (s *Snapshot) unpack(name string, b []byte) ([]byte, error) {
	if s.sizes == nil || b == nil {
		return b, nil
	}
	zr, err := gzip.NewReader(bytes.NewReader(b))
	if err != nil {
		return nil, &FileError{name, err}
	}
	out := bytes.NewBuffer(make([]byte, 0, s.sizes[name]))
	if _, err := out.ReadFrom(zr); err != nil {
		return nil, &FileError{name, err}
	}
	return out.Bytes(), nil
}

// gzipFile is b gzipped at the fastest level.
func gzipFile(b []byte) []byte {
	var buf bytes.Buffer
	zw := packWriters.Get().(*gzip.Writer)
	zw.Reset(&buf)
	_, _ = zw.Write(b)
	_ = zw.Close()
	packWriters.Put(zw)
	return buf.Bytes()
}

// packWriters are gzipFile's writers: a new one costs more than a small file.
var packWriters = sync.Pool{New: func() any {
	zw, _ := gzip.NewWriterLevel(nil, gzip.BestSpeed)
	return zw
}}

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
