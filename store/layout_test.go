package store_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/refdata/refdata/blob"
	"github.com/refdata/refdata/edition"
	"github.com/refdata/refdata/store"
	"github.com/refdata/refdata/store/storetest"
)

// legacyID is the version of the pack written by the refdata before bodies
// were stored by content (edition/testdata).
const (
	legacyID   = "05E83EB5E32657B9"
	legacyPack = "../edition/testdata/tiny15.pack"
)

// legacyStore writes, file by file, a store as the refdata before bodies were
// stored by content left it: the version's snapshot files and EDITION.pack
// in versions/<ID>/, a manifest naming the pack's checksum and no index, and
// the pointer. It returns the files and the pack.
func legacyStore(t *testing.T, dir string) (map[string][]byte, []byte) {
	t.Helper()
	pack, err := os.ReadFile(legacyPack)
	if err != nil {
		t.Fatal(err)
	}
	files := storetest.Files(legacyID)
	vdir := filepath.Join(dir, "versions", legacyID)
	sums := map[string]string{}
	for name, b := range files {
		p := filepath.Join(vdir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, b, 0o644); err != nil {
			t.Fatal(err)
		}
		sums[name] = store.Sum(b)
	}
	if err := os.WriteFile(filepath.Join(vdir, "EDITION.pack"), pack, 0o644); err != nil {
		t.Fatal(err)
	}
	// The fields of the manifest that refdata wrote, no others.
	published := time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC)
	m, err := json.MarshalIndent(map[string]any{"manifestId": legacyID, "version": "release-03.10-shipping-19-639263",
		"branch": "release-03.10", "seq": 1, "publishedAt": published, "files": sums, "edition": store.PackSum(pack)}, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(vdir, "MANIFEST.json"), m, 0o644); err != nil {
		t.Fatal(err)
	}
	ptr, err := json.Marshal(store.Pointer{ManifestID: legacyID, ManifestSHA256: store.Sum(m), PublishedAt: published})
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "ACTIVE"), ptr, 0o644); err != nil {
		t.Fatal(err)
	}
	return files, pack
}

// TestLegacyLayout: a store the earlier refdata wrote (a version's files and
// EDITION.pack in its directory) is read by this one: its active version
// resolves, ReadVersion gives its files, ReadIndex its pack, which Decode
// reads; a damaged file or pack is ErrCorrupt. A version this one publishes
// beside it takes the new layout, the sweep leaves the old version's files
// alone, and pruning the old version removes it.
func TestLegacyLayout(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name   string
		damage string // a file of the version to change behind the store's back
	}{
		{"intact", ""},
		{"a damaged snapshot file", "en-US/weapons.json"},
		{"a damaged pack", "EDITION.pack"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			files, pack := legacyStore(t, dir)
			st, err := store.Open(dir)
			if err != nil {
				t.Fatal(err)
			}
			if tc.damage != "" {
				appendSpace(t, filepath.Join(dir, "versions", legacyID, filepath.FromSlash(tc.damage)))
			}
			m, got, err := st.ReadVersion(legacyID)
			_, index, ierr := st.ReadIndex(legacyID, "")
			switch tc.damage {
			case "":
			case "EDITION.pack":
				if err != nil || !errors.Is(ierr, store.ErrCorrupt) {
					t.Errorf("a damaged pack: ReadVersion %v, ReadIndex %v; want ErrCorrupt from ReadIndex alone", err, ierr)
				}
				return
			default:
				if !errors.Is(err, store.ErrCorrupt) || ierr != nil {
					t.Errorf("a damaged file: ReadVersion %v, ReadIndex %v; want ErrCorrupt from ReadVersion alone", err, ierr)
				}
				return
			}
			if err != nil || ierr != nil || m.Contents || m.Index != "" || !maps.EqualFunc(got, files, bytes.Equal) {
				t.Fatalf("ReadVersion: %d files (%v), contents %v, index %q; ReadIndex: %v", len(got), err, m.Contents, m.Index, ierr)
			}
			if !bytes.Equal(index, pack) {
				t.Fatalf("ReadIndex gave %d bytes, not the pack's %d", len(index), len(pack))
			}
			if p, why, err := store.ResolveIn(st); err != nil || why != "" || p.ManifestID != legacyID {
				t.Fatalf("resolve: %s, %q, %v", p.ManifestID, why, err)
			}
			ed, err := edition.Decode(index, func(sum string, size int64) (*blob.Segment, error) { return st.Segment(sum, size, nil) })
			if err != nil || ed.ManifestID != legacyID {
				t.Fatalf("decode the pack: %v", err)
			}

			// A version published now, beside it.
			unlock, err := st.Lock(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			defer unlock()
			seg := segment(t, "a body of the new version")
			const next = "05E83EB5E32657BA"
			p := store.Publication{ManifestID: next, Version: "v", Branch: "b", Files: storetest.Files(next), Previous: legacyID,
				DiffBody: []byte(`{}`), Index: []byte("index of " + next), Segments: []string{seg.Sum}, Segment: seg, Now: time.Now()}
			if _, err := st.Publish(p); err != nil {
				t.Fatal(err)
			}
			if _, got, err := st.ReadVersion(legacyID); err != nil || !maps.EqualFunc(got, files, bytes.Equal) {
				t.Fatalf("the old version after a publish and its sweep: %v", err)
			}
			if _, got, err := st.ReadIndex(legacyID, ""); err != nil || !bytes.Equal(got, pack) {
				t.Fatalf("the old version's pack after a publish and its sweep: %v", err)
			}
			if extra, missing := storetest.Unreferenced(t, st); len(extra) > 0 || len(missing) > 0 {
				t.Errorf("unreferenced %q, missing %q", extra, missing)
			}
			// Pruned, it is gone with its directory.
			p2 := store.Publication{ManifestID: "05E83EB5E32657BB", Version: "v", Branch: "b", Files: storetest.Files("05E83EB5E32657BB"),
				Index: []byte("index"), Segments: []string{seg.Sum}, Retain: 2, Now: time.Now()}
			if pruned, err := st.Publish(p2); err != nil || !slices.Equal(pruned, []string{legacyID}) {
				t.Fatalf("pruned %v, %v; want the old version", pruned, err)
			}
			if _, err := os.Stat(filepath.Join(dir, "versions", legacyID)); !errors.Is(err, os.ErrNotExist) {
				t.Errorf("the pruned old version's directory: %v", err)
			}
		})
	}
}

// segment is a segment of blobs, in memory.
func segment(t *testing.T, blobs ...string) *blob.Finished {
	t.Helper()
	w, err := blob.NewWriter("")
	if err != nil {
		t.Fatal(err)
	}
	for _, b := range blobs {
		if _, err := w.Append([]byte(b)); err != nil {
			t.Fatal(err)
		}
	}
	f, err := w.Finish()
	if err != nil {
		t.Fatal(err)
	}
	return &f
}

// TestSweep: the sweep deletes the segments and snapshot files no stored
// version names (a pruned or discarded version's, those an import left when
// it was killed before it published) and keeps every one a stored version
// names, however many name it; with a manifest it cannot read, it deletes
// nothing.
func TestSweep(t *testing.T) {
	t.Parallel()
	const (
		a = "00000000000000A1"
		b = "00000000000000B2"
		c = "00000000000000C3"
	)
	segA, segB, segShared := segment(t, "only "+a), segment(t, "only "+b), segment(t, "shared")
	pub := func(id string, segs ...*blob.Finished) store.Publication {
		p := store.Publication{ManifestID: id, Version: "v-" + id, Branch: "b", Files: storetest.Files(id), Index: []byte("index of " + id), Now: time.Now()}
		for _, s := range segs {
			p.Segments = append(p.Segments, s.Sum)
		}
		p.Segment = segs[0]
		return p
	}
	for _, tc := range []struct {
		name string
		// then runs with the store's lock held, after a and b (and c, active)
		// are published, and returns what must be gone.
		then func(t *testing.T, st *store.Store) (gone []string)
		// refuses: the sweep deletes nothing, leaving what it would have.
		refuses bool
	}{
		{"an import's leftovers", func(t *testing.T, st *store.Store) []string {
			orphan := segment(t, "never published")
			if err := os.WriteFile(blob.Path(filepath.Join(st.Dir(), "segments"), orphan.Sum), orphan.Mem, 0o644); err != nil {
				t.Fatal(err)
			}
			file := []byte("a file never published")
			if err := os.WriteFile(filepath.Join(st.Dir(), "files", store.Sum(file)+".gz"), store.CompressFile(file), 0o644); err != nil {
				t.Fatal(err)
			}
			if err := st.Sweep(); err != nil {
				t.Fatal(err)
			}
			return []string{"segments/" + orphan.Sum + ".seg", "files/" + store.Sum(file) + ".gz"}
		}, false},
		{"a discarded version", func(t *testing.T, st *store.Store) []string {
			if err := st.Discard(a); err != nil {
				t.Fatal(err)
			}
			return []string{"segments/" + segA.Sum + ".seg", "files/" + store.Sum(storetest.Files(a)["version.json"]) + ".gz"}
		}, false},
		{"pruned versions", func(t *testing.T, st *store.Store) []string {
			p := pub("00000000000000D4", segShared)
			p.Retain = 2
			if pruned, err := st.Publish(p); err != nil || len(pruned) != 2 {
				t.Fatalf("pruned %v, %v", pruned, err)
			}
			return []string{"segments/" + segA.Sum + ".seg", "segments/" + segB.Sum + ".seg"}
		}, false},
		{"a manifest that does not parse", func(t *testing.T, st *store.Store) []string {
			orphan := segment(t, "never published")
			if err := os.WriteFile(blob.Path(filepath.Join(st.Dir(), "segments"), orphan.Sum), orphan.Mem, 0o644); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(st.Dir(), "versions", b, "MANIFEST.json"), []byte("{"), 0o644); err != nil {
				t.Fatal(err)
			}
			if err := st.Sweep(); err != nil {
				t.Errorf("a sweep with a manifest it cannot read: %v, want nil (it deletes nothing)", err)
			}
			return nil
		}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			st, err := store.Open(t.TempDir())
			if err != nil {
				t.Fatal(err)
			}
			unlock, err := st.Lock(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			defer unlock()
			for _, p := range []store.Publication{pub(a, segA, segShared), pub(b, segB, segShared), pub(c, segShared)} {
				if _, err := st.Publish(p); err != nil {
					t.Fatal(err)
				}
			}
			before := storetest.TreeHash(t, st.Dir())
			gone := tc.then(t, st)
			after := storetest.TreeHash(t, st.Dir())
			for _, name := range gone {
				if _, ok := after[filepath.FromSlash(name)]; ok {
					t.Errorf("%s is still there", name)
				}
			}
			extra, missing := storetest.Unreferenced(t, st)
			if len(missing) > 0 {
				t.Errorf("swept what a version names: %q", missing)
			}
			if tc.refuses {
				for name := range before {
					if _, ok := after[name]; !ok {
						t.Errorf("%s deleted", name)
					}
				}
				if len(extra) == 0 {
					t.Error("the leftover was not there to keep")
				}
				return
			}
			if len(extra) > 0 {
				t.Errorf("left unreferenced: %q", extra)
			}
			if _, ok := after[filepath.Join("segments", segShared.Sum+".seg")]; !ok {
				t.Errorf("the segment every version names was swept")
			}
		})
	}
}

// TestReplaceStopped: re-publishing a stored version (import --force, the
// way a version an older store holds is rendered again) stopped before any
// one of its write steps, as kill -9 stops it, leaves that version stored
// and intact, and active as it was (the old or the new copy): a server
// starting then serves it, and the next publish keeps it.
func TestReplaceStopped(t *testing.T) {
	t.Parallel()
	if runtime.GOOS != "linux" {
		t.Skip("a replace is whole at every step where two directories can be exchanged in one (Linux's renameat2)")
	}
	seg := segment(t, "a body of the re-published version")
	replace := store.Publication{ManifestID: legacyID, Version: "v", Branch: "b", Files: storetest.Files(legacyID),
		Index: []byte("index of " + legacyID), Segments: []string{seg.Sum}, Segment: seg, Replace: true, Now: time.Now()}
	var steps []string
	{
		dir := t.TempDir()
		legacyStore(t, dir)
		st, err := store.Open(dir)
		if err != nil {
			t.Fatal(err)
		}
		st.OnStep = func(what string) { steps = append(steps, what) }
		if _, err := st.Publish(replace); err != nil {
			t.Fatal(err)
		}
	}
	for n, step := range steps {
		if strings.HasPrefix(step, "fsync ") {
			continue // for a process killed, the store before an fsync is the store before the next step
		}
		t.Run(fmt.Sprintf("%d %s", n, step), func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			legacyStore(t, dir)
			st, err := store.Open(dir)
			if err != nil {
				t.Fatal(err)
			}
			i := 0
			st.OnStep = func(string) {
				if i++; i > n {
					runtime.Goexit() // stopped here, nothing after it runs
				}
			}
			done := make(chan struct{})
			go func() { defer close(done); _, _ = st.Publish(replace) }()
			<-done
			st.OnStep = nil
			if _, _, err := st.ReadIndex(legacyID, ""); err != nil {
				t.Errorf("the re-published version is not stored intact: %v", err)
			}
			if p, why, err := store.ResolveIn(st); err != nil || why != "" || p.ManifestID != legacyID {
				t.Errorf("a server starting now serves %q (%q, %v), not %s", p.ManifestID, why, err, legacyID)
			}
			unlock, err := st.Lock(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			defer unlock()
			const next = "05E83EB5E32657BA"
			if _, err := st.Publish(store.Publication{ManifestID: next, Version: "v", Branch: "b", Files: storetest.Files(next),
				Index: []byte("index of " + next), Segments: []string{seg.Sum}, Now: time.Now()}); err != nil {
				t.Fatal(err)
			}
			if _, err := st.Lookup(legacyID); err != nil {
				t.Errorf("after the next publish: %v", err)
			}
		})
	}
}
