// Package storetest is the compliance suite every store.Backend passes: the file
// store and PostgreSQL run the same tests (store/store_test.go,
// store/postgres/postgres_test.go), so the pipeline and live can rely on the
// contract store.Backend states, whichever backend an operator picks.
package storetest

import (
	"bytes"
	"context"
	"errors"
	"maps"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/refdata/refdata/blob"
	"github.com/refdata/refdata/store"
)

// Harness makes backends for the suite.
type Harness struct {
	// Open returns a new, empty backend. Two calls with the same name return
	// two handles on one store (two replicas, two processes); other names are
	// independent stores.
	Open func(t *testing.T, name string) store.Backend
	// Damage changes the stored bytes of one file of a version without its
	// checksum, as a disk or a careless operator would.
	Damage func(t *testing.T, b store.Backend, id, file string)
	// DamageIndex changes the stored bytes of a version's edition index
	// (Publication.Index) without its checksum.
	DamageIndex func(t *testing.T, b store.Backend, id string)
	// DamageSegment changes the stored bytes of a segment.
	DamageSegment func(t *testing.T, b store.Backend, sum string)
	// OpenAbsent returns a backend, a store.Lazy, on a store that does not
	// exist yet (a directory not created, a schema without refdata's tables),
	// as an import or a sync opens it; nil skips the subtest.
	OpenAbsent func(t *testing.T) store.Backend
}

// IDs used by the suite: valid manifest IDs.
const (
	id1 = "00000000000000A1"
	id2 = "00000000000000B2"
	id3 = "00000000000000C3"
)

// Files is a small version's snapshot files; the bytes differ per id.
func Files(id string) map[string][]byte {
	return map[string][]byte{
		"version.json":       []byte(`{"status":200,"data":{"manifestId":"` + id + `"}}`),
		"en-US/weapons.json": []byte(`{"status":200,"data":[{"uuid":"` + id + `"}]}`),
		"de-DE/weapons.json": []byte(`[]`),
		"locres/de-DE.json":  []byte(`{"ns":{"k":"` + id + `"}}`),
	}
}

func publication(id, previous string, retain int) store.Publication {
	p := store.Publication{ManifestID: id, Version: "v-" + id, Branch: "release-01", Files: Files(id),
		Previous: previous, Retain: retain, Now: time.Date(2026, 11, 22, 0, 0, 0, 0, time.UTC)}
	if previous != "" {
		p.DiffBody = []byte(`{"status":200,"data":{"fromVersion":"` + previous + `","toVersion":"` + id + `"}}`)
	}
	return p
}

func publish(t *testing.T, b store.Backend, p store.Publication) []string {
	t.Helper()
	unlock, err := b.Lock(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	defer unlock()
	pruned, err := b.Publish(p)
	if err != nil {
		t.Fatalf("publish %s: %v", p.ManifestID, err)
	}
	return pruned
}

// locked takes b's writer lock until the test ends.
func locked(t *testing.T, b store.Backend) {
	t.Helper()
	unlock, err := b.Lock(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(unlock)
}

// Run runs the suite.
func Run(t *testing.T, h Harness) {
	for _, c := range []struct {
		name string
		run  func(*testing.T, Harness)
	}{
		{"Empty", empty},
		{"Absent", absent},
		{"PublishAndRead", publishAndRead},
		{"Lookup", lookup},
		{"Refusals", refusals},
		{"Retention", retention},
		{"Lock", lock},
		{"SharedHandles", sharedHandles},
		{"Discard", discard},
		{"ActivateAndReplace", activateAndReplace},
		{"Edition", editionIndex},
		{"SyncState", syncState},
		{"Damage", damage},
		{"Changes", changes},
	} {
		t.Run(c.name, func(t *testing.T) { c.run(t, h) })
	}
}

// empty: a new store has no active pointer, no versions, nothing to look up or resolve.
func empty(t *testing.T, h Harness) {
	b := h.Open(t, "empty")
	if _, _, err := b.Active(); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("Active on an empty store: %v, want ErrNotFound", err)
	}
	if vs, err := b.Versions(); err != nil || len(vs) != 0 {
		t.Errorf("Versions = %v, %v", vs, err)
	}
	if _, err := b.Lookup(id1); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("Lookup: %v, want ErrNotFound", err)
	}
	if _, _, err := store.ResolveIn(b); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("ResolveIn: %v, want ErrNotFound", err)
	}
}

// absent: a store not created yet reads as empty; a writer that stores
// nothing leaves none behind; a publish or a sync's state creates it.
func absent(t *testing.T, h Harness) {
	if h.OpenAbsent == nil {
		t.Skip("the harness opens every store created")
	}
	exists := func(b store.Backend) bool {
		t.Helper()
		ok, err := b.(store.Lazy).Exists()
		if err != nil {
			t.Fatal(err)
		}
		return ok
	}
	b := h.OpenAbsent(t)
	if exists(b) {
		t.Fatal("a store not created yet exists")
	}
	if _, _, err := b.Active(); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("Active: %v, want ErrNotFound", err)
	}
	if vs, err := b.Versions(); err != nil || len(vs) != 0 {
		t.Errorf("Versions = %v, %v; want none", vs, err)
	}
	if st, err := b.SyncState(); err != nil || st != nil {
		t.Errorf("SyncState = %q, %v; want nil", st, err)
	}
	// A writer that stores nothing (a rejected import) leaves nothing behind.
	for range 2 {
		unlock, err := b.Lock(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		unlock()
		if exists(b) {
			t.Fatal("a writer that stored nothing left a store behind")
		}
	}
	// A publish creates it, readable through another handle.
	publish(t, b, publication(id1, "", 0))
	if !exists(b) {
		t.Fatal("a publish did not create the store")
	}
	if p, _, err := b.Active(); err != nil || p.ManifestID != id1 {
		t.Errorf("after the first publish Active = %+v, %v", p, err)
	}
	// A sync's state creates it too (sync records its failures in a store
	// that exists).
	c := h.OpenAbsent(t)
	if err := c.WriteSyncState([]byte(`{"etag":"a"}`)); err != nil {
		t.Fatal(err)
	}
	if st, err := c.SyncState(); err != nil || string(st) != `{"etag":"a"}` || !exists(c) {
		t.Errorf("after WriteSyncState: %q, %v, exists %v", st, err, exists(c))
	}
}

// publishAndRead: a published version reads back whole (files, manifest,
// Verify), a second moves the pointer and its revision, diffs read and write.
func publishAndRead(t *testing.T, h Harness) {
	b := h.Open(t, "publish")
	publish(t, b, publication(id1, "", 0))
	p, rev1, err := b.Active()
	if err != nil || p.ManifestID != id1 || p.Previous != "" || len(rev1) == 0 {
		t.Fatalf("Active = %+v, %q, %v", p, rev1, err)
	}
	m, files, err := b.ReadVersion(id1)
	if err != nil {
		t.Fatal(err)
	}
	if !maps.EqualFunc(files, Files(id1), bytes.Equal) {
		t.Errorf("ReadVersion gave other files: %v", slices.Sorted(maps.Keys(files)))
	}
	if m.ManifestID != id1 || m.Version != "v-"+id1 || m.Branch != "release-01" || len(m.Files) != len(files) || !m.PublishedAt.Equal(publication(id1, "", 0).Now) {
		t.Errorf("manifest %+v", m)
	}
	if vm, vfiles, err := b.Verify(id1, p.ManifestSHA256); err != nil {
		t.Errorf("Verify: %v", err)
	} else if vm.ManifestID != id1 || !maps.EqualFunc(vfiles, Files(id1), bytes.Equal) {
		t.Errorf("Verify gave manifest %s and files %v, not ReadVersion's", vm.ManifestID, slices.Sorted(maps.Keys(vfiles)))
	}
	if _, _, err := b.Verify(id1, strings.Repeat("0", 64)); !errors.Is(err, store.ErrCorrupt) {
		t.Errorf("Verify against another manifest checksum: %v, want ErrCorrupt", err)
	}

	publish(t, b, publication(id2, id1, 0))
	p, rev2, err := b.Active()
	if err != nil || p.ManifestID != id2 || p.Previous != id1 || bytes.Equal(rev1, rev2) {
		t.Fatalf("after a second publish: %+v, revision changed %v, %v", p, !bytes.Equal(rev1, rev2), err)
	}
	vs, err := b.Versions()
	if err != nil || len(vs) != 2 || vs[0].ManifestID != id1 || vs[1].ManifestID != id2 || vs[0].Seq >= vs[1].Seq {
		t.Errorf("Versions = %+v, %v; want %s then %s", vs, err, id1, id2)
	}
	diff, err := b.ReadDiff(id1, id2)
	if err != nil || !bytes.Equal(diff, publication(id2, id1, 0).DiffBody) {
		t.Errorf("ReadDiff = %s, %v", diff, err)
	}
	if _, err := b.ReadDiff(id2, id1); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("a diff never stored: %v, want ErrNotFound", err)
	}
	if err := b.WriteDiff(id2, id1, []byte(`{"back":true}`)); err != nil {
		t.Fatal(err)
	}
	if d, err := b.ReadDiff(id2, id1); err != nil || string(d) != `{"back":true}` {
		t.Errorf("ReadDiff after WriteDiff = %s, %v", d, err)
	}
}

// lookup: a version is found by its ID in any letter case; an unknown one
// or malformed one is ErrNotFound to Lookup, ReadVersion and ReadDiff.
func lookup(t *testing.T, h Harness) {
	b := h.Open(t, "lookup")
	publish(t, b, publication(id1, "", 0))
	for _, in := range []string{id1, "00000000000000a1"} {
		if got, err := b.Lookup(in); err != nil || got != id1 {
			t.Errorf("Lookup(%q) = %q, %v", in, got, err)
		}
	}
	for _, in := range []string{"", "../00000000000000A1", "00000000000000A1/..", "%", "' OR 1=1 --", id2} {
		if _, err := b.Lookup(in); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("Lookup(%q): %v, want ErrNotFound", in, err)
		}
		if _, _, err := b.ReadVersion(in); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("ReadVersion(%q): %v, want ErrNotFound", in, err)
		}
		if _, err := b.ReadDiff(in, id1); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("ReadDiff(%q): %v, want ErrNotFound", in, err)
		}
	}
}

// refusals: a publish the store must refuse moves nothing and leaves nothing.
func refusals(t *testing.T, h Harness) {
	b := h.Open(t, "refusals")
	publish(t, b, publication(id1, "", 0))
	_, before, _ := b.Active()
	locked(t, b)
	bad := []store.Publication{
		publication(id1, "", 0),                // already stored
		publication("not-an-id", "", 0),        // not a manifest ID
		publication("00000000000000a1", "", 0), // lower case: not a manifest ID
	}
	escape := publication(id3, id1, 0)
	escape.Files = map[string][]byte{"../escape.json": []byte(`{}`)}
	bad = append(bad, escape)
	for _, reserved := range []string{"MANIFEST.json", "EDITION.pack"} {
		p := publication(id3, id1, 0)
		p.Files[reserved] = []byte(`{}`)
		bad = append(bad, p)
	}
	for _, p := range bad {
		if _, err := b.Publish(p); err == nil {
			t.Errorf("Publish(%s, %v) succeeded", p.ManifestID, slices.Sorted(maps.Keys(p.Files)))
		}
	}
	if _, after, err := b.Active(); err != nil || !bytes.Equal(before, after) {
		t.Errorf("a refused publish moved the pointer: %v", err)
	}
	if _, err := b.Lookup(id3); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("a refused publish left version %s: %v", id3, err)
	}
}

// retention: a publish prunes past Retain, with the pruned version's diffs.
func retention(t *testing.T, h Harness) {
	b := h.Open(t, "retention")
	publish(t, b, publication(id1, "", 2))
	publish(t, b, publication(id2, id1, 2))
	pruned := publish(t, b, publication(id3, id2, 2))
	if !slices.Equal(pruned, []string{id1}) {
		t.Errorf("pruned %v, want [%s]", pruned, id1)
	}
	if _, err := b.Lookup(id1); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("pruned version still there: %v", err)
	}
	if _, err := b.ReadDiff(id1, id2); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("diff from a pruned version: %v, want ErrNotFound", err)
	}
	if d, err := b.ReadDiff(id2, id3); err != nil || len(d) == 0 {
		t.Errorf("diff between retained versions: %v", err)
	}
}

// lock: the writer lock excludes another handle, names its holder, times
// out with its context, and passes to a waiter once released.
func lock(t *testing.T, h Harness) {
	a, b := h.Open(t, "lock"), h.Open(t, "lock")
	unlock, err := a.Lock(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if u, ok := b.TryLock(); ok {
		u()
		t.Fatal("TryLock took a held lock from another handle")
	}
	if holder := b.LockHolder(); holder == "" {
		t.Error("LockHolder does not name the holder")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	if u, err := b.Lock(ctx); err == nil {
		u()
		t.Fatal("Lock took a held lock")
	} else if !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("Lock past its deadline: %v, want one wrapping context.DeadlineExceeded", err)
	}
	// A waiter gets the lock once it is released.
	got := make(chan error, 1)
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		u, err := b.Lock(ctx)
		if err == nil {
			u()
		}
		got <- err
	}()
	unlock()
	if err := <-got; err != nil {
		t.Errorf("a waiter did not get the released lock: %v", err)
	}
}

// sharedHandles: another handle on the store sees what one published.
func sharedHandles(t *testing.T, h Harness) {
	writer, reader := h.Open(t, "shared"), h.Open(t, "shared")
	publish(t, writer, publication(id1, "", 0))
	if p, _, err := reader.Active(); err != nil || p.ManifestID != id1 {
		t.Errorf("another handle sees %+v, %v", p, err)
	}
	if _, files, err := reader.ReadVersion(id1); err != nil || len(files) != len(Files(id1)) {
		t.Errorf("another handle reads %d files, %v", len(files), err)
	}
}

// discard: Discard removes a version not active, with its diffs, and
// refuses the active one.
func discard(t *testing.T, h Harness) {
	b := h.Open(t, "discard")
	if b.Location() == "" {
		t.Error("Location is empty")
	}
	publish(t, b, publication(id1, "", 0))
	publish(t, b, publication(id2, id1, 0))
	locked(t, b)
	if err := b.Discard(id2); err == nil {
		t.Error("Discard removed the active version")
	}
	if err := b.Discard(id1); err != nil {
		t.Fatalf("Discard(%s): %v", id1, err)
	}
	if _, err := b.Lookup(id1); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("a discarded version is still there: %v", err)
	}
	if _, err := b.ReadDiff(id1, id2); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("the diff from a discarded version: %v", err)
	}
	if p, _, err := b.Active(); err != nil || p.ManifestID != id2 {
		t.Errorf("after Discard the active version is %+v, %v", p, err)
	}
}

// activateAndReplace: Activate moves the pointer to a stored version (a
// rollback, with its diff); a replacing publish (import --force) rewrites a
// stored version's files.
func activateAndReplace(t *testing.T, h Harness) {
	b := h.Open(t, "activate")
	publish(t, b, publication(id1, "", 0))
	publish(t, b, publication(id2, id1, 0))
	locked(t, b)
	if _, err := b.Activate(id3, nil, time.Now()); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("Activate of an unknown version: %v, want ErrNotFound", err)
	}
	back := []byte(`{"status":200,"data":{"rollback":true}}`)
	p, err := b.Activate(strings.ToLower(id1), back, time.Now())
	if err != nil || p.ManifestID != id1 || p.Previous != id2 || !p.Activated {
		t.Fatalf("Activate = %+v, %v", p, err)
	}
	if a, _, err := b.Active(); err != nil || a.ManifestID != id1 || a.Previous != id2 || !a.Activated {
		t.Errorf("after Activate the pointer is %+v, %v", a, err)
	}
	if d, err := b.ReadDiff(id2, id1); err != nil || !bytes.Equal(d, back) {
		t.Errorf("the rollback's diff: %s, %v", d, err)
	}
	// import --force: a stored version's files are replaced.
	re := publication(id2, id1, 0)
	re.Replace = true
	re.Files["en-US/weapons.json"] = []byte(`{"status":200,"data":[]}`)
	if _, err := b.Publish(re); err != nil {
		t.Fatalf("Publish with Replace: %v", err)
	}
	if _, files, err := b.ReadVersion(id2); err != nil || string(files["en-US/weapons.json"]) != `{"status":200,"data":[]}` {
		t.Errorf("after a replacing publish: %s, %v", files["en-US/weapons.json"], err)
	}
	if a, _, _ := b.Active(); a.ManifestID != id2 || a.Activated {
		t.Errorf("after a publish the pointer is %+v, want %s, not marked activated", a, id2)
	}
}

// syncState: a sync's state reads back as last written.
func syncState(t *testing.T, h Harness) {
	b := h.Open(t, "syncstate")
	if st, err := b.SyncState(); err != nil || st != nil {
		t.Errorf("SyncState of a new store = %q, %v; want nil", st, err)
	}
	for _, want := range []string{`{"etag":"a"}`, `{"etag":"b"}`} {
		if err := b.WriteSyncState([]byte(want)); err != nil {
			t.Fatal(err)
		}
		if got, err := b.SyncState(); err != nil || string(got) != want {
			t.Errorf("SyncState = %q, %v; want %s", got, err, want)
		}
	}
}

// damage: a damaged version is ErrCorrupt and ResolveIn falls back to the
// newest intact one, or ErrNotFound wrapping the damage.
func damage(t *testing.T, h Harness) {
	if h.Damage == nil {
		t.Skip("the harness cannot damage this backend")
	}
	b := h.Open(t, "damage")
	publish(t, b, publication(id1, "", 0))
	publish(t, b, publication(id2, id1, 0))
	h.Damage(t, b, id2, "en-US/weapons.json")
	if _, _, err := b.ReadVersion(id2); !errors.Is(err, store.ErrCorrupt) {
		t.Errorf("ReadVersion of a damaged version: %v, want ErrCorrupt", err)
	}
	p, why, err := store.ResolveIn(b)
	if err != nil || p.ManifestID != id1 || why == "" {
		t.Errorf("ResolveIn = %s, %q, %v; want the intact %s and a reason", p.ManifestID, why, err, id1)
	}
	h.Damage(t, b, id1, "en-US/weapons.json")
	if _, _, err := store.ResolveIn(b); !errors.Is(err, store.ErrNotFound) || !errors.Is(err, store.ErrCorrupt) {
		t.Errorf("ResolveIn with every version damaged: %v, want ErrNotFound wrapping the damage (ErrCorrupt)", err)
	}
}

// changes: a publish signals on Changes, after which Active names the new version.
func changes(t *testing.T, h Harness) {
	writer, reader := h.Open(t, "changes"), h.Open(t, "changes")
	n, ok := reader.(store.Notifier)
	if !ok {
		t.Skipf("%T says nothing of changes: replicas poll", reader)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	ch := n.Changes(ctx)
	wait := func(what string) {
		t.Helper()
		select {
		case _, open := <-ch:
			if !open {
				t.Fatalf("%s: Changes closed", what)
			}
		case <-time.After(30 * time.Second):
			t.Fatalf("%s: no signal in 30 s", what)
		}
	}
	wait("the first signal (listening; look now)")
	for _, ids := range [][2]string{{id1, ""}, {id2, id1}} {
		id := ids[0]
		publish(t, writer, publication(id, ids[1], 0))
		wait("a publish through another handle")
		if p, _, err := reader.Active(); err != nil || p.ManifestID != id {
			t.Errorf("after the signal Active = %+v, %v; want %s", p, err, id)
		}
	}
	cancel()
	for range ch { // closed once ctx ends
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

// readBlob reads the first blob of a segment the store keeps.
func readBlob(b store.Backend, seg *blob.Finished, n int) ([]byte, error) {
	s, err := b.Segment(seg.Sum, seg.Size, nil)
	if err != nil {
		return nil, err
	}
	return s.Read(int64(len(blob.Magic)), n, blob.Checksum(seg.Mem[len(blob.Magic):len(blob.Magic)+n]))
}

// editionIndex is the suite's test of what an import keeps with a version for
// the servers: its edition index, read back with the manifest and checked
// against both checksums, and its segments, stored once however many
// versions name them and swept once none does.
func editionIndex(t *testing.T, h Harness) {
	b := h.Open(t, "edition")
	publish(t, b, publication(id1, "", 0))
	if _, got, err := b.ReadIndex(id1, ""); !errors.Is(err, store.ErrCorrupt) {
		t.Errorf("ReadIndex of a version published without one: %q, %v; want ErrCorrupt", got, err)
	}
	segA, segB := segment(t, "body of "+id2), segment(t, "body of "+id3)
	p := publication(id2, id1, 3)
	want := []byte("refdata-index\n\x00index of " + id2)
	p.Index, p.Segments, p.Segment = want, []string{segA.Sum}, segA
	publish(t, b, p)
	ptr, _, err := b.Active()
	if err != nil {
		t.Fatal(err)
	}
	for _, sha := range []string{"", ptr.ManifestSHA256} {
		m, got, err := b.ReadIndex(strings.ToLower(id2), sha)
		if err != nil || !bytes.Equal(got, want) || m.ManifestID != id2 || !slices.Equal(m.Segments, p.Segments) {
			t.Errorf("ReadIndex(%q) = %s %v, %q, %v; want what was published", sha, m.ManifestID, m.Segments, got, err)
		}
	}
	if _, _, err := b.ReadIndex(id2, strings.Repeat("0", 64)); !errors.Is(err, store.ErrCorrupt) {
		t.Errorf("ReadIndex with another manifest checksum: %v, want ErrCorrupt", err)
	}
	if _, files, err := b.ReadVersion(id2); err != nil || !maps.EqualFunc(files, Files(id2), bytes.Equal) {
		t.Errorf("with an index stored, ReadVersion gave %v, %v; want the snapshot's files alone", slices.Sorted(maps.Keys(files)), err)
	}
	if got, err := readBlob(b, segA, len("body of "+id2)); err != nil || string(got) != "body of "+id2 {
		t.Errorf("a blob of the published segment: %q, %v", got, err)
	}
	if _, err := b.Segment(segB.Sum, segB.Size, nil); !errors.Is(err, store.ErrCorrupt) {
		t.Errorf("Segment of one never stored: %v, want ErrCorrupt", err)
	}
	if _, _, err := b.ReadIndex(id3, ""); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("ReadIndex of an unknown version: %v, want ErrNotFound", err)
	}
	// id3 names segA, stored already, and its own segB; id1 is pruned.
	q := publication(id3, id2, 2)
	q.Index, q.Segments, q.Segment = []byte("index of "+id3), []string{segA.Sum, segB.Sum}, segB
	publish(t, b, q)
	if got, err := readBlob(b, segB, len("body of "+id3)); err != nil || string(got) != "body of "+id3 {
		t.Errorf("a blob of the second segment: %q, %v", got, err)
	}
	// Once no version names segA, it is swept.
	r := publication(id1, id3, 1)
	r.Index, r.Segments = []byte("index of "+id1), []string{segB.Sum}
	publish(t, b, r)
	if _, _, err := b.ReadIndex(id2, ""); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("ReadIndex of a pruned version: %v, want ErrNotFound", err)
	}
	// Another handle (a replica started now; PostgreSQL's fetch from the
	// database into its own cache) finds it gone.
	if _, err := readBlob(h.Open(t, "edition"), segA, 1); !errors.Is(err, store.ErrCorrupt) {
		t.Errorf("a segment no retained version names: %v, want it swept (ErrCorrupt)", err)
	}
	if _, err := readBlob(b, segB, 1); err != nil {
		t.Errorf("a segment the active version names: %v", err)
	}
	if h.DamageIndex != nil {
		h.DamageIndex(t, b, id1)
		if _, _, err := b.ReadIndex(id1, ""); !errors.Is(err, store.ErrCorrupt) {
			t.Errorf("ReadIndex of a damaged index: %v, want ErrCorrupt", err)
		}
	}
	if h.DamageSegment != nil {
		h.DamageSegment(t, b, segB.Sum)
		if got, err := readBlob(h.Open(t, "edition"), segB, len("body of "+id3)); !errors.Is(err, store.ErrCorrupt) {
			t.Errorf("a damaged segment, read by another handle: %q, %v; want ErrCorrupt", got, err)
		}
	}
}
