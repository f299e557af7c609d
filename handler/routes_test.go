package handler_test

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"path"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/refdata/refdata/catalog"
	"github.com/refdata/refdata/edition"
	"github.com/refdata/refdata/fixtures"
	"github.com/refdata/refdata/gen"
	"github.com/refdata/refdata/handler"
	"github.com/refdata/refdata/router"
	"github.com/refdata/refdata/router/apitest"
)

// The sample versions' publication: the generatedAt of the diffs between them.
var (
	publishedOlder = time.Date(2026, 11, 22, 0, 0, 0, 0, time.UTC)
	publishedNewer = time.Date(2026, 11, 23, 0, 0, 0, 0, time.UTC)
)

// sample is one trimmed sample version: its edition and the files it exports.
type sample struct {
	ed    *edition.Edition
	files func() (map[string][]byte, error)
}

// samples renders the two sample versions, trimmed (fixtures.Small), oldest
// first; each exports the files fixtures.Write writes trimmed.
func samples(t *testing.T) [2]sample {
	t.Helper()
	var out [2]sample
	vs := fixtures.Versions()
	if len(vs) != 2 {
		t.Fatalf("%d sample versions, want 2", len(vs))
	}
	for i, v := range vs {
		nn, _, _ := strings.Cut(path.Base(v), "_")
		r, err := fixtures.Small(nn)
		if err != nil {
			t.Fatal(err)
		}
		out[i] = sample{edition.New(r), func() (map[string][]byte, error) { return fixtures.Files(v, true) }}
	}
	return out
}

// twoVersions serves the two sample versions, trimmed, as the embedded data is
// served (fixtures.Static): the newer one active, the diffs between them in
// both orders, each version exporting its files.
func twoVersions(t *testing.T) *edition.Static {
	t.Helper()
	s := samples(t)
	st, err := edition.NewStatic(
		edition.StaticVersion{Edition: s[1].ed, Published: publishedNewer, Files: s[1].files},
		edition.StaticVersion{Edition: s[0].ed, Published: publishedOlder, Files: s[0].files},
	)
	if err != nil {
		t.Fatal(err)
	}
	return st
}

// olderOf is the manifest ID of the version retained before the active one.
func olderOf(t *testing.T, r edition.Repository) string {
	t.Helper()
	l := r.Versions()
	if l == nil || len(l.Versions) != 2 {
		t.Fatalf("want two retained versions, have %+v", l)
	}
	return l.Versions[1].ManifestId
}

func testRouter(t *testing.T, s *handler.Server) http.Handler {
	t.Helper()
	h, err := router.New(s, slog.New(slog.DiscardHandler), router.NewHTTPMetrics(prometheus.NewRegistry()))
	if err != nil {
		t.Fatal(err)
	}
	return h
}

func request(method, target string) *http.Request {
	r := httptest.NewRequest(method, target, nil)
	r.Header.Set("User-Agent", "refdata-handler-test/1")
	return r
}

// TestEveryCatalogRoute: each category's list, in one locale and in all, and an
// item by uuid answer 200; an unknown uuid 404, a malformed one and an
// unsupported language 400 — each validated against the spec.
func TestEveryCatalogRoute(t *testing.T) {
	t.Parallel()
	es := twoVersions(t)
	h := testRouter(t, &handler.Server{Repo: es})
	c := apitest.New(t)
	ed := es.Active()
	for _, cat := range catalog.Categories() {
		base := "/v1/" + cat.Name()
		ids := ed.UUIDs(cat)
		if len(ids) == 0 {
			t.Errorf("%s: no items in the sample", cat.Name())
			continue
		}
		for _, tc := range []struct {
			target string
			status int
		}{
			{base, 200},
			{base + "?language=all", 200},
			{base + "?language=de-de", 200},
			{base + "?language=xx-XX", 400},
			{base + "/" + ids[0].String(), 200},
			{base + "/" + ids[0].String() + "?language=ja-JP", 200},
			{base + "/00000000-0000-0000-0000-00000000000f", 404},
			{base + "/not-a-uuid", 400},
		} {
			res := c.Do(t, h, request("GET", tc.target))
			if res.StatusCode != tc.status {
				t.Errorf("GET %s: %d, want %d", tc.target, res.StatusCode, tc.status)
			}
			if tc.status == 200 && res.Header.Get("X-Data-Version") != ed.ManifestID {
				t.Errorf("GET %s: X-Data-Version %q", tc.target, res.Header.Get("X-Data-Version"))
			}
		}
	}
}

// TestVersionRoutes: the version record, string tables, retained versions and
// diffs of a server holding two versions.
func TestVersionRoutes(t *testing.T) {
	t.Parallel()
	es := twoVersions(t)
	older, newer := olderOf(t, es), es.Active().ManifestID
	h := testRouter(t, &handler.Server{Repo: es})
	one := testRouter(t, &handler.Server{Repo: edition.Serve(es.Active())})
	c := apitest.New(t)
	for _, tc := range []struct {
		h       http.Handler
		target  string
		status  int
		contain string
	}{
		{h, "/v1/version", 200, newer},
		{h, "/v1/locres", 200, "de-DE"},
		{h, "/v1/locres/DE-de", 200, ""},
		{h, "/v1/locres/xx-XX", 404, "no string table"},
		{h, "/v1/versions", 200, older},
		{h, "/v1/diff/latest", 200, `"fromVersion":"` + older + `"`},
		{h, "/v1/diff/" + older + "/" + newer, 200, `"toVersion":"` + newer + `"`},
		{h, "/v1/diff/" + strings.ToLower(older) + "/" + newer, 200, `"fromVersion":"` + older + `"`},
		// Every pair in both orders: back from the newer to the older.
		{h, "/v1/diff/" + newer + "/" + older, 200, `"fromVersion":"` + newer + `"`},
		{h, "/v1/diff/" + newer + "/" + newer, 404, "same version"},
		{h, "/v1/diff/" + older + "/0000000000000000", 404, "not retained"},
		{h, "/v1/diff/latest-ish/" + newer, 400, "not a manifest ID"},
		{one, "/v1/diff/latest", 404, "no diff"},
		{one, "/v1/diff/" + newer + "/" + newer, 404, "same version"},
		{one, "/v1/diff/" + newer + "/" + older, 404, "not retained"},
		{h, "/healthz", 200, newer},
		{h, "/readyz", 200, newer},
		{h, "/changes/" + older + "/" + newer, 200, ""},
		{h, "/changes/" + newer + "/" + older, 200, ""},
		{h, "/changes/zz/" + newer, 404, "retains no version named"},
		{h, "/changes?language=all", 400, "a page shows one language"},
	} {
		res := c.Do(t, tc.h, request("GET", tc.target))
		body, _ := io.ReadAll(res.Body)
		if res.StatusCode != tc.status || !bytes.Contains(body, []byte(tc.contain)) {
			t.Errorf("GET %s: %d %.200s, want %d containing %q", tc.target, res.StatusCode, body, tc.status, tc.contain)
		}
	}
}

// TestDiffsStampedWithTheNewer: the diff between two versions, in either
// order, is generated at the newer version's publication, so it is the same
// bytes however often it is made; its two orders swap what was added and
// removed.
func TestDiffsStampedWithTheNewer(t *testing.T) {
	t.Parallel()
	es := twoVersions(t)
	older, newer := olderOf(t, es), es.Active().ManifestID
	h := testRouter(t, &handler.Server{Repo: es})
	c := apitest.New(t)
	diffs := map[string]gen.Diff{}
	for _, target := range []string{"/v1/diff/latest", "/v1/diff/" + older + "/" + newer, "/v1/diff/" + newer + "/" + older} {
		res := c.Do(t, h, request("GET", target))
		var d gen.DiffBody
		if err := json.NewDecoder(res.Body).Decode(&d); err != nil || res.StatusCode != 200 {
			t.Fatalf("GET %s: %d %v", target, res.StatusCode, err)
		}
		if want := publishedNewer.Format(time.RFC3339); d.Data.GeneratedAt != want {
			t.Errorf("GET %s: generatedAt %s, want the newer version's publication %s", target, d.Data.GeneratedAt, want)
		}
		diffs[target] = d.Data
	}
	forward, back := diffs["/v1/diff/"+older+"/"+newer], diffs["/v1/diff/"+newer+"/"+older]
	if !reflect.DeepEqual(diffs["/v1/diff/latest"], forward) {
		t.Error("/v1/diff/latest is not the diff from the older version to the newer")
	}
	if forward.Summary.TotalAdded == 0 || forward.Summary.TotalChanged == 0 {
		t.Fatalf("the sample's diff adds %d and changes %d items: want both", forward.Summary.TotalAdded, forward.Summary.TotalChanged)
	}
	if back.Summary.TotalAdded != forward.Summary.TotalRemoved || back.Summary.TotalRemoved != forward.Summary.TotalAdded || back.Summary.TotalChanged != forward.Summary.TotalChanged {
		t.Errorf("summary back %+v is not forward %+v reversed", back.Summary, forward.Summary)
	}
	fwd, bwd := categories(t, forward), categories(t, back)
	if len(fwd) != int(catalog.NumCategories) {
		t.Errorf("%d categories in the diff, want %d", len(fwd), catalog.NumCategories)
	}
	for name, f := range fwd {
		b := bwd[name]
		if !sameSet(b.Added, f.Removed) || !sameSet(b.Removed, f.Added) || len(b.Changed) != len(f.Changed) {
			t.Errorf("%s: back %+v is not forward %+v reversed", name, b, f)
		}
	}
}

// categories is a diff's categories by name.
func categories(t *testing.T, d gen.Diff) map[string]gen.CategoryDiff {
	t.Helper()
	b, err := json.Marshal(d.Categories)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]gen.CategoryDiff
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	return m
}

func sameSet(a, b []string) bool {
	return slices.Equal(slices.Sorted(slices.Values(a)), slices.Sorted(slices.Values(b)))
}

// notReady is a repository whose replica says it should get no traffic.
type notReady struct{ *edition.Static }

func (n notReady) Ready() (gen.ProbeStatus, bool, string) {
	return gen.ProbeStatus{Serving: n.Active().ManifestID}, false, "staged version not yet switched"
}

func TestProbes(t *testing.T) {
	t.Parallel()
	es := twoVersions(t)
	h := testRouter(t, &handler.Server{Repo: notReady{es}})
	c := apitest.New(t)
	for _, tc := range []struct {
		method, target string
		status         int
		contain        string
	}{
		{"GET", "/healthz", 200, es.Active().ManifestID},
		{"HEAD", "/healthz", 200, ""},
		{"GET", "/readyz", 503, "staged version not yet switched"},
	} {
		res := c.Do(t, h, request(tc.method, tc.target))
		body, _ := io.ReadAll(res.Body)
		if res.StatusCode != tc.status || !bytes.Contains(body, []byte(tc.contain)) || res.Header.Get("Cache-Control") != "no-store" {
			t.Errorf("%s %s: %d %s %q", tc.method, tc.target, res.StatusCode, body, res.Header.Get("Cache-Control"))
		}
	}
}

// TestExport: /v1/export streams exactly the files of the version asked for;
// versions it does not hold, malformed IDs and servers without files are
// refused, and files that cannot be read answer 500 without saying why.
func TestExport(t *testing.T) {
	t.Parallel()
	s := samples(t)
	older, newer := s[0].ed.ManifestID, s[1].ed.ManifestID
	serve := func(newerFiles, olderFiles func() (map[string][]byte, error)) http.Handler {
		st, err := edition.NewStatic(
			edition.StaticVersion{Edition: s[1].ed, Published: publishedNewer, Files: newerFiles},
			edition.StaticVersion{Edition: s[0].ed, Published: publishedOlder, Files: olderFiles},
		)
		if err != nil {
			t.Fatal(err)
		}
		return testRouter(t, &handler.Server{Repo: st})
	}
	h := serve(s[1].files, s[0].files)
	noFiles := serve(s[1].files, nil)
	unreadable := serve(func() (map[string][]byte, error) {
		return nil, errors.New("open /var/lib/refdata/versions/x/version.json: permission denied")
	}, s[0].files)
	// A repository that is not an edition.Exporter.
	static := testRouter(t, &handler.Server{Repo: struct{ edition.Repository }{twoVersions(t)}})
	c := apitest.New(t)
	for _, tc := range []struct {
		h       http.Handler
		method  string
		target  string
		status  int
		version string // whose files the archive holds
		contain string // in an error's message
	}{
		{h, "GET", "/v1/export", 200, newer, ""},
		{h, "HEAD", "/v1/export", 200, "", ""},
		{h, "GET", "/v1/export/" + strings.ToLower(older), 200, older, ""},
		{h, "GET", "/v1/export/0000000000000000", 404, "", "not retained"},
		{h, "GET", "/v1/export/..%2F..%2Fetc", 400, "", "not a manifest ID"},
		{noFiles, "GET", "/v1/export/" + older, 404, "", "no files to export"},
		{noFiles, "GET", "/v1/export", 200, newer, ""},
		{static, "GET", "/v1/export", 404, "", "no version files"},
		{unreadable, "GET", "/v1/export", 500, "", "request id"},
	} {
		res := c.Do(t, tc.h, request(tc.method, tc.target))
		body, _ := io.ReadAll(res.Body)
		if res.StatusCode != tc.status {
			t.Errorf("%s %s: %d %.200s, want %d", tc.method, tc.target, res.StatusCode, body, tc.status)
			continue
		}
		if tc.contain != "" && !bytes.Contains(body, []byte(tc.contain)) {
			t.Errorf("%s %s: %s, want %q", tc.method, tc.target, body, tc.contain)
		}
		if bytes.Contains(body, []byte("/var/lib")) {
			t.Errorf("%s %s: %s names the file it could not read", tc.method, tc.target, body)
		}
		if tc.version == "" {
			continue
		}
		if got := res.Header.Get("X-Data-Version"); got != tc.version {
			t.Errorf("%s %s: X-Data-Version %s, want %s", tc.method, tc.target, got, tc.version)
		}
		got := untar(t, body)
		i := slices.IndexFunc(s[:], func(v sample) bool { return v.ed.ManifestID == tc.version })
		want, err := s[i].files()
		if err != nil {
			t.Fatal(err)
		}
		if len(want) == 0 || len(got) != len(want) {
			t.Errorf("%s: %d files in the archive, %d in the version", tc.target, len(got), len(want))
		}
		for name, b := range want {
			if !bytes.Equal(got[name], b) {
				t.Errorf("%s: %s differs from the version's file", tc.target, name)
			}
		}
	}
}

func untar(t *testing.T, b []byte) map[string][]byte {
	t.Helper()
	zr, err := gzip.NewReader(bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	tr := tar.NewReader(zr)
	out := map[string][]byte{}
	for {
		h, err := tr.Next()
		if err == io.EOF {
			return out
		}
		if err != nil {
			t.Fatal(err)
		}
		if out[h.Name], err = io.ReadAll(tr); err != nil {
			t.Fatal(err)
		}
	}
}
