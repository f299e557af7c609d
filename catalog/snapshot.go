package catalog

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"path"

	"github.com/refdata/refdata/cores"
	"github.com/refdata/refdata/envelope"
)

// Snapshot is one game version as read from disk, before normalization: decoded
// JSON values (maps, slices, float64s) exactly as the files hold them.
type Snapshot struct {
	// Version is the version record.
	Version map[string]any
	// Sources holds the en-US items of each source category whose file exists.
	Sources map[Category][]any
	// Overlays holds translations: locale → source category → partial items.
	Overlays map[string]map[Category][]any
	// Locres holds the raw string tables: locale → namespace → key → text.
	Locres map[string]map[string]map[string]string
}

// FileError names the snapshot file a problem was found in.
type FileError struct {
	File string
	Err  error
}

func (e *FileError) Error() string { return e.File + ": " + e.Err.Error() }
func (e *FileError) Unwrap() error { return e.Err }

// LoadSnapshot reads a snapshot in the layout of fixtures/README.md from dir in fsys.
// A missing catalog file leaves its category out of Sources; a file that is not
// JSON, is truncated, or has the wrong envelope is an error naming the file.
func LoadSnapshot(fsys fs.FS, dir string) (*Snapshot, error) {
	s := &Snapshot{
		Sources:  map[Category][]any{},
		Overlays: map[string]map[Category][]any{},
		Locres:   map[string]map[string]map[string]string{},
	}
	var version any
	if err := readEnveloped(fsys, path.Join(dir, "version.json"), &version); err != nil {
		return nil, err
	}
	vm, ok := version.(map[string]any)
	if !ok {
		return nil, &FileError{path.Join(dir, "version.json"), errors.New("data is not an object")}
	}
	s.Version = vm
	var p cores.Pacer // a file at a time: loading beside serving lets requests in
	for _, c := range SourceCategories() {
		p.Yield()
		items, err := readItems(fsys, path.Join(dir, "en-US", c.File()))
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return nil, err
		}
		s.Sources[c] = items
	}
	for _, loc := range Locales {
		for _, c := range SourceCategories() {
			if loc == Locales[DefaultLocale] {
				break
			}
			p.Yield()
			items, err := readItems(fsys, path.Join(dir, loc, c.File()))
			if errors.Is(err, fs.ErrNotExist) {
				continue
			}
			if err != nil {
				return nil, err
			}
			if s.Overlays[loc] == nil {
				s.Overlays[loc] = map[Category][]any{}
			}
			s.Overlays[loc][c] = items
		}
		name := path.Join(dir, "locres", loc+".json")
		b, err := fs.ReadFile(fsys, name)
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return nil, &FileError{name, err}
		}
		var table map[string]map[string]string
		if err := json.Unmarshal(b, &table); err != nil {
			return nil, &FileError{name, fmt.Errorf("not a string table: %w", err)}
		}
		s.Locres[loc] = table
	}
	return s, nil
}

func readItems(fsys fs.FS, name string) ([]any, error) {
	var v any
	if err := readEnveloped(fsys, name, &v); err != nil {
		return nil, err
	}
	items, ok := v.([]any)
	if !ok {
		return nil, &FileError{name, errors.New("data is not an array")}
	}
	return items, nil
}

// readEnveloped decodes a file holding either the API's {"status":200,"data":…}
// body or the bare data (envelope's rules).
func readEnveloped(fsys fs.FS, name string, into *any) error {
	b, err := fs.ReadFile(fsys, name)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return err
		}
		return &FileError{name, err}
	}
	v, err := envelope.Decode(b)
	if err != nil {
		return &FileError{name, err}
	}
	*into = v
	return nil
}
