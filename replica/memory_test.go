package replica_test

import (
	"log/slog"
	"runtime"
	"testing"

	"github.com/refdata/refdata/blob"
	"github.com/refdata/refdata/edition"
	"github.com/refdata/refdata/replica"
	"github.com/refdata/refdata/router/apitest"
)

// TestOpenReadsIndexNotBodies: a replica holds a version's index and reads a
// body when a request needs it, so opening a store (serving 15) and reading
// a retained version for a pinned request (14) keep a small part of the
// bytes of the versions' bodies and allocate less than those bytes, where a
// replica that made every body at load (its edition pack read whole) kept
// and allocated all of them. Not parallel: it measures the heap.
func TestOpenReadsIndexNotBodies(t *testing.T) {
	e := &env{logs: new(syncBuffer)}
	e.dir, e.st = copyStore(t, 2)
	logger := slog.New(slog.NewTextHandler(e.logs, nil))
	var before, opened, pinned runtime.MemStats
	measure := func(m *runtime.MemStats) {
		// Twice: what sync.Pools held survives one collection.
		runtime.GC()
		runtime.GC()
		runtime.ReadMemStats(m)
	}
	measure(&before)
	repo, err := replica.Open(e.st, logger, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	measure(&opened)
	old, err := repo.RetainedEdition(id14)
	if err != nil {
		t.Fatal(err)
	}
	measure(&pinned)
	ed := repo.Active()
	if ed.ManifestID != id15 || old.ManifestID != id14 {
		t.Fatalf("serving %s, pinned %s", ed.ManifestID, old.ManifestID)
	}
	grew := func(a, b uint64) uint64 { return b - min(a, b) }
	for _, tc := range []struct {
		what            string
		ed              *edition.Edition
		allocated, kept uint64
	}{
		{"Open serving " + id15, ed, opened.TotalAlloc - before.TotalAlloc, grew(before.HeapAlloc, opened.HeapAlloc)},
		{"RetainedEdition(" + id14 + ")", old, pinned.TotalAlloc - opened.TotalAlloc, grew(opened.HeapAlloc, pinned.HeapAlloc)},
	} {
		identity, gz, br := tc.ed.Sizes()
		bodies := uint64(identity + gz + br)
		t.Logf("%s: bodies of %d bytes in all encodings; %d bytes allocated, %d kept", tc.what, bodies, tc.allocated, tc.kept)
		if tc.kept > bodies/10 || tc.allocated > bodies {
			t.Errorf("%s kept %d bytes and allocated %d, for bodies of %d bytes: want under a tenth kept, and less allocated than reading each once", tc.what, tc.kept, tc.allocated, bodies)
		}
	}
	runtime.KeepAlive(repo)
	runtime.KeepAlive(old)
}

// TestEditionsShareSegments: two versions that name one segment (synthetic
// 3, 15 with a weapon renamed, reuses 15's unchanged bodies where 15's
// import stored them) are served from one open blob.Segment, whose cache
// entries they share; and a segment is opened once for its version's every
// body. (15 after the trimmed 14 names too little of 14's segment to keep
// it: its bulk files are 40 % of it, and all change.)
func TestEditionsShareSegments(t *testing.T) {
	t.Parallel()
	e := newEnv(t, 3)
	cur := e.repo.Active()
	old, err := e.repo.RetainedEdition(id15)
	if err != nil {
		t.Fatal(err)
	}
	segmentsOf := func(ed *edition.Edition) map[string]*blob.Segment {
		segs := map[string]*blob.Segment{}
		for _, b := range apitest.Bodies(ed) {
			for _, enc := range b.Representations() {
				s := enc.Source().Seg
				if s == nil {
					continue
				}
				if prev, ok := segs[s.Sum]; ok && prev != s {
					t.Fatalf("%s: segment %s opened twice", ed.ManifestID, s.Sum)
				}
				segs[s.Sum] = s
			}
		}
		return segs
	}
	have, had := segmentsOf(cur), segmentsOf(old)
	if len(have) == 0 || len(had) == 0 {
		t.Fatalf("segments: %d of %s, %d of %s; the versions' bodies are not read from the store", len(have), id3, len(had), id15)
	}
	shared := 0
	for sum, s := range had {
		if o, ok := have[sum]; ok {
			shared++
			if o != s {
				t.Errorf("segment %s: %s and %s each opened it", sum, id3, id15)
			}
		}
	}
	if shared == 0 {
		t.Errorf("%s and %s share no segment: the test shows nothing", id3, id15)
	}
	if own := ownSegment(t, e, id15, id3); have[own] == nil {
		t.Errorf("%s's own segment %s serves none of its bodies", id3, own)
	}
}
