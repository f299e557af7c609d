package catalog

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io/fs"
	"maps"
	"path"
	"slices"
	"strings"
)

// ContentHash is a version's content hash as /v1/versions gives it: SHA-256
// over one line "<path> <sha256 hex>\n" per file (a store's MANIFEST.json
// lists them), sorted by path.
func ContentHash(files map[string]string) string {
	names := slices.Sorted(maps.Keys(files))
	h := sha256.New()
	for _, n := range names {
		fmt.Fprintf(h, "%s %s\n", n, files[n])
	}
	return "sha256:" + hex.EncodeToString(h.Sum(nil))
}

// FilesHash is ContentHash of snapshot files held in memory.
func FilesHash(files map[string][]byte) string {
	sums := make(map[string]string, len(files))
	for n, b := range files {
		sum := sha256.Sum256(b)
		sums[n] = hex.EncodeToString(sum[:])
	}
	return ContentHash(sums)
}

// FileHashes returns the SHA-256 (hex) of every file under dir in fsys by its
// path relative to dir: ContentHash's input for a snapshot not in a store.
func FileHashes(fsys fs.FS, dir string) (map[string]string, error) {
	out := map[string]string{}
	err := fs.WalkDir(fsys, dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := fs.ReadFile(fsys, p)
		if err != nil {
			return err
		}
		sum := sha256.Sum256(b)
		rel := strings.TrimPrefix(p, path.Clean(dir)+"/")
		out[rel] = hex.EncodeToString(sum[:])
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("hash snapshot %s: %w", dir, err)
	}
	return out, nil
}
