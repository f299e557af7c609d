package store_test

import (
	"context"
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
		OpenAbsent: func(t *testing.T) store.Backend {
			s, err := store.Open(filepath.Join(t.TempDir(), "not", "yet"))
			if err != nil {
				t.Fatal(err)
			}
			return s
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

// TestLockAfterRemoval: a writer waiting for the lock of a store whose creator
// stored nothing (and so removed it) gets a lock on the store it then creates,
// one a third writer cannot take.
func TestLockAfterRemoval(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "store")
	a, _ := store.Open(dir)
	b, _ := store.Open(dir)
	c, _ := store.Open(dir)
	unlockA, err := a.Lock(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	got := make(chan func())
	go func() {
		unlock, err := b.Lock(context.Background())
		if err != nil {
			t.Error(err)
		}
		got <- unlock
	}()
	if _, ok := c.TryLock(); ok {
		t.Fatal("a second writer took the lock a first holds")
	}
	unlockA() // stored nothing: the directory goes
	unlockB := <-got
	if _, err := os.Stat(filepath.Join(dir, "LOCK")); err != nil {
		t.Fatalf("the waiting writer holds no lock file: %v", err)
	}
	if u, ok := c.TryLock(); ok {
		u()
		t.Fatal("a third writer took the lock the waiting one got")
	}
	if err := b.WriteSyncState([]byte(`{}`)); err != nil {
		t.Fatal(err)
	}
	unlockB()
	if ok, _ := b.Exists(); !ok {
		t.Fatal("the store with sync state in it was removed")
	}
}
