package replica_test

import (
	"path/filepath"
	"testing"
	"time"

	"github.com/refdata/refdata/edition"
	"github.com/refdata/refdata/fixtures"
	"github.com/refdata/refdata/store"
)

// BenchmarkReadEdition: what a replica spends before a swap, reading a
// version's pack from the store (checksums checked) and decoding it into the
// edition it serves: the whole embedded version 15, every locale.
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
	b.SetBytes(int64(rep.EditionBytes))
	b.ReportAllocs()
	for b.Loop() {
		_, pack, err := st.ReadEdition(rep.ManifestID, "")
		if err != nil {
			b.Fatal(err)
		}
		ed, err := edition.Decode(pack)
		if err != nil {
			b.Fatal(err)
		}
		if ed.ManifestID != rep.ManifestID {
			b.Fatalf("decoded %s, want %s", ed.ManifestID, rep.ManifestID)
		}
	}
}
