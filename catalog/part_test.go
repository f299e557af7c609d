package catalog_test

import (
	"bytes"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/refdata/refdata/api/apitest"
	"github.com/refdata/refdata/catalog"
	"github.com/refdata/refdata/fixtures"
	"github.com/refdata/refdata/representation"
)

// versionFiles is sample version i's files, trimmed under -short (as
// protocolEdition's edition is).
func versionFiles(t testing.TB, i int) map[string][]byte {
	t.Helper()
	files, err := fixtures.Files(fixtures.Versions()[i], testing.Short())
	if err != nil {
		t.Fatal(err)
	}
	return files
}

// buildInParts builds files after prev the way a server and its builder
// process do: the plan and the part each go through their bytes.
func buildInParts(t testing.TB, files map[string][]byte, prev *catalog.Edition) (*catalog.Edition, []byte) {
	t.Helper()
	plan := catalog.PlanBuild(files, prev)
	var wire bytes.Buffer
	if err := catalog.WritePlan(&wire, plan); err != nil {
		t.Fatal(err)
	}
	got, err := catalog.ReadPlan(&wire, 1<<30)
	if err != nil {
		t.Fatal(err)
	}
	built, err := catalog.BuildPart(got)
	if err != nil {
		t.Fatal(err)
	}
	var part bytes.Buffer
	if err := catalog.WritePart(&part, built, got); err != nil {
		t.Fatal(err)
	}
	raw := bytes.Clone(part.Bytes())
	ed, err := catalog.ReadPart(&part, int64(part.Len()), plan, prev)
	if err != nil {
		t.Fatal(err)
	}
	return ed, raw
}

// TestPartMatchesInProcess: an edition built in parts (by a builder process)
// is, route by route and locale by locale, the edition this process would
// build and gzip: same bytes, languages, ETags and gzip bytes, the same
// version record and fills. Bodies the previous edition has are its own.
func TestPartMatchesInProcess(t *testing.T) {
	files := []map[string][]byte{versionFiles(t, 0), versionFiles(t, 1)}
	var prevHere, prevParts *catalog.Edition
	for i, f := range files {
		here, err := catalog.BuildFilesReusing(f, prevHere)
		if err != nil {
			t.Fatal(err)
		}
		if prevHere != nil {
			representation.Reuse(here.Bodies(), prevHere.Bodies())
		}
		representation.CompressGzipAll(here.Bodies())
		parts, _ := buildInParts(t, f, prevParts)
		apitest.SameEdition(t, here, parts)
		if prevParts != nil {
			shared := 0
			old := map[*representation.Body]bool{}
			for _, b := range prevParts.Bodies() {
				old[b] = true
			}
			for _, b := range parts.Bodies() {
				if old[b] {
					shared++
				}
			}
			if shared == 0 || shared == len(parts.Bodies()) {
				t.Errorf("version %d: %d of %d bodies are the previous edition's", i, shared, len(parts.Bodies()))
			}
		}
		prevHere, prevParts = here, parts
	}
}

// TestReadPartRejectsBrokenBytes: whatever a builder process writes — cut
// short, bytes changed, lengths past the bound — ReadPart returns an error or
// an edition whose every body is there; it never panics or reads past its
// limit.
func TestReadPartRejectsBrokenBytes(t *testing.T) {
	prev, err := catalog.BuildFiles(versionFiles(t, 0))
	if err != nil {
		t.Fatal(err)
	}
	files := versionFiles(t, 1)
	_, part := buildInParts(t, files, prev)
	plan := catalog.PlanBuild(files, prev)
	read := func(b []byte, limit int64) error {
		ed, err := catalog.ReadPart(bytes.NewReader(b), limit, plan, prev)
		if err == nil {
			apitest.Complete(t, ed)
		}
		return err
	}
	if err := read(part, int64(len(part))-1); err == nil {
		t.Error("a part one byte over the limit was read")
	}
	for _, cut := range []int{0, 1, 14, 15, 16, len(part) / 3, len(part) / 2, len(part) - 1} {
		if err := read(part[:cut], int64(len(part))); err == nil {
			t.Errorf("a part cut at %d of %d bytes was read", cut, len(part))
		}
	}
	if err := read(append(bytes.Clone(part), 0), int64(len(part))+1); err == nil {
		t.Error("a part with a byte after it was read")
	}
	huge := append([]byte("refdata-part/2\n"), 0xff, 0xff, 0xff, 0xf0)
	if err := read(huge, 1<<20); err == nil || !strings.Contains(err.Error(), "left") {
		t.Errorf("a 4 GB field within a 1 MB limit: %v", err)
	}
	// A body's ETag comes with it, and is refused unless it has the form
	// this program makes (a quote where its first one was, here).
	i := bytes.Index(part, []byte{0, 0, 0, 26, '"'})
	if i < 0 {
		t.Fatal("no ETag in the part")
	}
	bad := bytes.Clone(part)
	bad[i+4] = 'x'
	if err := read(bad, int64(len(bad))); err == nil || !strings.Contains(err.Error(), "ETag") {
		t.Errorf("a part with a broken ETag: %v", err)
	}
	rng := rand.New(rand.NewPCG(1, 2))
	failed, flips := 0, 300
	if !testing.Short() {
		flips = 30 // the full data: each read takes tens of milliseconds
	}
	for range flips {
		b := bytes.Clone(part)
		for range 1 + rng.IntN(4) {
			b[rng.IntN(len(b))] ^= byte(1 + rng.IntN(255))
		}
		if read(b, int64(len(b))) != nil {
			failed++
		}
	}
	// The trimmed part is small enough that some of 300 flips hit a length,
	// a count or an index; the full one is nearly all body bytes, which read.
	if failed == 0 && testing.Short() {
		t.Error("no changed part was rejected")
	}
}

// TestPartTakesUnchangedAllBodies: a builder process does not merge
// language=all again for an item whose 18 locale bodies are those the plan
// says its previous body was merged from; it takes the plan's bytes. An item
// whose locale bodies differ from the plan's digest is merged anew.
func TestPartTakesUnchangedAllBodies(t *testing.T) {
	prev, err := catalog.BuildFiles(versionFiles(t, 0))
	if err != nil {
		t.Fatal(err)
	}
	files := versionFiles(t, 1)
	want, err := catalog.BuildFilesReusing(files, prev)
	if err != nil {
		t.Fatal(err)
	}
	plan := catalog.PlanBuild(files, prev)
	// Two items of a rebuilt category whose language=all body is unchanged:
	// one keeps its digest and gets other bytes, one gets another digest.
	var c catalog.Category
	var kept, merged catalog.UUID
	found := false
	for _, c = range catalog.Categories() {
		var same []catalog.UUID
		for _, u := range want.UUIDs(c) {
			if _, ok := plan.All[c][u]; ok && want.Item(c, u, catalog.AllLocales) == prev.Item(c, u, catalog.AllLocales) {
				same = append(same, u)
			}
		}
		if len(same) >= 2 {
			kept, merged, found = same[0], same[1], true
			break
		}
	}
	if !found {
		t.Fatal("no rebuilt category has two unchanged items")
	}
	taken := []byte(`{"status":200,"data":{"uuid":"taken from the plan"}}`)
	a := plan.All[c][kept]
	a.JSON = taken
	plan.All[c][kept] = a
	a = plan.All[c][merged]
	a.Key[0] ^= 1
	a.JSON = taken
	plan.All[c][merged] = a

	part, err := catalog.BuildPart(plan)
	if err != nil {
		t.Fatal(err)
	}
	if got := part.Item(c, kept, catalog.AllLocales); !bytes.Equal(got.JSON, taken) || got.Lang != catalog.AllLanguages {
		t.Errorf("%s %s: language=all body %.80s (%q), want the plan's", c.Name(), kept, got.JSON, got.Lang)
	}
	if !bytes.Contains(part.List(c, catalog.AllLocales).JSON, []byte(`{"uuid":"taken from the plan"}`)) {
		t.Errorf("%s: the language=all list lacks the plan's item", c.Name())
	}
	if got, w := part.Item(c, merged, catalog.AllLocales), want.Item(c, merged, catalog.AllLocales); !bytes.Equal(got.JSON, w.JSON) {
		t.Errorf("%s %s: language=all body %.80s, want it merged anew: %.80s", c.Name(), merged, got.JSON, w.JSON)
	}
}

// BenchmarkReadPart: what a server does with a builder child's part for
// sample version 15 after 14 (the bodies' ETags, the tables), the part of a
// version's load left in the serving process.
func BenchmarkReadPart(b *testing.B) {
	prev, files := servedAndNext(b)
	_, raw := buildInParts(b, files, prev)
	plan := catalog.PlanBuild(files, prev)
	b.SetBytes(int64(len(raw)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := catalog.ReadPart(bytes.NewReader(raw), int64(len(raw)), plan, prev); err != nil {
			b.Fatal(err)
		}
	}
}

// servedAndNext is sample version 14 as a server has it (built, gzipped) and
// version 15's files, for the benchmarks of reading 15 after it.
func servedAndNext(b *testing.B) (*catalog.Edition, map[string][]byte) {
	b.Helper()
	prev, err := catalog.BuildFiles(versionFiles(b, 0))
	if err != nil {
		b.Fatal(err)
	}
	representation.CompressGzipAll(prev.Bodies())
	return prev, versionFiles(b, 1)
}
