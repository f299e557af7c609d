package media

import (
	"bufio"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
)

// IndexFile is the name of a Dir's index: one JSON line per upstream URL
// mirrored ({"url":…,"sha256":…,"contentType":…,"size":…}), appended once its
// file is in place, so a line names only a complete file.
const IndexFile = "index.jsonl"

// Dir is a Library on a directory: each file at DIR/<sha256>, written to a
// temporary name and renamed, and the index DIR/index.jsonl. Writers are one
// process at a time (a sync holds the store's lock); readers in other
// processes see its additions after Reload.
type Dir struct {
	dir string

	mu     sync.RWMutex
	index  map[string]File
	read   int64             // the index bytes read so far
	hashes map[string]string // sha256 → content type
}

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

// Reload reads the index lines added since the last read (by another process).
// A last line without its newline is a write in progress, read next time.
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
		if json.Unmarshal(line, &e) == nil && ValidHash(e.SHA256) {
			d.index[e.URL] = e.File
			d.hashes[e.SHA256] = e.ContentType
		}
	}
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

// Open reads a mirrored file; an unknown or malformed hash is fs.ErrNotExist.
func (d *Dir) Open(_ context.Context, sum string) (io.ReadSeekCloser, error) {
	if !ValidHash(sum) {
		return nil, fmt.Errorf("media %q: %w", sum, fs.ErrNotExist)
	}
	f, err := os.Open(filepath.Join(d.dir, sum))
	if err != nil {
		return nil, fmt.Errorf("media %s: %w", sum, err)
	}
	return f, nil
}

// Put stores body, fetched from upstreamURL with contentType, under its
// sha256 (once: identical bytes from another URL reuse the file) and records
// the URL in the index.
func (d *Dir) Put(upstreamURL, contentType string, body []byte) (File, error) {
	sum := sha256.Sum256(body)
	f := File{SHA256: hex.EncodeToString(sum[:]), ContentType: contentType, Size: int64(len(body))}
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
	d.hashes[f.SHA256] = contentType
	return f, nil
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
// files (name → JSON; version.json and locres/ are skipped): every absolute
// http(s) URL in a string value but links into the API itself (starting with
// apiPrefix, e.g. https://valorant-api.com/v1/).
func URLs(files map[string][]byte, apiPrefix string) []string {
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
	for name, b := range files {
		if name == "version.json" || strings.HasPrefix(name, "locres/") || !strings.HasSuffix(name, ".json") {
			continue
		}
		var v any
		if json.Unmarshal(b, &v) == nil {
			walk(v)
		}
	}
	slices.Sort(out)
	return out
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
