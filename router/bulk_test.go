package router_test

import (
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"io"
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/andybalholm/brotli"

	"github.com/refdata/refdata/catalog"
	"github.com/refdata/refdata/edition"
	"github.com/refdata/refdata/fixtures"
	"github.com/refdata/refdata/gen"
	"github.com/refdata/refdata/handler"
	"github.com/refdata/refdata/router/apitest"
)

// decoded is a response's body with its Content-Encoding undone.
func decoded(t *testing.T, res *http.Response) []byte {
	t.Helper()
	var r io.Reader = res.Body
	switch res.Header.Get("Content-Encoding") {
	case "gzip":
		zr, err := gzip.NewReader(r)
		if err != nil {
			t.Fatal(err)
		}
		r = zr
	case "br":
		r = brotli.NewReader(r)
	}
	b, err := io.ReadAll(r)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestBulkLinesEqualLists: a retained version's bulk file in two languages
// and language=all, in gzip and brotli, is a line per item of every catalog's
// list, each line's data that list's item byte for byte, the catalogs in the
// documented order; the sha256 and size /v1/versions lists for it are those
// of the bytes. Answered as a pinned route (immutable, its canonical
// Content-Location, a strong ETag per encoding, 304), and never identity:
// gzip without Accept-Encoding, 406 to one that takes neither. Through the
// router and the edge.
func TestBulkLinesEqualLists(t *testing.T) {
	t.Parallel()
	viaBoth(t, bulkLinesEqualLists)
}

func bulkLinesEqualLists(t *testing.T, build func(edition.Repository, http.Handler, ...func(*handler.Server)) http.Handler) {
	full, check := served(t), apitest.New(t)
	id := previous(t, full)
	h := build(full, nil)
	var listed gen.RetainedVersionListBody
	if err := json.Unmarshal(decoded(t, check.Do(t, h, get("/v1/versions"))), &listed); err != nil {
		t.Fatal(err)
	}
	var files map[string]gen.BulkFile
	for _, v := range listed.Data {
		if v.ManifestId == id && v.Bulk != nil {
			files = *v.Bulk
		}
	}
	if len(files) != catalog.NumLocales+1 {
		t.Fatalf("/v1/versions lists %d bulk files of %s", len(files), id)
	}
	for _, lang := range []string{"de-DE", "ja-jp", "all"} {
		target := "/v1/versions/" + strings.ToLower(id) + "/bulk?language=" + lang
		canonical := "/v1/versions/" + id + "/bulk?language=" + lang
		loc, ok := catalog.ParseLocale(lang)
		if !ok {
			loc = catalog.AllLocales
		}
		var body []byte
		etags := map[string]string{}
		for _, ae := range []string{"br", "gzip", "", "gzip;q=0.5, br;q=0.1", "*"} {
			res := check.Do(t, h, get(target, "Accept-Encoding", ae))
			want := map[string]string{"br": "br", "gzip": "gzip", "": "gzip", "gzip;q=0.5, br;q=0.1": "gzip", "*": "br"}[ae]
			if res.StatusCode != http.StatusOK || res.Header.Get("Content-Encoding") != want {
				t.Fatalf("%s (Accept-Encoding %q): %d in %q, want 200 in %s", target, ae, res.StatusCode, res.Header.Get("Content-Encoding"), want)
			}
			for name, v := range map[string]string{
				"Content-Type": "application/x-ndjson", "Cache-Control": handler.CacheImmutable,
				"X-Data-Version": id, "Content-Location": canonical, "Vary": "Accept-Encoding",
			} {
				if got := res.Header.Get(name); got != v {
					t.Errorf("%s: %s %q, want %q", target, name, got, v)
				}
			}
			b := decoded(t, res)
			if body != nil && !bytes.Equal(b, body) {
				t.Fatalf("%s: %s decodes to other bytes than %v", target, want, etags)
			}
			body = b
			if e := etags[want]; e != "" && e != res.Header.Get("ETag") {
				t.Errorf("%s: two ETags for %s", target, want)
			}
			etags[want] = res.Header.Get("ETag")
			if res := check.Do(t, h, get(target, "Accept-Encoding", ae, "If-None-Match", etags[want])); res.StatusCode != http.StatusNotModified {
				t.Errorf("%s (%q) If-None-Match: %d, want 304", target, ae, res.StatusCode)
			}
		}
		if etags["br"] == etags["gzip"] || !strings.HasPrefix(etags["br"], `"`) {
			t.Errorf("%s: ETags %v: want a strong one per encoding", target, etags)
		}
		wantLang := catalog.AllLanguages
		if loc != catalog.AllLocales {
			wantLang = catalog.Locales[loc]
		}
		if res := check.Do(t, h, get(target)); res.Header.Get("Content-Language") != wantLang {
			t.Errorf("%s: Content-Language %q, want %q", target, res.Header.Get("Content-Language"), wantLang)
		}
		sum := sha256.Sum256(body)
		key := lang
		if loc != catalog.AllLocales {
			key = catalog.Locales[loc]
		}
		if f := files[key]; f.Sha256 != hex.EncodeToString(sum[:]) || f.Size != int64(len(body)) {
			t.Errorf("%s: /v1/versions lists sha256 %s, %d bytes; the file has %x, %d", target, f.Sha256, f.Size, sum, len(body))
		}

		// The lines, catalog by catalog, are the lists.
		data := map[string][]string{}
		var order []string
		for line := range strings.SplitSeq(strings.TrimSuffix(string(body), "\n"), "\n") {
			name, rest, ok := strings.Cut(strings.TrimPrefix(line, `{"catalog":"`), `","data":`)
			if !ok || !strings.HasSuffix(rest, "}") {
				t.Fatalf("%s: line %.100q", target, line)
			}
			if len(order) == 0 || order[len(order)-1] != name {
				order = append(order, name)
			}
			data[name] = append(data[name], strings.TrimSuffix(rest, "}"))
		}
		var want []string
		for _, c := range catalog.Categories() {
			res := check.Do(t, h, get("/v1/versions/"+id+"/"+c.Name()+"?language="+lang))
			list := decoded(t, res)
			if res.StatusCode != http.StatusOK {
				t.Fatalf("%s: %d", c.Name(), res.StatusCode)
			}
			if got := `{"status":200,"data":[` + strings.Join(data[c.Name()], ",") + "]}"; got != string(list) {
				t.Errorf("%s: the lines of %s (%d) are not its list", target, c.Name(), len(data[c.Name()]))
			}
			if !bytes.Equal(list, []byte(`{"status":200,"data":[]}`)) {
				want = append(want, c.Name())
			}
		}
		if !slices.Equal(order, want) || len(want) < 20 {
			t.Errorf("%s: catalogs %v, want %v", target, order, want)
		}
	}

	// Refused: a version not retained or not one, a language, an encoding.
	for _, tc := range []struct {
		target, ae string
		status     int
		says       string
	}{
		{"/v1/versions/0000000000000000/bulk", "", http.StatusNotFound, "/v1/versions"},
		{"/v1/versions/latest/bulk", "", http.StatusBadRequest, "/v1/versions"},
		{"/v1/versions/" + id + "/bulk?language=xx-XX", "", http.StatusBadRequest, "language"},
		{"/v1/versions/" + id + "/bulk?language=de-DE&language=fr-FR", "", http.StatusBadRequest, "language"},
		{"/v1/versions/" + id + "/bulk", "identity", http.StatusNotAcceptable, "gzip or br"},
		{"/v1/versions/" + id + "/bulk?language=all", "gzip;q=0, br;q=0", http.StatusNotAcceptable, "gzip or br"},
		{"/v1/versions/" + id + "/bulk", "deflate", http.StatusNotAcceptable, "gzip or br"},
	} {
		for range 2 { // the edge's second answer is its own, were it memoized
			res := check.Do(t, h, get(tc.target, "Accept-Encoding", tc.ae))
			if b, _ := io.ReadAll(res.Body); res.StatusCode != tc.status || !bytes.Contains(b, []byte(tc.says)) {
				t.Errorf("%s (Accept-Encoding %q): %d %s, want %d naming %s", tc.target, tc.ae, res.StatusCode, b, tc.status, tc.says)
			}
		}
	}
}

// TestBulkOfAVersionWithout: a version stored before there were bulk files
// has none: 404 saying how to make them, never one made for the request;
// /v1/versions lists no bulk files for it.
func TestBulkOfAVersionWithout(t *testing.T) {
	t.Parallel()
	r, err := fixtures.Small("15")
	if err != nil {
		t.Fatal(err)
	}
	r.Bulk = [catalog.NumLocales + 1]*catalog.Doc{}
	ed, err := edition.Build(r, edition.Options{Effort: apitest.Effort()})
	if err != nil {
		t.Fatal(err)
	}
	check, h := apitest.New(t), testRouter(t, edition.Serve(ed), nil)
	res := check.Do(t, h, get("/v1/versions/"+ed.ManifestID+"/bulk?language=de-DE"))
	if b, _ := io.ReadAll(res.Body); res.StatusCode != http.StatusNotFound || !bytes.Contains(b, []byte("--force")) || res.Header.Get("X-Data-Version") != ed.ManifestID {
		t.Errorf("%d %s, want 404 saying to import it again with --force", res.StatusCode, b)
	}
	var listed gen.RetainedVersionListBody
	if err := json.Unmarshal(decoded(t, check.Do(t, h, get("/v1/versions"))), &listed); err != nil {
		t.Fatal(err)
	}
	if len(listed.Data) != 1 || listed.Data[0].Bulk != nil {
		t.Errorf("/v1/versions: %+v, want one version without bulk files", listed.Data)
	}
}
