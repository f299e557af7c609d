package edition_test

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"maps"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/refdata/refdata/catalog"
	"github.com/refdata/refdata/edition"
	"github.com/refdata/refdata/fixtures"
	"github.com/refdata/refdata/gen"
	"github.com/refdata/refdata/representation"
	"github.com/refdata/refdata/router/apitest"
)

var (
	published14 = time.Date(2025, 11, 3, 9, 0, 0, 0, time.UTC)
	published15 = time.Date(2025, 12, 1, 17, 30, 5, 0, time.FixedZone("CET", 3600))
)

// fixtureVersions is the two trimmed embedded versions as a Static holds
// them, newest first, with the rendered versions they were made of.
type fixtureVersions struct {
	r14, r15 *catalog.Rendered
	v14, v15 edition.StaticVersion
}

// staticVersions makes the two versions' editions with make (edition.New, or
// one read back from its pack).
func staticVersions(t testing.TB, make func(*catalog.Rendered) *edition.Edition) fixtureVersions {
	t.Helper()
	vs := fixtures.Versions()
	if len(vs) != 2 || !strings.Contains(vs[0], "/14_") || !strings.Contains(vs[1], "/15_") {
		t.Fatalf("embedded versions %v, want 14 and 15", vs)
	}
	files := func(dir string) func() (map[string][]byte, error) {
		return func() (map[string][]byte, error) { return fixtures.Files(dir, true) }
	}
	f := fixtureVersions{r14: small(t, "14"), r15: small(t, "15")}
	f.v14 = edition.StaticVersion{Edition: make(f.r14), Published: published14, Files: files(vs[0])}
	f.v15 = edition.StaticVersion{Edition: make(f.r15), Published: published15, Files: files(vs[1])}
	return f
}

func newStatic(t testing.TB, vs ...edition.StaticVersion) *edition.Static {
	t.Helper()
	s, err := edition.NewStatic(vs...)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func notFound(t testing.TB, what string, err error) {
	t.Helper()
	if err == nil || catalog.ErrorCode(err) != catalog.ENOTFOUND || catalog.ErrorMessage(err) == "" {
		t.Errorf("%s: %v (%s), want ENOTFOUND", what, err, catalog.ErrorCode(err))
	}
}

// validBody fails t unless b's encodings decode to its bytes and they match
// openapi.yaml's schema.
func validBody(t testing.TB, schema string, b *representation.Body) {
	t.Helper()
	doc, err := catalog.Spec()
	if err != nil {
		t.Fatal(err)
	}
	ref := doc.Components.Schemas[schema]
	if ref == nil || ref.Value == nil {
		t.Fatalf("openapi.yaml has no schema %s", schema)
	}
	var v any
	if err := json.Unmarshal(apitest.JSON(t, b), &v); err != nil {
		t.Fatal(err)
	}
	if err := ref.Value.VisitJSON(v); err != nil {
		t.Errorf("the body does not match %s: %v", schema, err)
	}
	for _, rep := range b.Representations() {
		if got, err := representation.Decode(rep); err != nil || !bytes.Equal(got, apitest.JSON(t, b)) {
			t.Errorf("%s: %v does not decode to the body (%v)", schema, rep.Encoding.Value, err)
		}
	}
}

// TestStatic: a Static serves the newest version, lists both newest first,
// and holds the diff between them in either order, stamped with the newer
// one's publication, the same bytes from any two Statics of the versions.
// bulkOf is what /v1/versions lists of r's bulk files: the sha256 and length
// of each one's bytes, by language.
func bulkOf(r *catalog.Rendered) *map[string]gen.BulkFile {
	m := map[string]gen.BulkFile{}
	for loc, d := range r.Bulk {
		lang := "all"
		if loc < catalog.NumLocales {
			lang = catalog.Locales[loc]
		}
		sum := sha256.Sum256(d.Bytes())
		m[lang] = gen.BulkFile{Sha256: hex.EncodeToString(sum[:]), Size: int64(d.Len())}
	}
	return &m
}

func TestStatic(t *testing.T) {
	t.Parallel()
	f := staticVersions(t, edition.New)
	s := newStatic(t, f.v15, f.v14)
	ed14, ed15 := f.v14.Edition, f.v15.Edition
	if s.Active() != ed15 {
		t.Errorf("active %s, want %s", s.Active().ManifestID, ed15.ManifestID)
	}

	list := s.Versions()
	at15, at14 := published15.UTC().Format(time.RFC3339), published14.UTC().Format(time.RFC3339)
	want := []gen.RetainedVersion{
		{ManifestId: ed15.ManifestID, Version: f.r15.Version.Version, Branch: f.r15.Version.Branch, ContentHash: f.r15.ContentHash, PublishedAt: &at15, Active: true, Bulk: bulkOf(f.r15)},
		{ManifestId: ed14.ManifestID, Version: f.r14.Version.Version, Branch: f.r14.Version.Branch, ContentHash: f.r14.ContentHash, PublishedAt: &at14, Bulk: bulkOf(f.r14)},
	}
	if !reflect.DeepEqual(list.Versions, want) {
		t.Errorf("versions %+v, want %+v", list.Versions, want)
	}
	var body gen.RetainedVersionListBody
	if err := json.Unmarshal(apitest.JSON(t, list.Body), &body); err != nil || body.Status != 200 || !reflect.DeepEqual(body.Data, want) {
		t.Errorf("the list's body %s (%v)", apitest.JSON(t, list.Body), err)
	}
	validBody(t, "RetainedVersionListBody", list.Body)

	// The diff, from the rendered versions.
	diff := func(from, to *catalog.Rendered) []byte {
		d, err := catalog.Diff(from, to, published15)
		if err != nil {
			t.Fatal(err)
		}
		b, err := catalog.DiffBody(d)
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	forward, err := s.Diff(ed14.ManifestID, ed15.ManifestID)
	if err != nil {
		t.Fatal(err)
	}
	backward, err := s.Diff(strings.ToLower(ed15.ManifestID), strings.ToLower(ed14.ManifestID))
	if err != nil {
		t.Fatal(err)
	}
	var fd, bd gen.DiffBody
	for _, tc := range []struct {
		name     string
		body     *representation.Body
		from, to *catalog.Rendered
		into     *gen.DiffBody
	}{
		{"14 to 15", forward, f.r14, f.r15, &fd},
		{"15 to 14", backward, f.r15, f.r14, &bd},
	} {
		if !bytes.Equal(apitest.JSON(t, tc.body), diff(tc.from, tc.to)) {
			t.Errorf("%s: not the diff of the rendered versions", tc.name)
		}
		if err := json.Unmarshal(apitest.JSON(t, tc.body), tc.into); err != nil {
			t.Fatal(err)
		}
		d := tc.into.Data
		if d.FromVersion != tc.from.ManifestID || d.ToVersion != tc.to.ManifestID || d.GeneratedAt != at15 {
			t.Errorf("%s: from %s to %s at %s, want %s to %s at %s", tc.name, d.FromVersion, d.ToVersion, d.GeneratedAt, tc.from.ManifestID, tc.to.ManifestID, at15)
		}
		validBody(t, "DiffBody", tc.body)
	}
	if s := fd.Data.Summary; s.TotalAdded == 0 || s.TotalChanged == 0 {
		t.Errorf("14 to 15: %+v; the fixtures should add and change items", s)
	}
	if fd.Data.Summary.TotalAdded != bd.Data.Summary.TotalRemoved || fd.Data.Summary.TotalRemoved != bd.Data.Summary.TotalAdded ||
		fd.Data.Summary.TotalChanged != bd.Data.Summary.TotalChanged {
		t.Errorf("14 to 15 %+v is not 15 to 14 %+v reversed", fd.Data.Summary, bd.Data.Summary)
	}
	if latest, err := s.LatestDiff(); err != nil || latest != forward {
		t.Errorf("latest diff: %v, not the diff from 14 to 15", err)
	}
	if b, err := edition.DiffBody(ed14, ed15, published15); err != nil || !bytes.Equal(apitest.JSON(t, b), apitest.JSON(t, forward)) || b.ETag() != forward.ETag() {
		t.Errorf("DiffBody: %v, not the Static's diff", err)
	}

	// Another Static of the same versions, read back from their packs:
	// the same diffs, byte for byte, in every encoding.
	g := staticVersions(t, func(r *catalog.Rendered) *edition.Edition {
		return decode(t, encode(t, r, edition.Options{Effort: apitest.Effort()}).Index)
	})
	again := newStatic(t, g.v15, g.v14)
	for _, pair := range [][2]string{{ed14.ManifestID, ed15.ManifestID}, {ed15.ManifestID, ed14.ManifestID}} {
		a, _ := s.Diff(pair[0], pair[1])
		b, err := again.Diff(pair[0], pair[1])
		if err != nil {
			t.Fatal(err)
		}
		ar, br := a.Representations(), b.Representations()
		if len(ar) != len(br) || len(ar) != 3 {
			t.Fatalf("%s to %s: %d and %d encodings, want 3", pair[0], pair[1], len(ar), len(br))
		}
		for i := range ar {
			if !bytes.Equal(encBytes(t, ar[i]), encBytes(t, br[i])) || ar[i].ETag() != br[i].ETag() {
				t.Errorf("%s to %s: encoding %d differs between two Statics", pair[0], pair[1], i)
			}
		}
	}
	if !bytes.Equal(apitest.JSON(t, s.Versions().Body), apitest.JSON(t, again.Versions().Body)) {
		t.Error("the version lists of two Statics differ")
	}

	// What is not there.
	for _, pair := range [][2]string{{ed15.ManifestID, ed15.ManifestID}, {"0000000000000000", ed15.ManifestID}, {ed14.ManifestID, "nope"}} {
		b, err := s.Diff(pair[0], pair[1])
		notFound(t, "diff "+pair[0]+" to "+pair[1], err)
		if b != nil {
			t.Errorf("diff %s to %s: a body", pair[0], pair[1])
		}
	}
	if ed, err := s.RetainedEdition(strings.ToLower(ed14.ManifestID)); err != nil || ed != ed14 {
		t.Errorf("retained %s: %v", ed14.ManifestID, err)
	}
	ed, err := s.RetainedEdition("0000000000000000")
	notFound(t, "an edition not retained", err)
	if ed != nil {
		t.Error("an edition not retained: an edition")
	}
}

// TestStaticSnapshot: Snapshot hands out a version's files ("" is the
// active one's) with its content hash; a version without files, or not
// retained, is ENOTFOUND, and a failure to read them is not.
func TestStaticSnapshot(t *testing.T) {
	t.Parallel()
	f := staticVersions(t, edition.New)
	s := newStatic(t, f.v15, f.v14)
	for _, tc := range []struct {
		id   string
		want edition.StaticVersion
		r    *catalog.Rendered
	}{
		{"", f.v15, f.r15},
		{strings.ToLower(f.r15.ManifestID), f.v15, f.r15},
		{f.r14.ManifestID, f.v14, f.r14},
	} {
		snap, err := s.Snapshot(tc.id)
		if err != nil {
			t.Fatalf("snapshot %q: %v", tc.id, err)
		}
		files, err := tc.want.Files()
		if err != nil {
			t.Fatal(err)
		}
		if snap.ManifestID != tc.r.ManifestID || snap.ContentHash != tc.r.ContentHash || !maps.EqualFunc(snap.Files, files, bytes.Equal) || len(files) == 0 {
			t.Errorf("snapshot %q: %s, %s, %d files; want %s, %s, %d", tc.id, snap.ManifestID, snap.ContentHash, len(snap.Files), tc.r.ManifestID, tc.r.ContentHash, len(files))
		}
		if got := catalog.FilesHash(snap.Files); got != snap.ContentHash {
			t.Errorf("snapshot %q: its files hash to %s, not its content hash %s", tc.id, got, snap.ContentHash)
		}
	}
	_, err := s.Snapshot("0000000000000000")
	notFound(t, "a version not retained", err)
	_, err = edition.Serve(f.v15.Edition).Snapshot("")
	notFound(t, "a version without files", err)

	broken := errors.New("the disk is gone")
	v := f.v15
	v.Files = func() (map[string][]byte, error) { return nil, broken }
	if _, err := newStatic(t, v).Snapshot(""); !errors.Is(err, broken) || catalog.ErrorCode(err) == catalog.ENOTFOUND {
		t.Errorf("files that cannot be read: %v", err)
	}
}

// TestStaticReady: a Static is ready once Set says its versions are
// complete, serving the newest all along.
func TestStaticReady(t *testing.T) {
	t.Parallel()
	f := staticVersions(t, edition.New)
	s := newStatic(t, f.v15, f.v14)
	ready := func(want bool) {
		t.Helper()
		status, ok, why := s.Ready()
		if ok != want || status.Serving != f.r15.ManifestID || (why == "") != want {
			t.Errorf("ready %v (%q), serving %s; want %v, serving %s", ok, why, status.Serving, want, f.r15.ManifestID)
		}
		if s.Active() != f.v15.Edition {
			t.Errorf("serving %s", s.Active().ManifestID)
		}
	}
	ready(true)
	if err := s.Set(false, f.v15); err != nil {
		t.Fatal(err)
	}
	ready(false)
	if len(s.Versions().Versions) != 1 {
		t.Errorf("%d versions, want the one set", len(s.Versions().Versions))
	}
	notFound(t, "a version no longer set", func() error { _, err := s.Diff(f.r14.ManifestID, f.r15.ManifestID); return err }())
	if err := s.Set(true, f.v15, f.v14); err != nil {
		t.Fatal(err)
	}
	ready(true)
	if _, err := s.LatestDiff(); err != nil {
		t.Error(err)
	}
	if err := s.Set(true); err == nil {
		t.Error("a Static of no versions")
	}
	if _, err := edition.NewStatic(); err == nil {
		t.Error("NewStatic of no versions")
	}
	ready(true)
}

// TestServe: a Static of one edition serves it, ready, with no diff and a
// version list of one, never published.
func TestServe(t *testing.T) {
	t.Parallel()
	r := small(t, "15")
	ed := edition.New(r)
	s := edition.Serve(ed)
	if s.Active() != ed {
		t.Error("not serving the edition")
	}
	if _, ok, why := s.Ready(); !ok {
		t.Errorf("not ready: %s", why)
	}
	b, err := s.LatestDiff()
	notFound(t, "the latest diff of one version", err)
	if b != nil {
		t.Error("a diff of one version")
	}
	want := []gen.RetainedVersion{{ManifestId: ed.ManifestID, Version: ed.Version.Version, Branch: ed.Version.Branch, ContentHash: ed.ContentHash, Active: true, Bulk: bulkOf(r)}}
	if got := s.Versions().Versions; !reflect.DeepEqual(got, want) {
		t.Errorf("versions %+v, want %+v", got, want)
	}
	if !bytes.Contains(apitest.JSON(t, s.Versions().Body), []byte(`"publishedAt":null`)) {
		t.Errorf("the list says %s, want publishedAt null", apitest.JSON(t, s.Versions().Body))
	}
	validBody(t, "RetainedVersionListBody", s.Versions().Body)
}
