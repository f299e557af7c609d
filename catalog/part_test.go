package catalog_test

import (
	"bytes"
	"io/fs"
	"math/rand/v2"
	"os"
	"path"
	"reflect"
	"strings"
	"testing"

	"github.com/refdata/refdata/catalog"
	"github.com/refdata/refdata/fixtures"
	"github.com/refdata/refdata/representation"
)

// versionFiles reads sample version i as a store holds it: slash paths to
// bytes (trimmed under -short, as protocolEdition is).
func versionFiles(t testing.TB, i int) map[string][]byte {
	t.Helper()
	fsys, dir := fs.FS(fixtures.FS), fixtures.Versions()[i]
	if testing.Short() {
		dir = t.TempDir()
		nn, _, _ := strings.Cut(path.Base(fixtures.Versions()[i]), "_")
		if err := fixtures.WriteSmall(dir, nn); err != nil {
			t.Fatal(err)
		}
		fsys, dir = os.DirFS(dir), "."
	}
	files := map[string][]byte{}
	err := fs.WalkDir(fsys, dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := fs.ReadFile(fsys, p)
		rel := strings.TrimPrefix(strings.TrimPrefix(p, dir), "/")
		files[rel] = b
		return err
	})
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
		sameEdition(t, here, parts)
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

func sameEdition(t *testing.T, want, got *catalog.Edition) {
	t.Helper()
	if want.ManifestID != got.ManifestID || !reflect.DeepEqual(want.Version, got.Version) {
		t.Fatalf("version record: %+v, want %+v", got.Version, want.Version)
	}
	if !reflect.DeepEqual(want.Fills, got.Fills) {
		t.Errorf("fills %v, want %v", got.Fills, want.Fills)
	}
	n := 0
	same := func(where string, w, g *representation.Body) {
		t.Helper()
		n++
		if w == nil || g == nil {
			if w != g {
				t.Fatalf("%s: body %v, want %v", where, g, w)
			}
			return
		}
		wz, wm := w.Gzipped()
		gz, gm := g.Gzipped()
		if !bytes.Equal(w.JSON, g.JSON) || w.Lang != g.Lang || w.ETag() != g.ETag() || wm != gm || !bytes.Equal(wz, gz) {
			t.Fatalf("%s: body differs (lang %q/%q, %d/%d bytes, gzip %d/%d bytes)", where, g.Lang, w.Lang, len(g.JSON), len(w.JSON), len(gz), len(wz))
		}
	}
	same("version", want.VersionBody(), got.VersionBody())
	same("locres", want.LocresList(), got.LocresList())
	for loc := range catalog.NumLocales {
		same("locres "+catalog.Locales[loc], want.Locres(loc), got.Locres(loc))
	}
	for _, c := range catalog.Categories() {
		if !reflect.DeepEqual(want.UUIDs(c), got.UUIDs(c)) {
			t.Fatalf("%s: items differ", c.Name())
		}
		for loc := range catalog.NumLocales + 1 {
			same(c.Name(), want.List(c, loc), got.List(c, loc))
			for _, u := range want.UUIDs(c) {
				same(c.Name()+"/"+u.String(), want.Item(c, u, loc), got.Item(c, u, loc))
			}
		}
	}
	if n < 1000 {
		t.Errorf("only %d bodies compared", n)
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
			complete(t, ed)
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
	huge := append([]byte("refdata-part/1\n"), 0xff, 0xff, 0xff, 0xf0)
	if err := read(huge, 1<<20); err == nil || !strings.Contains(err.Error(), "left") {
		t.Errorf("a 4 GB field within a 1 MB limit: %v", err)
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
	if failed == 0 {
		t.Error("no changed part was rejected")
	}
}

// complete fails unless every route of ed has its body.
func complete(t *testing.T, ed *catalog.Edition) {
	t.Helper()
	if ed.VersionBody() == nil || ed.LocresList() == nil {
		t.Fatal("version or locres body missing")
	}
	for loc := range catalog.NumLocales {
		if ed.Locres(loc) == nil {
			t.Fatal("locres body missing")
		}
	}
	for _, c := range catalog.Categories() {
		for loc := range catalog.NumLocales + 1 {
			if ed.List(c, loc) == nil {
				t.Fatalf("%s list missing", c.Name())
			}
			for _, u := range ed.UUIDs(c) {
				if ed.Item(c, u, loc) == nil {
					t.Fatalf("%s/%s missing", c.Name(), u)
				}
			}
		}
	}
}
