package impl_test

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"io"
	"io/fs"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/refdata/refdata/api"
	"github.com/refdata/refdata/api/apitest"
	"github.com/refdata/refdata/catalog"
	"github.com/refdata/refdata/fixtures"
	"github.com/refdata/refdata/gen"
	"github.com/refdata/refdata/impl"
)

// twoVersions writes the two sample versions, trimmed, under one directory and
// serves them as the embedded data is served: EmbeddedSnapshots over the files,
// the newer one active, the latest diff computed.
func twoVersions(t *testing.T) (impl.EmbeddedSnapshots, fs.FS) {
	t.Helper()
	root := t.TempDir()
	var eds []*catalog.Edition
	dirs := map[string]string{}
	for _, v := range fixtures.Versions() {
		nn, _, _ := strings.Cut(path.Base(v), "_")
		name := "v" + nn
		// The files, for the export to read; the edition they build.
		if err := fixtures.WriteSmall(filepath.Join(root, name), nn); err != nil {
			t.Fatal(err)
		}
		ed, err := fixtures.Small(nn)
		if err != nil {
			t.Fatal(err)
		}
		eds = append(eds, ed)
		dirs[ed.ManifestID] = name
	}
	st, err := impl.NewStatic(eds[1], eds[0])
	if err != nil {
		t.Fatal(err)
	}
	if err := st.ComputeLatest(time.Date(2026, 11, 23, 0, 0, 0, 0, time.UTC)); err != nil {
		t.Fatal(err)
	}
	fsys := os.DirFS(root)
	return impl.EmbeddedSnapshots{Static: st, FS: fsys, Dirs: dirs}, fsys
}

func router(t *testing.T, s *impl.Server) http.Handler {
	t.Helper()
	h, err := api.New(s, slog.New(slog.DiscardHandler), api.NewHTTPMetrics(prometheus.NewRegistry()))
	if err != nil {
		t.Fatal(err)
	}
	return h
}

func request(method, target string) *http.Request {
	r := httptest.NewRequest(method, target, nil)
	r.Header.Set("User-Agent", "refdata-impl-test/1")
	return r
}

// TestEveryCatalogRoute: each category's list, in one locale and in all, and an
// item by uuid answer 200; an unknown uuid 404, a malformed one and an
// unsupported language 400 — each validated against the spec.
func TestEveryCatalogRoute(t *testing.T) {
	es, _ := twoVersions(t)
	h := router(t, &impl.Server{Repo: es})
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
	es, _ := twoVersions(t)
	older, newer := es.Older[0].ManifestID, es.Edition.ManifestID
	h := router(t, &impl.Server{Repo: es})
	single, err := impl.NewStatic(es.Edition)
	if err != nil {
		t.Fatal(err)
	}
	one := router(t, &impl.Server{Repo: single})
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
		{h, "/v1/diff/" + strings.ToLower(older) + "/" + newer, 200, ""},
		{h, "/v1/diff/" + newer + "/" + older, 404, "no diffs between its versions"},
		{h, "/v1/diff/" + older + "/0000000000000000", 404, "not retained"},
		{h, "/v1/diff/latest-ish/" + newer, 400, "not a manifest ID"},
		{one, "/v1/diff/latest", 404, "no diff"},
		{one, "/v1/diff/" + newer + "/" + newer, 404, "one version"},
		{h, "/healthz", 200, newer},
		{h, "/readyz", 200, newer},
		{h, "/changes/" + older + "/" + newer, 200, ""},
		{h, "/changes/zz/" + newer, 400, "not a manifest ID"},
		{h, "/changes?language=all", 400, "a page shows one language"},
	} {
		res := c.Do(t, tc.h, request("GET", tc.target))
		body, _ := io.ReadAll(res.Body)
		if res.StatusCode != tc.status || !bytes.Contains(body, []byte(tc.contain)) {
			t.Errorf("GET %s: %d %.200s, want %d containing %q", tc.target, res.StatusCode, body, tc.status, tc.contain)
		}
	}
}

// notReady is a repository whose replica says it should get no traffic.
type notReady struct{ impl.Static }

func (n notReady) Ready() (gen.ProbeStatus, bool, string) {
	return gen.ProbeStatus{Serving: n.Edition.ManifestID}, false, "staged version not yet switched"
}

func TestProbes(t *testing.T) {
	es, _ := twoVersions(t)
	h := router(t, &impl.Server{Repo: notReady{es.Static}})
	c := apitest.New(t)
	for _, tc := range []struct {
		method, target string
		status         int
		contain        string
	}{
		{"GET", "/healthz", 200, es.Edition.ManifestID},
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
// versions it does not hold, malformed IDs and servers without files are refused.
func TestExport(t *testing.T) {
	es, fsys := twoVersions(t)
	older, newer := es.Older[0].ManifestID, es.Edition.ManifestID
	h := router(t, &impl.Server{Repo: es})
	missing := es
	missing.Dirs = map[string]string{newer: es.Dirs[newer]}
	noFiles := router(t, &impl.Server{Repo: missing})
	static := router(t, &impl.Server{Repo: es.Static})
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
		{static, "GET", "/v1/export", 404, "", "no version files"},
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
		if tc.version == "" {
			continue
		}
		got := untar(t, body)
		dir := es.Dirs[tc.version]
		n := 0
		err := fs.WalkDir(fsys, dir, func(p string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() {
				return err
			}
			want, err := fs.ReadFile(fsys, p)
			if err != nil {
				return err
			}
			n++
			if rel := strings.TrimPrefix(p, dir+"/"); !bytes.Equal(got[rel], want) {
				t.Errorf("%s: %s differs from the version's file", tc.target, rel)
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		if n == 0 || len(got) != n {
			t.Errorf("%s: %d files in the archive, %d in the version", tc.target, len(got), n)
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
