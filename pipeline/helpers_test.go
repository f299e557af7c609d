package pipeline_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/refdata/refdata/api/apitest"
	"github.com/refdata/refdata/edition"
	"github.com/refdata/refdata/fixtures"
	"github.com/refdata/refdata/pipeline"
	"github.com/refdata/refdata/store"
	"github.com/refdata/refdata/store/storetest"
)

// fixtureDir copies an embedded sample version (trimmed under -short) (by NN prefix, "14" or "15") into
// a temporary directory, so a test can import or damage it.
func fixtureDir(t testing.TB, nn string) string {
	t.Helper()
	dst := filepath.Join(t.TempDir(), "v"+nn)
	// Trimmed under -short: the protocol at a fraction of the size.
	if err := fixtures.Write(dst, nn, testing.Short()); err != nil {
		t.Fatal(err)
	}
	if !testing.Short() {
		// Storage and swapping, not translations: skip most skin names.
		if err := fixtures.Lighten(dst); err != nil {
			t.Fatal(err)
		}
	}
	return dst
}

// copyDir copies a directory tree (writable copies).
func copyDir(t testing.TB, src, dst string) {
	t.Helper()
	if err := os.CopyFS(dst, os.DirFS(src)); err != nil {
		t.Fatal(err)
	}
}

// treeHash is storetest.TreeHash: every file of a store and its SHA-256.
var treeHash = storetest.TreeHash

func openStore(t testing.TB, dir string) *store.Store {
	t.Helper()
	st, err := store.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	return st
}

// options is the Options tests import with: bodies compressed at
// apitest.Effort (Fast with -short).
func options() pipeline.Options {
	return pipeline.Options{Effort: apitest.Effort()}
}

// loadEdition reads a stored version's edition pack and decodes it, as a
// server loads it.
func loadEdition(st store.Backend, id string) (*edition.Edition, store.Manifest, error) {
	m, pack, err := st.ReadEdition(id, "")
	if err != nil {
		return nil, m, err
	}
	ed, err := edition.Decode(pack)
	return ed, m, err
}

func mustImport(t testing.TB, st *store.Store, dir string) *pipeline.Report {
	t.Helper()
	rep, err := pipeline.Import(st, dir, options())
	if err != nil {
		var b strings.Builder
		rep.Write(&b)
		t.Fatalf("import %s: %v\n%s", dir, err, b.String())
	}
	return rep
}
