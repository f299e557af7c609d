package pipeline_test

import (
	"crypto/sha256"
	"encoding/hex"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strings"
	"testing"

	"github.com/refdata/refdata/fixtures"
	"github.com/refdata/refdata/pipeline"
	"github.com/refdata/refdata/store"
)

// fixtureDir copies an embedded sample version (trimmed under -short) (by NN prefix, "14" or "15") into
// a temporary directory, so a test can import or damage it.
func fixtureDir(t testing.TB, nn string) string {
	t.Helper()
	for _, v := range fixtures.Versions() {
		if strings.HasPrefix(path.Base(v), nn+"_") {
			dst := filepath.Join(t.TempDir(), path.Base(v))
			if testing.Short() {
				// The protocol at a fraction of the size (fixtures.WriteSmall).
				if err := fixtures.WriteSmall(dst, nn); err != nil {
					t.Fatal(err)
				}
				return dst
			}
			sub, err := fs.Sub(fixtures.FS, v)
			if err != nil {
				t.Fatal(err)
			}
			if err := os.CopyFS(dst, sub); err != nil {
				t.Fatal(err)
			}
			return dst
		}
	}
	t.Fatalf("no embedded version %s", nn)
	return ""
}

// copyDir copies a directory tree (writable copies).
func copyDir(t testing.TB, src, dst string) {
	t.Helper()
	if err := os.CopyFS(dst, os.DirFS(src)); err != nil {
		t.Fatal(err)
	}
}

// treeHash maps every file under dir to its sha256, to prove nothing changed.
func treeHash(t testing.TB, dir string) map[string]string {
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
		h := sha256.Sum256(b)
		rel, _ := filepath.Rel(dir, p)
		out[rel] = hex.EncodeToString(h[:])
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func openStore(t testing.TB, dir string) *store.Store {
	t.Helper()
	st, err := store.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	return st
}

func mustImport(t testing.TB, st *store.Store, dir string) *pipeline.Report {
	t.Helper()
	rep, err := pipeline.Import(st, dir, pipeline.Options{})
	if err != nil {
		var b strings.Builder
		rep.Write(&b)
		t.Fatalf("import %s: %v\n%s", dir, err, b.String())
	}
	return rep
}
