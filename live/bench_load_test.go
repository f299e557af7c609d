package live_test

import (
	"path/filepath"
	"testing"

	"github.com/refdata/refdata/live"
	"github.com/refdata/refdata/pipeline"
	"github.com/refdata/refdata/store"
)

// BenchmarkLoadEdition: what a replica spends reading and rendering a real
// en-US version before a swap (the shared captures; skipped without them).
func BenchmarkLoadEdition(b *testing.B) {
	dirs, _ := filepath.Glob("../../shared/data/upstream-en-US/14_*")
	if len(dirs) == 0 {
		b.Skip("no ../shared/data captures")
	}
	st, err := store.Open(b.TempDir())
	if err != nil {
		b.Fatal(err)
	}
	res, err := pipeline.Import(st, dirs[0], pipeline.Options{})
	if err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	for b.Loop() {
		if _, _, err := live.LoadEdition(st, res.ManifestID); err != nil {
			b.Fatal(err)
		}
	}
}
