package storetest

import (
	"fmt"
	"hash/maphash"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"
	"testing"

	"github.com/refdata/refdata/store"
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

// Unreferenced lists the segments and snapshot files in a file store's
// directory that no stored version's manifest names (what a sweep removes),
// and missing, those a manifest names that are not there (what a sweep must
// never remove), each as "segments/<sha256>.seg" or "files/<sha256>.gz".
func Unreferenced(t testing.TB, st *store.Store) (unreferenced, missing []string) {
	t.Helper()
	vs, err := st.Versions()
	if err != nil {
		t.Fatal(err)
	}
	named := map[string]bool{}
	for _, m := range vs {
		for _, sum := range m.Segments {
			named[path.Join("segments", sum+".seg")] = true
		}
		if m.Contents {
			for _, sum := range m.Files {
				named[path.Join("files", sum+".gz")] = true
			}
		}
	}
	there := map[string]bool{}
	for _, dir := range []string{"segments", "files"} {
		entries, err := os.ReadDir(filepath.Join(st.Dir(), dir))
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range entries {
			name := path.Join(dir, e.Name())
			there[name] = true
			if !named[name] {
				unreferenced = append(unreferenced, name)
			}
		}
	}
	for name := range named {
		if !there[name] {
			missing = append(missing, name)
		}
	}
	slices.Sort(missing)
	return unreferenced, missing
}
