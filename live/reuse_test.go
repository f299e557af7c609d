package live_test

import (
	"bytes"
	"maps"
	"path/filepath"
	"testing"

	"github.com/refdata/refdata/catalog"
	"github.com/refdata/refdata/live"
	"github.com/refdata/refdata/pipeline"
	"github.com/refdata/refdata/representation"
	"github.com/refdata/refdata/store"
)

// TestLoadEditionAfterMatchesFull: an edition built reusing the previous one's
// unchanged catalogs (what a swap does) serves exactly the bodies a full build
// does, Fills included, and shares some of them with the previous edition.
// Versions in sequence: the sample's two, then the real en-US captures (the
// four newest under -short; none under the race detector), each reusing the
// edition before it as a long-running replica would.
func TestLoadEditionAfterMatchesFull(t *testing.T) {
	dirs := []string{fixtureDir(t, "14"), fixtureDir(t, "15")}
	captures, _ := filepath.Glob(filepath.Join("..", "..", "shared", "data", "upstream-en-US", "[0-9][0-9]_*"))
	switch {
	case raceOn:
		captures = nil
	case testing.Short() && len(captures) > 4:
		captures = captures[len(captures)-4:]
	}
	for _, seq := range [][]string{dirs, captures} {
		if len(seq) == 0 {
			continue
		}
		st, err := store.Open(t.TempDir())
		if err != nil {
			t.Fatal(err)
		}
		var prev *catalog.Edition
		for _, dir := range seq {
			rep, err := pipeline.Import(st, dir, pipeline.Options{AllowShrink: true})
			if err != nil {
				t.Fatalf("import %s: %v", dir, err)
			}
			reused, _, err := live.LoadEditionAfter(st, rep.ManifestID, prev)
			if err != nil {
				t.Fatal(err)
			}
			full, _, err := live.LoadEdition(st, rep.ManifestID)
			if err != nil {
				t.Fatal(err)
			}
			name := filepath.Base(dir)
			if !maps.Equal(reused.Fills, full.Fills) {
				t.Errorf("%s: Fills %v, a full build %v", name, reused.Fills, full.Fills)
			}
			a, b := reused.Bodies(), full.Bodies()
			if len(a) != len(b) {
				t.Fatalf("%s: %d bodies, a full build %d", name, len(a), len(b))
			}
			for i := range a {
				if !bytes.Equal(a[i].JSON, b[i].JSON) || a[i].ETag() != b[i].ETag() || a[i].Lang != b[i].Lang {
					t.Fatalf("%s: body %d differs from a full build's:\n%.200s\n%.200s", name, i, a[i].JSON, b[i].JSON)
				}
			}
			if prev != nil {
				old := map[*representation.Body]bool{}
				for _, body := range prev.Bodies() {
					old[body] = true
				}
				shared := 0
				for _, body := range a {
					if old[body] {
						shared++
					}
				}
				if shared == 0 {
					t.Errorf("%s: no body shared with the previous version", name)
				}
				t.Logf("%s: %d of %d bodies taken from the previous version", name, shared, len(a))
			}
			prev = reused
		}
	}
}
