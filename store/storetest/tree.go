package storetest

import (
	"fmt"
	"hash/maphash"
	"io/fs"
	"os"
	"path/filepath"
	"testing"
)

// treeSeeds make TreeHash's hashes 128 bits of maphash: they only compare
// within one process, and SHA-256 of every file cost a tenth of the pipeline
// tests' CPU.
var treeSeeds = [2]maphash.Seed{maphash.MakeSeed(), maphash.MakeSeed()}

// TreeHash maps every file under a file store's directory to a hash of its
// bytes (the writer's LOCK file aside), so a test can prove a refused import
// or sync changed nothing.
func TreeHash(t testing.TB, dir string) map[string]string {
	t.Helper()
	out := map[string]string{}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || d.Name() == "LOCK" {
			return err
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		out[rel] = fmt.Sprintf("%016x%016x", maphash.Bytes(treeSeeds[0], b), maphash.Bytes(treeSeeds[1], b))
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}
