package replica_test

import (
	"path/filepath"
	"testing"
	"time"

	"github.com/refdata/refdata/blob"
	"github.com/refdata/refdata/edition"
	"github.com/refdata/refdata/fixtures"
	"github.com/refdata/refdata/store"
)

// BenchmarkReadEdition: what a replica spends before a swap, reading a
// version's index from the store (checksums checked), opening the segments
// it names and decoding it into the edition it serves: the whole embedded
// version 15, every locale. Its bytes are the index's.
func BenchmarkReadEdition(b *testing.B) {
	dir := filepath.Join(b.TempDir(), "v15")
	if err := fixtures.Write(dir, "15", false); err != nil {
		b.Fatal(err)
	}
	st, err := store.Open(filepath.Join(b.TempDir(), "store"))
	if err != nil {
		b.Fatal(err)
	}
	rep, err := importAt(st, dir, time.Now())
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(rep.IndexBytes)
	b.ReportAllocs()
	cache := blob.NewCache(blob.DefaultCacheBytes)
	for b.Loop() {
		_, index, err := st.ReadIndex(rep.ManifestID, "")
		if err != nil {
			b.Fatal(err)
		}
		ed, err := edition.Decode(index, func(sum string, size int64) (*blob.Segment, error) {
			return st.Segment(sum, size, cache)
		})
		if err != nil {
			b.Fatal(err)
		}
		if ed.ManifestID != rep.ManifestID {
			b.Fatalf("decoded %s, want %s", ed.ManifestID, rep.ManifestID)
		}
	}
}
