package store_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/refdata/refdata/store"
	"github.com/refdata/refdata/store/storetest"
)

// TestCompliance holds the file store to the contract of store.Backend.
func TestCompliance(t *testing.T) {
	dirs := map[string]string{}
	storetest.Run(t, storetest.Harness{
		Open: func(t *testing.T, name string) store.Backend {
			key := t.Name() + "/" + name
			if dirs[key] == "" {
				dirs[key] = t.TempDir()
			}
			s, err := store.Open(dirs[key])
			if err != nil {
				t.Fatal(err)
			}
			return s
		},
		Damage: func(t *testing.T, b store.Backend, id, file string) {
			m, _, err := b.ReadIndex(id, "")
			if m.Files[file] == "" {
				t.Fatalf("no file %s in %s: %v", file, id, err)
			}
			appendSpace(t, filepath.Join(b.(*store.Store).Dir(), "files", m.Files[file]+".gz"))
		},
		DamageIndex: func(t *testing.T, b store.Backend, id string) {
			appendSpace(t, filepath.Join(b.(*store.Store).Dir(), "versions", id, "INDEX.gz"))
		},
		DamageSegment: func(t *testing.T, b store.Backend, sum string) {
			appendSpace(t, filepath.Join(b.(*store.Store).Dir(), "segments", sum+".seg"))
		},
	})
}

// appendSpace damages a stored file behind the store's back: a byte more, its
// checksum unchanged.
func appendSpace(t *testing.T, p string) {
	t.Helper()
	raw, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, append(raw, ' '), 0o644); err != nil {
		t.Fatal(err)
	}
}
