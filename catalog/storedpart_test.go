package catalog_test

import (
	"errors"
	"testing"

	"github.com/refdata/refdata/api/apitest"
	"github.com/refdata/refdata/catalog"
	"github.com/refdata/refdata/representation"
)

// TestStoredPartMatchesInProcess: a part an import stored, read by a server
// after its own edition of the previous version, is the edition the server
// would have built itself — also when that edition shares bodies differently
// from the import's (a server's went through parts and Reuse, the import's
// was built from the files alone).
func TestStoredPartMatchesInProcess(t *testing.T) {
	f0, f1 := versionFiles(t, 0), versionFiles(t, 1)
	imported, err := catalog.BuildFiles(f0) // what an import builds the part after
	if err != nil {
		t.Fatal(err)
	}
	stored, err := catalog.BuildStoredPart(f1, imported)
	if err != nil {
		t.Fatal(err)
	}

	// The server's edition of version 0 was built in parts after version 1
	// (a rollback): it holds version 1's bodies where the bytes are the same.
	later, err := catalog.BuildFiles(f1)
	if err != nil {
		t.Fatal(err)
	}
	representation.CompressGzipAll(later.Bodies())
	served, _ := buildInParts(t, f0, later)
	here, err := catalog.BuildFilesReusing(f1, served)
	if err != nil {
		t.Fatal(err)
	}
	representation.Reuse(here.Bodies(), served.Bodies())
	representation.CompressGzipAll(here.Bodies())

	got, err := catalog.ReadStoredPart(stored, f1, served)
	if err != nil {
		t.Fatal(err)
	}
	apitest.SameEdition(t, here, got)
}

// TestStoredPartRefusesAnotherEdition: a stored part read after an edition it
// was not built after, or at another gzip level, is refused with
// ErrPartMismatch (the server then builds the version itself); broken bytes
// are an error of another kind, never a panic or an edition with holes.
func TestStoredPartRefusesAnotherEdition(t *testing.T) {
	f0, f1 := versionFiles(t, 0), versionFiles(t, 1)
	ed0, err := catalog.BuildFiles(f0)
	if err != nil {
		t.Fatal(err)
	}
	ed1, err := catalog.BuildFiles(f1)
	if err != nil {
		t.Fatal(err)
	}
	stored, err := catalog.BuildStoredPart(f1, ed0)
	if err != nil {
		t.Fatal(err)
	}
	mismatch := map[string]func() (*catalog.Edition, error){
		"after another version": func() (*catalog.Edition, error) { return catalog.ReadStoredPart(stored, f1, ed1) },
		"with no edition":       func() (*catalog.Edition, error) { return catalog.ReadStoredPart(stored, f1, nil) },
		"for other files":       func() (*catalog.Edition, error) { return catalog.ReadStoredPart(stored, f0, ed0) },
		"at another gzip level": func() (*catalog.Edition, error) {
			other := representation.CurrentEffort()
			other.Gzip = other.Gzip%9 + 1
			defer representation.UseEffort(other)()
			return catalog.ReadStoredPart(stored, f1, ed0)
		},
	}
	for name, read := range mismatch {
		if ed, err := read(); !errors.Is(err, catalog.ErrPartMismatch) {
			t.Errorf("%s: %v, %v; want ErrPartMismatch", name, ed != nil, err)
		}
	}
	if _, err := catalog.ReadStoredPart(stored, f1, ed0); err != nil {
		t.Fatalf("the edition it was built after: %v", err)
	}
	for _, cut := range []int{0, 10, len(stored) / 3, len(stored) - 1} {
		ed, err := catalog.ReadStoredPart(stored[:cut], f1, ed0)
		if err == nil || errors.Is(err, catalog.ErrPartMismatch) || ed != nil {
			t.Errorf("cut to %d bytes: %v, %v; want a read error", cut, ed != nil, err)
		}
	}
}

// BenchmarkReadStoredPart: what a replica does at a swap with the part an
// import stored for sample version 15 after 14: read it beside the edition it
// serves (the previous one's list of bodies made once, as a server has it).
func BenchmarkReadStoredPart(b *testing.B) {
	prev, files := servedAndNext(b)
	raw, err := catalog.BuildStoredPart(files, prev)
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(len(raw)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := catalog.ReadStoredPart(raw, files, prev); err != nil {
			b.Fatal(err)
		}
	}
}
