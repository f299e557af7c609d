package media

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
)

// IndexFile is the name of a Dir's index: one JSON line per upstream URL
// mirrored ({"url":…,"sha256":…,"contentType":…,"size":…}), appended once its
// file is in place, so a line names only a complete file. Prune replaces it
// with a new file, which readers notice and read whole.
const IndexFile = "index.jsonl"

// Dir is a Library on a directory: each file at DIR/<sha256>, written to a
// temporary name and renamed, and the index DIR/index.jsonl. Writers are one
// process at a time (a sync holds the store's lock); readers in other
// processes see its additions after Reload.
//
// A Dir serves only what it has checked: an index line is taken when its type
// is one of Types and its file's size and first bytes agree with it, and Open
// opens only the files of lines taken. So a mirror filled before these checks
// existed, or a file changed on disk, is never served as what it is not.
type Dir struct {
	dir string

	mu      sync.RWMutex
	index   map[string]File
	read    int64             // the index bytes read so far
	file    os.FileInfo       // the index file read, to notice Prune's replacement
	hashes  map[string]string // sha256 → content type, of the files checked
	dropped []Dropped         // lines not taken since the last Prune
}

// Dropped is an index line a Dir does not serve, and why.
type Dropped struct{ URL, SHA256, Reason string }

var _ Library = (*Dir)(nil)

// OpenDir opens (creating it when missing) the mirror in dir and reads its index.
func OpenDir(dir string) (*Dir, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("media directory %s: %w", dir, err)
	}
	d := &Dir{dir: dir, index: map[string]File{}, hashes: map[string]string{}}
	return d, d.Reload()
}

// ValidHash says whether s is 64 lowercase hexadecimal digits: checked before
// a hash names a file.
func ValidHash(s string) bool {
	b, err := hex.DecodeString(s)
	return err == nil && len(b) == sha256.Size && strings.ToLower(s) == s
}

// Reload reads the index lines added since the last read (by another process),
// or the whole index when a Prune replaced it. A last line without its newline
// is a write in progress, read next time. Each line's file is checked (the
// first time its hash is met): a line failing the check is not taken.
func (d *Dir) Reload() error {
	d.mu.Lock()
	defer d.mu.Unlock()
	f, err := os.Open(filepath.Join(d.dir, IndexFile))
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("media index: %w", err)
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return fmt.Errorf("media index: %w", err)
	}
	if d.file != nil && !os.SameFile(d.file, fi) {
		d.index, d.hashes, d.dropped, d.read = map[string]File{}, map[string]string{}, nil, 0
	}
	d.file = fi
	if _, err := f.Seek(d.read, io.SeekStart); err != nil {
		return fmt.Errorf("media index: %w", err)
	}
	r := bufio.NewReader(f)
	for {
		line, err := r.ReadBytes('\n')
		if err != nil { // io.EOF: a partial line or none is left for next time
			return nil
		}
		d.read += int64(len(line))
		var e entry
		if json.Unmarshal(line, &e) != nil || !ValidHash(e.SHA256) {
			d.dropped = append(d.dropped, Dropped{URL: e.URL, Reason: "not an index line"})
			continue
		}
		if reason := d.check(e.File); reason != "" {
			d.dropped = append(d.dropped, Dropped{URL: e.URL, SHA256: e.SHA256, Reason: reason})
			continue
		}
		d.index[e.URL] = e.File
		d.hashes[e.SHA256] = e.ContentType
	}
}

// check says why a line's file is not to be served, "" when it is: its type
// is one of Types, and the file on disk has its size and that type's first
// bytes. A hash already checked is not read again.
func (d *Dir) check(f File) string {
	if !Allowed(f.ContentType) {
		return notServed(f.ContentType)
	}
	if ct, ok := d.hashes[f.SHA256]; ok {
		if ct != f.ContentType {
			return mismatch(f.ContentType, ct)
		}
		return ""
	}
	h, err := os.Open(filepath.Join(d.dir, f.SHA256))
	if err != nil {
		return "its file cannot be read: " + err.Error()
	}
	defer h.Close()
	if fi, err := h.Stat(); err != nil || fi.Size() != f.Size {
		return fmt.Sprintf("its file is not the %d bytes the index says", f.Size)
	}
	head := make([]byte, SniffLen)
	n, _ := io.ReadFull(h, head)
	if got := Sniff(head[:n]); got != f.ContentType {
		return mismatch(f.ContentType, describe(got, head[:n]))
	}
	return ""
}

type entry struct {
	URL string `json:"url"`
	File
}

// Lookup names the file mirrored from upstreamURL.
func (d *Dir) Lookup(upstreamURL string) (File, bool) {
	d.mu.RLock()
	defer d.mu.RUnlock()
	f, ok := d.index[upstreamURL]
	return f, ok
}

// Len is the number of URLs mirrored.
func (d *Dir) Len() int {
	d.mu.RLock()
	defer d.mu.RUnlock()
	return len(d.index)
}

// Files is the number of distinct files stored.
func (d *Dir) Files() int {
	d.mu.RLock()
	defer d.mu.RUnlock()
	return len(d.hashes)
}

// ContentType is the type a stored file was fetched with.
func (d *Dir) ContentType(sum string) (string, bool) {
	d.mu.RLock()
	defer d.mu.RUnlock()
	ct, ok := d.hashes[sum]
	return ct, ok
}

// Open reads a mirrored file; a malformed hash, or one no line taken from the
// index names, is fs.ErrNotExist.
func (d *Dir) Open(_ context.Context, sum string) (io.ReadSeekCloser, error) {
	if !ValidHash(sum) {
		return nil, fmt.Errorf("media %q: %w", sum, fs.ErrNotExist)
	}
	if _, ok := d.ContentType(sum); !ok {
		return nil, fmt.Errorf("media %s: not in the index: %w", sum, fs.ErrNotExist)
	}
	f, err := os.Open(filepath.Join(d.dir, sum))
	if err != nil {
		return nil, fmt.Errorf("media %s: %w", sum, err)
	}
	return f, nil
}

// Put stores body, fetched from upstreamURL with contentType, under its
// sha256 (once: identical bytes from another URL reuse the file) and records
// the URL in the index. A body Check refuses is a *TypeError, and nothing is
// stored.
func (d *Dir) Put(upstreamURL, contentType string, body []byte) (File, error) {
	ct, err := Check(contentType, body)
	if err != nil {
		return File{}, err
	}
	sum := sha256.Sum256(body)
	f := File{SHA256: hex.EncodeToString(sum[:]), ContentType: ct, Size: int64(len(body))}
	d.mu.Lock()
	defer d.mu.Unlock()
	if _, ok := d.hashes[f.SHA256]; !ok {
		if err := writeAtomic(filepath.Join(d.dir, f.SHA256), body); err != nil {
			return File{}, err
		}
	}
	line, err := json.Marshal(entry{URL: upstreamURL, File: f})
	if err != nil {
		return File{}, err
	}
	idx, err := os.OpenFile(filepath.Join(d.dir, IndexFile), os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o644)
	if err != nil {
		return File{}, fmt.Errorf("media index: %w", err)
	}
	n, err := idx.Write(append(line, '\n'))
	if cerr := idx.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return File{}, fmt.Errorf("media index: %w", err)
	}
	d.read += int64(n)
	d.index[upstreamURL] = f
	d.hashes[f.SHA256] = ct
	return f, nil
}

// Prune makes the index name only what is served: it drops the lines Reload
// did not take and those whose URL keep refuses (keep may be nil), writes the
// index anew without them when there are any, and removes the files only
// they named. It returns what it dropped, by URL. For the writer, as Put.
func (d *Dir) Prune(keep func(upstreamURL string) error) ([]Dropped, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	dropped := slices.Clone(d.dropped)
	kept := maps.Clone(d.index)
	if keep != nil {
		for u, f := range d.index {
			if err := keep(u); err != nil {
				dropped = append(dropped, Dropped{URL: u, SHA256: f.SHA256, Reason: err.Error()})
				delete(kept, u)
			}
		}
	}
	if len(dropped) == 0 {
		return nil, nil
	}
	var b bytes.Buffer
	for _, u := range slices.Sorted(maps.Keys(kept)) {
		line, err := json.Marshal(entry{URL: u, File: kept[u]})
		if err != nil {
			return nil, err
		}
		b.Write(line)
		b.WriteByte('\n')
	}
	name := filepath.Join(d.dir, IndexFile)
	if err := writeAtomic(name, b.Bytes()); err != nil {
		return nil, fmt.Errorf("media index: %w", err)
	}
	fi, err := os.Stat(name)
	if err != nil {
		return nil, fmt.Errorf("media index: %w", err)
	}
	d.index, d.file, d.read, d.dropped = kept, fi, int64(b.Len()), nil
	d.hashes = map[string]string{}
	for _, f := range kept {
		d.hashes[f.SHA256] = f.ContentType
	}
	var errs []error
	for _, x := range dropped {
		if _, named := d.hashes[x.SHA256]; !named && ValidHash(x.SHA256) {
			if err := os.Remove(filepath.Join(d.dir, x.SHA256)); err != nil && !errors.Is(err, fs.ErrNotExist) {
				errs = append(errs, fmt.Errorf("media file: %w", err))
			}
		}
	}
	slices.SortFunc(dropped, func(a, b Dropped) int { return strings.Compare(a.URL, b.URL) })
	return dropped, errors.Join(errs...)
}

// writeAtomic writes name through a temporary file in the same directory, so
// a crash leaves either no file or the whole one.
func writeAtomic(name string, body []byte) error {
	tmp, err := os.CreateTemp(filepath.Dir(name), ".tmp-*")
	if err != nil {
		return fmt.Errorf("media file: %w", err)
	}
	_, err = tmp.Write(body)
	if err == nil {
		err = tmp.Sync()
	}
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp.Name(), name)
	}
	if err != nil {
		_ = os.Remove(tmp.Name())
		return fmt.Errorf("media file %s: %w", filepath.Base(name), err)
	}
	return nil
}

// URLs lists, once each and sorted, the media URLs of a snapshot's catalog
// files (every .json file of fsys but version.json and locres/, read one at a
// time): every absolute http(s) URL in a string value but links into the API
// itself (starting with apiPrefix, e.g. https://valorant-api.com/v1/). A file
// that is not JSON has none; one that cannot be read is an error.
func URLs(fsys fs.FS, apiPrefix string) ([]string, error) {
	seen := map[string]bool{}
	var out []string
	var walk func(v any)
	walk = func(v any) {
		switch x := v.(type) {
		case map[string]any:
			for _, e := range x {
				walk(e)
			}
		case []any:
			for _, e := range x {
				walk(e)
			}
		case string:
			if isMediaURL(x, apiPrefix) && !seen[x] {
				seen[x] = true
				out = append(out, x)
			}
		}
	}
	err := fs.WalkDir(fsys, ".", func(name string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || name == "version.json" || strings.HasPrefix(name, "locres/") || !strings.HasSuffix(name, ".json") {
			return err
		}
		b, err := fs.ReadFile(fsys, name)
		if err != nil {
			return fmt.Errorf("media URLs: %w", err)
		}
		var v any
		if json.Unmarshal(b, &v) == nil {
			walk(v)
		}
		return nil
	})
	slices.Sort(out)
	return out, err
}

func isMediaURL(s, apiPrefix string) bool {
	rest, ok := strings.CutPrefix(s, "https://")
	if !ok {
		if rest, ok = strings.CutPrefix(s, "http://"); !ok {
			return false
		}
	}
	host, _, _ := strings.Cut(rest, "/")
	return host != "" && (apiPrefix == "" || !strings.HasPrefix(s, apiPrefix)) && !strings.ContainsAny(s, " \n\t\"\\")
}
