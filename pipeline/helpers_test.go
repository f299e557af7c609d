package pipeline_test

import (
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/refdata/refdata/blob"
	"github.com/refdata/refdata/catalog"
	"github.com/refdata/refdata/edition"
	"github.com/refdata/refdata/fixtures"
	"github.com/refdata/refdata/pipeline"
	"github.com/refdata/refdata/representation"
	"github.com/refdata/refdata/router/apitest"
	"github.com/refdata/refdata/store"
	"github.com/refdata/refdata/store/storetest"
)

// fixtureDir copies an embedded sample version (trimmed under -short) (by NN prefix, "14" or "15") into
// a temporary directory, so a test can import or damage it.
func fixtureDir(t testing.TB, nn string) string {
	t.Helper()
	dst := filepath.Join(t.TempDir(), "v"+nn)
	if err := writeFixture(dst, nn); err != nil {
		t.Fatal(err)
	}
	return dst
}

func writeFixture(dst, nn string) error {
	// Trimmed under -short: the protocol at a fraction of the size.
	if err := fixtures.Write(dst, nn, testing.Short()); err != nil || testing.Short() {
		return err
	}
	// Storage and swapping, not translations: skip most skin names.
	return fixtures.Lighten(dst)
}

// sharedDir holds what the tests share; TestMain makes and removes it.
var sharedDir string

// sampleStores holds, per sample version, a store in which it alone is
// active, imported once for every test that starts from it (an import renders
// and compresses a whole version). Tests copy it and never write to it.
var sampleStores = map[string]func() (string, error){"14": sampleStore("14"), "15": sampleStore("15")}

func sampleStore(nn string) func() (string, error) {
	return sync.OnceValues(func() (string, error) {
		dir, snap := filepath.Join(sharedDir, "store"+nn), filepath.Join(sharedDir, "v"+nn)
		if err := writeFixture(snap, nn); err != nil {
			return "", err
		}
		st, err := store.Open(dir)
		if err == nil {
			_, err = pipeline.Import(st, snap, options())
		}
		return dir, err
	})
}

// baseStore is the sample store of version nn, read-only, and the manifestId
// of its active version.
func baseStore(t testing.TB, nn string) (dir, active string) {
	t.Helper()
	dir, err := sampleStores[nn]()
	if err != nil {
		t.Fatalf("import sample version %s: %v", nn, err)
	}
	p, _, err := openStore(t, dir).Active()
	if err != nil {
		t.Fatal(err)
	}
	return dir, p.ManifestID
}

// storeFrom is a writable copy of the sample store of version nn.
func storeFrom(t testing.TB, nn string) string {
	t.Helper()
	base, _ := baseStore(t, nn)
	dir := filepath.Join(t.TempDir(), "store")
	copyDir(t, base, dir)
	return dir
}

// copyDir copies a directory tree (writable copies).
func copyDir(t testing.TB, src, dst string) {
	t.Helper()
	if err := os.CopyFS(dst, os.DirFS(src)); err != nil {
		t.Fatal(err)
	}
}

// treeHash is storetest.TreeHash: every file of a store and a hash of it.
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
// apitest.Effort (Fast with -short), bulk files made, so every route of an
// edition is there to compare.
func options() pipeline.Options {
	return pipeline.Options{Effort: apitest.Effort(), Bulk: true}
}

// loadEdition reads a stored version's edition index and decodes it,
// opening its segments from the store, as a server loads it.
func loadEdition(st store.Backend, id string) (*edition.Edition, store.Manifest, error) {
	m, index, err := st.ReadIndex(id, "")
	if err != nil {
		return nil, m, err
	}
	ed, err := decodeFrom(st, index)
	return ed, m, err
}

// decodeFrom decodes an index stored in st, its segments opened from st.
func decodeFrom(st store.Backend, index []byte) (*edition.Edition, error) {
	return edition.Decode(index, func(sum string, size int64) (*blob.Segment, error) { return st.Segment(sum, size, nil) })
}

// bodiesOf lists the distinct bodies ed serves on any route: an edition read
// from an index makes a body when a route first needs it.
func bodiesOf(ed *edition.Edition) []*representation.Body {
	seen := map[*representation.Body]bool{}
	var out []*representation.Body
	add := func(b *representation.Body) {
		if b != nil && !seen[b] {
			seen[b] = true
			out = append(out, b)
		}
	}
	add(ed.VersionBody())
	add(ed.LocresList())
	for loc := range catalog.NumLocales {
		add(ed.Locres(loc))
	}
	for _, c := range catalog.Categories() {
		for loc := range catalog.NumLocales + 1 {
			add(ed.List(c, loc))
			for _, f := range c.Filters() {
				add(ed.Filtered(c, f, false, loc))
				add(ed.Filtered(c, f, true, loc))
			}
			for _, u := range ed.UUIDs(c) {
				add(ed.Item(c, u, loc))
			}
		}
	}
	for loc := range catalog.NumLocales + 1 {
		add(ed.Bulk(loc))
	}
	return out
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
