package catalog

import (
	"bytes"
	"io/fs"
	"path"
	"time"
)

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
