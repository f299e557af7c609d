package catalog

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io/fs"
	"path"
	"time"
)

// BuildFiles builds an edition from snapshot files held in memory (a version
// read from a store), with the repairs an import applies.
func BuildFiles(files map[string][]byte) (*Edition, error) {
	return BuildFilesReusing(files, nil)
}

// BuildFilesReusing builds files as BuildFiles does, but a source category
// whose files (en-US and every overlay) are byte for byte those prev was built
// from is neither read nor rendered again: the new edition shares prev's tables
// for it and the categories flattened from it (same bytes, same ETags, already
// compressed). Consecutive game versions change a few catalogs, so a replica
// swapping versions renders only those. prev may be nil.
func BuildFilesReusing(files map[string][]byte, prev *Edition) (*Edition, error) {
	return planBuild(files, prev).build(prev)
}

// sourceFiles maps the path of every locale's file of a source category to it.
var sourceFiles = func() map[string]Category {
	m := map[string]Category{}
	for _, c := range SourceCategories() {
		for _, loc := range Locales {
			m[loc+"/"+c.File()] = c
		}
	}
	return m
}()

// sourceKeys hashes each source category's files, in locale order.
func sourceKeys(files map[string][]byte) *[NumCategories]string {
	var keys [NumCategories]string
	for _, c := range SourceCategories() {
		h := sha256.New()
		for _, loc := range Locales {
			name := loc + "/" + c.File()
			if b, ok := files[name]; ok {
				fmt.Fprintf(h, "%s %d\n", name, len(b))
				h.Write(b)
			}
		}
		keys[c] = hex.EncodeToString(h.Sum(nil))
	}
	return &keys
}

// LoadFiles reads a snapshot held in memory (slash paths of the snapshot
// layout) as LoadSnapshot reads a directory.
func LoadFiles(files map[string][]byte) (*Snapshot, error) {
	return LoadSnapshot(memFS(files), ".")
}

// memFS serves snapshot files from memory to LoadSnapshot, which only reads
// whole files by name.
type memFS map[string][]byte

func (m memFS) ReadFile(name string) ([]byte, error) {
	b, ok := m[path.Clean(name)]
	if !ok || !fs.ValidPath(name) {
		return nil, &fs.PathError{Op: "read", Path: name, Err: fs.ErrNotExist}
	}
	return b, nil
}

func (m memFS) Open(name string) (fs.File, error) {
	b, err := m.ReadFile(name)
	if err != nil {
		return nil, err
	}
	return &memFile{Reader: bytes.NewReader(b), name: path.Base(name), size: int64(len(b))}, nil
}

type memFile struct {
	*bytes.Reader
	name string
	size int64
}

func (f *memFile) Stat() (fs.FileInfo, error) { return f, nil }
func (f *memFile) Close() error               { return nil }
func (f *memFile) Name() string               { return f.name }
func (f *memFile) Size() int64                { return f.size }
func (f *memFile) Mode() fs.FileMode          { return 0o444 }
func (f *memFile) ModTime() time.Time         { return time.Time{} }
func (f *memFile) IsDir() bool                { return false }
func (f *memFile) Sys() any                   { return nil }
