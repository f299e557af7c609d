package catalog_test

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"io"
	"maps"
	"reflect"
	"slices"
	"strings"
	"testing"
	"testing/fstest"
	"time"

	"github.com/refdata/refdata/catalog"
	"github.com/refdata/refdata/fixtures"
	"github.com/refdata/refdata/gen"
)

func TestIsManifestID(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		id   string
		want bool
	}{
		{"05E83EB5E32657B9", true},
		{"0123456789ABCDEF", true},
		{"05e83eb5e32657b9", false}, // canonical form is upper case
		{"05E83EB5E32657B", false},
		{"05E83EB5E32657B90", false},
		{"05E83EB5E32657BG", false},
		{"../../etc/passwd", false},
		{"", false},
	} {
		if got := catalog.IsManifestID(tc.id); got != tc.want {
			t.Errorf("IsManifestID(%q) = %v, want %v", tc.id, got, tc.want)
		}
	}
}

// TestContentHash: the hash is the documented formula over the sorted
// "<path> <sha256>" lines, FileHashes feeds it from a directory, and one changed
// byte changes it.
func TestContentHash(t *testing.T) {
	t.Parallel()
	fsys := fstest.MapFS{
		"v/version.json":        {Data: []byte(`{"a":1}`)},
		"v/en-US/weapons.json":  {Data: []byte(`[]`)},
		"v/de-DE/weapons.json":  {Data: []byte(`[{}]`)},
		"other/ignored.json":    {Data: []byte(`x`)},
		"v/en-US/playercards.j": {Data: []byte(``)},
	}
	sums, err := catalog.FileHashes(fsys, "v")
	if err != nil {
		t.Fatal(err)
	}
	names := []string{"de-DE/weapons.json", "en-US/playercards.j", "en-US/weapons.json", "version.json"}
	if got := slices.Sorted(maps.Keys(sums)); !slices.Equal(got, names) {
		t.Fatalf("FileHashes names %q, want %q", got, names)
	}
	var lines strings.Builder
	for _, n := range names {
		s := sha256.Sum256(fsys["v/"+n].Data)
		if sums[n] != hex.EncodeToString(s[:]) {
			t.Errorf("%s: sum %s", n, sums[n])
		}
		lines.WriteString(n + " " + hex.EncodeToString(s[:]) + "\n")
	}
	want := sha256.Sum256([]byte(lines.String()))
	got := catalog.ContentHash(sums)
	if got != "sha256:"+hex.EncodeToString(want[:]) {
		t.Errorf("ContentHash = %s, want sha256 of the sorted lines", got)
	}
	fsys["v/version.json"] = &fstest.MapFile{Data: []byte(`{"a":2}`)}
	sums2, err := catalog.FileHashes(fsys, "v")
	if err != nil {
		t.Fatal(err)
	}
	if catalog.ContentHash(sums2) == got {
		t.Error("a changed file left the content hash unchanged")
	}
	if _, err := catalog.FileHashes(fsys, "missing"); err == nil || !strings.Contains(err.Error(), "missing") {
		t.Errorf("FileHashes of a missing dir: %v", err)
	}
}

// TestWriteArchiveIsReproducible: the export archive is the same bytes for the
// same files, whatever the map order, and reads back as sorted regular files
// with mode 0644 and the epoch as modification time.
func TestWriteArchiveIsReproducible(t *testing.T) {
	t.Parallel()
	files := map[string][]byte{
		"version.json":         []byte(`{"manifestId":"X"}`),
		"en-US/weapons.json":   bytes.Repeat([]byte("w"), 70000),
		"de-DE/weapons.json":   []byte(`[]`),
		"en-US/playercards.js": {},
	}
	var a, b bytes.Buffer
	if err := catalog.WriteArchive(&a, files); err != nil {
		t.Fatal(err)
	}
	if err := catalog.WriteArchive(&b, files); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(a.Bytes(), b.Bytes()) {
		t.Fatal("two archives of the same files differ")
	}
	zr, err := gzip.NewReader(&a)
	if err != nil {
		t.Fatal(err)
	}
	tr := tar.NewReader(zr)
	var names []string
	for {
		h, err := tr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		body, err := io.ReadAll(tr)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(body, files[h.Name]) {
			t.Errorf("%s: %d bytes back, want %d", h.Name, len(body), len(files[h.Name]))
		}
		if h.Typeflag != tar.TypeReg || h.Mode != 0o644 || !h.ModTime.Equal(time.Unix(0, 0)) || h.Uid != 0 || h.Uname != "" {
			t.Errorf("%s: header %+v", h.Name, h)
		}
		names = append(names, h.Name)
	}
	if !slices.IsSorted(names) || len(names) != len(files) {
		t.Errorf("entries %q: want every file, sorted", names)
	}
	if err := catalog.WriteArchive(failWriter{}, files); err == nil {
		t.Error("a failing writer gave no error")
	}
}

type failWriter struct{}

func (failWriter) Write([]byte) (int, error) { return 0, errors.New("disk full") }

// TestSplitAll: items captured with language=all (what the language=all body
// serves) split back into the en-US items and one overlay per locale that,
// laid over them by the translation rule, gives that locale's items.
func TestSplitAll(t *testing.T) {
	t.Parallel()
	r := rendered(t, fixtures.Versions()[1])
	data := func(b *catalog.Doc) []any {
		var env struct{ Data []any }
		if err := json.Unmarshal(b.Bytes(), &env); err != nil {
			t.Fatal(err)
		}
		return env.Data
	}
	for _, c := range []catalog.Category{catalog.Weapons, catalog.Buddies, catalog.Agents, catalog.Maps} {
		all := data(list(r, c, catalog.AllLocales))
		en, overlays, ok, err := catalog.SplitAll(c, all)
		if err != nil || !ok {
			t.Fatalf("%s: ok %v, err %v", c.Name(), ok, err)
		}
		if want := data(list(r, c, catalog.DefaultLocale)); !reflect.DeepEqual(en, want) {
			t.Errorf("%s: the en-US part differs from the en-US body", c.Name())
		}
		if len(overlays) != catalog.NumLocales-1 {
			t.Errorf("%s: %d overlays, want %d", c.Name(), len(overlays), catalog.NumLocales-1)
		}
		for loc, lang := range catalog.Locales {
			if loc == catalog.DefaultLocale {
				continue
			}
			got := catalog.Translate(en, overlays[lang])
			if want := data(list(r, c, loc)); !reflect.DeepEqual(got, want) {
				t.Errorf("%s %s: en-US with the overlay differs from the %s body", c.Name(), lang, lang)
			}
		}
		// Items in one locale are not language=all: returned as they are.
		one := data(list(r, c, catalog.DefaultLocale))
		same, none, ok, err := catalog.SplitAll(c, one)
		if err != nil || ok || none != nil || !reflect.DeepEqual(same, one) {
			t.Errorf("%s: SplitAll of en-US items: ok %v, overlays %d, err %v", c.Name(), ok, len(none), err)
		}
	}
}

func TestCategoryNamed(t *testing.T) {
	t.Parallel()
	for _, c := range catalog.Categories() {
		if got, ok := catalog.CategoryNamed(c.Name()); !ok || got != c {
			t.Errorf("CategoryNamed(%q) = %v, %v", c.Name(), got, ok)
		}
	}
	for _, name := range []string{"", "weapon", "weapons/", "../weapons", "WEAPONS"} {
		if _, ok := catalog.CategoryNamed(name); ok {
			t.Errorf("CategoryNamed(%q) found a category", name)
		}
	}
}

// TestDiffBody: the diff body is the spec's envelope around the diff it was
// given, with every category present.
func TestDiffBody(t *testing.T) {
	t.Parallel()
	title := tinyBase
	title.title = "New"
	d, err := catalog.Diff(tinyBase.render(t, "000000000000000A"), title.render(t, "000000000000000B"), time.Unix(1e9, 0))
	if err != nil {
		t.Fatal(err)
	}
	b, err := catalog.DiffBody(d)
	if err != nil {
		t.Fatal(err)
	}
	var env struct {
		Status int
		Data   gen.Diff
	}
	if err := json.Unmarshal(b, &env); err != nil || env.Status != 200 || !reflect.DeepEqual(env.Data, d) {
		t.Errorf("diff body %s (%v), want the diff %+v", b, err, d)
	}
	if d.Summary.TotalChanged != 1 || d.GeneratedAt != "2001-09-09T01:46:40Z" {
		t.Errorf("diff %+v", d)
	}
	// The body is what the spec's /v1/diff response holds.
	doc, err := catalog.Spec()
	if err != nil {
		t.Fatal(err)
	}
	var v any
	if err := json.Unmarshal(b, &v); err != nil {
		t.Fatal(err)
	}
	if err := doc.Components.Schemas["DiffBody"].Value.VisitJSON(v); err != nil {
		t.Errorf("diff body does not match DiffBody: %v", err)
	}
	if bytes.HasSuffix(b, []byte("\n")) {
		t.Error("diff body ends with a newline")
	}
}

// TestRepair: null elements of nested arrays of objects are removed and each
// is reported where it was, in a snapshot decoded whole and in one decoded
// lazily (LoadLazy); arrays of other things are left alone; a second Repair
// of the whole one finds nothing.
func TestRepair(t *testing.T) {
	t.Parallel()
	weapons := `[{"uuid":"u1","skins":[{"uuid":"s1","chromas":[null,{"uuid":"c1"},null]},null],"tags":["a",null],"a/b~c":[{},null]}]`
	files := map[string][]byte{
		"version.json":       []byte(`{"manifestId":"0000000000000001"}`),
		"en-US/weapons.json": []byte(weapons),
	}
	lazy, err := catalog.LoadLazy(maps.Clone(files))
	if err != nil {
		t.Fatal(err)
	}
	s, err := catalog.LoadFiles(files)
	if err != nil {
		t.Fatal(err)
	}
	lazyNotes, notes := catalog.Repair(lazy), catalog.Repair(s)
	if !reflect.DeepEqual(lazyNotes, notes) {
		t.Errorf("decoded lazily, repairs\n%v\ndecoded whole\n%v", lazyNotes, notes)
	}
	var got []string
	for _, p := range notes {
		got = append(got, p.String())
	}
	want := []string{
		"en-US/weapons.json uuid u1 at /0/a~1b~0c/1: null array element removed", // RFC 6901 escapes
		"en-US/weapons.json uuid u1 at /0/skins/1: null array element removed",
		"en-US/weapons.json uuid u1 at /0/skins/0/chromas/0: null array element removed",
		"en-US/weapons.json uuid u1 at /0/skins/0/chromas/2: null array element removed",
	}
	if !slices.Equal(got, want) {
		t.Errorf("notes\n%q\nwant\n%q", got, want)
	}
	w := s.Sources[catalog.Weapons][0].(map[string]any)
	skins := w["skins"].([]any)
	if len(skins) != 1 || len(skins[0].(map[string]any)["chromas"].([]any)) != 1 || len(w["tags"].([]any)) != 2 {
		t.Errorf("after repair: %v", w)
	}
	if again := catalog.Repair(s); len(again) != 0 {
		t.Errorf("second repair: %v", again)
	}
	if got := (catalog.Problem{File: "version.json", Reason: "r"}).String(); got != "version.json at /: r" {
		t.Errorf("Problem without uuid and pointer: %q", got)
	}
}

// TestNestedIdentities: every uuid served by itself (skins, chromas, levels of
// weapons and buddies) must be present, well-formed and unique in its category.
func TestNestedIdentities(t *testing.T) {
	t.Parallel()
	const u1, u2, u3 = "00000000-0000-0000-0000-000000000001", "00000000-0000-0000-0000-000000000002", "00000000-0000-0000-0000-000000000003"
	weapons := `[{"uuid":"` + u1 + `","skins":[
		{"uuid":"` + u2 + `","chromas":[{"uuid":"not-a-uuid"}],"levels":[{"displayName":"L"}]},
		{"uuid":"` + u2 + `","chromas":[],"levels":[]}]}]`
	buddies := `[{"uuid":"` + u3 + `","levels":[{"uuid":"` + u1 + `"},{"uuid":"` + u1 + `"}]}]`
	fsys := fstest.MapFS{
		"version.json":         {Data: []byte(`{"manifestId":"ABC","branch":"b","version":"v","buildVersion":"1","buildDate":"d"}`)},
		"en-US/weapons.json":   {Data: []byte(weapons)},
		"en-US/buddies.json":   {Data: []byte(buddies)},
		"de-DE/weapons.json":   {Data: []byte(`not json`)},
		"en-US/playertitles.j": {Data: []byte(``)},
	}
	if _, err := catalog.LoadSnapshot(fsys, "."); err == nil {
		t.Fatal("a file that is not JSON loaded")
	} else if fe := (*catalog.FileError)(nil); !errors.As(err, &fe) || fe.File != "de-DE/weapons.json" || errors.Unwrap(fe) == nil {
		t.Errorf("error %v does not name de-DE/weapons.json as a FileError", err)
	}
	delete(fsys, "de-DE/weapons.json")
	snap, err := catalog.LoadSnapshot(fsys, ".")
	if err != nil {
		t.Fatal(err)
	}
	v, err := catalog.Validate(snap)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, p := range v.Rejections {
		if strings.Contains(p.Reason, "uuid") {
			got = append(got, p.File+" "+p.Pointer)
		}
	}
	for _, want := range []string{
		"en-US/weapons.json /0/skins/0/chromas/0/uuid", // malformed
		"en-US/weapons.json /0/skins/0/levels/0",       // missing
		"en-US/weapons.json /0/skins/1/uuid",           // duplicate skin
		"en-US/buddies.json /0/levels/1/uuid",          // duplicate buddy level
	} {
		if !slices.Contains(got, want) {
			t.Errorf("no uuid rejection at %s; got %q", want, got)
		}
	}
}
