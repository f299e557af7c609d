package api_test

import (
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"sort"
	"strings"
	"sync"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/refdata/refdata/api"
	"github.com/refdata/refdata/api/apitest"
	"github.com/refdata/refdata/catalog"
	"github.com/refdata/refdata/fixtures"
	"github.com/refdata/refdata/gen"
	"github.com/refdata/refdata/impl"
	"github.com/refdata/refdata/representation"
)

const ua = "refdata-test/1.0 (+http://localhost)"

// newest is the served sample version, compressed as a server would have it;
// under the race detector it is left uncompressed (see sample).
var newest = sync.OnceValues(func() (*catalog.Edition, error) {
	ed, err := fixtures.Newest()
	if err == nil && !raceOn {
		representation.CompressAll(ed.Bodies())
	}
	return ed, err
})

// previous is the sample version before the newest, retained beside it.
var previous = sync.OnceValues(func() (*catalog.Edition, error) {
	vs := fixtures.Versions()
	if len(vs) < 2 {
		return nil, fmt.Errorf("want two sample versions, have %d", len(vs))
	}
	return fixtures.Load(vs[len(vs)-2])
})

// retaining is a repo serving the newest sample version with the one before it
// retained, as the embedded default does: /v1/versions lists both, no diff is
// stored.
func retaining(t testing.TB) repo {
	t.Helper()
	eds, err := walked()
	if err != nil {
		t.Fatal(err)
	}
	return retainingOf(t, eds[0], eds[1])
}

func retainingOf(t testing.TB, ed, old *catalog.Edition) repo {
	t.Helper()
	st, err := impl.NewStatic(ed, old)
	if err != nil {
		t.Fatal(err)
	}
	return repo{ed: ed, older: st.Older, versions: st.List, diffErr: impl.NotFound("no diff stored")}
}

// walked is what TestEveryOperation walks and the protocol tests serve
// (edition, retaining): the full sample, but under the race detector (make
// test-race) the trimmed one (fixtures.Small: every catalog and locale, a few
// items each), since the detector looks for races in the handlers, not in the
// data, and slows the validation of full lists and the compression of 109 MB
// tenfold. The tests of data contents (counts, golden files) serve the full
// sample in every tier (sample).
var walked = sync.OnceValues(func() ([2]*catalog.Edition, error) {
	if !raceOn {
		ed, err := newest()
		if err != nil {
			return [2]*catalog.Edition{}, err
		}
		old, err := previous()
		return [2]*catalog.Edition{ed, old}, err
	}
	var eds [2]*catalog.Edition
	for i, nn := range []string{"15", "14"} {
		ed, err := fixtures.Small(nn)
		if err != nil {
			return eds, err
		}
		representation.CompressAll(ed.Bodies())
		eds[i] = ed
	}
	return eds, nil
})

// edition is the newest version the protocol tests serve (see walked).
func edition(t testing.TB) *catalog.Edition {
	t.Helper()
	eds, err := walked()
	if err != nil {
		t.Fatal(err)
	}
	return eds[0]
}

// sample is the full newest sample version, for the tests of data contents.
// Under the race detector it is uncompressed: those tests ask for identity
// bodies, and the encodings are the protocol tests' concern (edition).
func sample(t testing.TB) *catalog.Edition {
	t.Helper()
	ed, err := newest()
	if err != nil {
		t.Fatal(err)
	}
	return ed
}

// repo is a Repository whose diff answers a test chooses.
type repo struct {
	ed       *catalog.Edition
	older    []*catalog.Edition
	versions *impl.VersionList
	diff     *representation.Body
	diffErr  error
	panics   bool
}

func (r repo) Active() *catalog.Edition {
	if r.panics {
		panic("repository exploded")
	}
	return r.ed
}
func (r repo) LatestDiff() (*representation.Body, error) { return r.diff, r.diffErr }
func (r repo) Versions() *impl.VersionList {
	if r.panics {
		panic("repository exploded")
	}
	return r.versions
}
func (r repo) RetainedEdition(id string) (*catalog.Edition, error) {
	if r.panics {
		panic("repository exploded")
	}
	for _, ed := range append([]*catalog.Edition{r.ed}, r.older...) {
		if ed.ManifestID == id {
			return ed, nil
		}
	}
	return nil, impl.NotFound("version " + id + " not retained")
}

// Snapshot exports a version as its version record alone: enough for the
// archive's shape.
func (r repo) Snapshot(id string) (*impl.Snapshot, error) {
	if r.panics {
		panic("repository exploded")
	}
	if id == "" {
		id = r.ed.ManifestID
	}
	ed, err := r.RetainedEdition(strings.ToUpper(id))
	if err != nil {
		return nil, err
	}
	return &impl.Snapshot{ManifestID: ed.ManifestID, ContentHash: ed.ContentHash, Files: map[string][]byte{"version.json": ed.VersionBody().JSON}}, nil
}

func (r repo) Diff(from, to string) (*representation.Body, error) {
	for _, id := range []string{from, to} {
		if _, err := r.RetainedEdition(id); err != nil {
			return nil, err
		}
	}
	return r.diff, r.diffErr
}

func handler(t testing.TB, r impl.Repository, metrics http.Handler) http.Handler {
	t.Helper()
	reg := prometheus.NewRegistry()
	if metrics == nil {
		metrics = promhttp.HandlerFor(reg, promhttp.HandlerOpts{})
	}
	h, err := api.New(&impl.Server{Repo: r, Metrics: metrics}, slog.New(slog.NewTextHandler(io.Discard, nil)), api.NewHTTPMetrics(reg))
	if err != nil {
		t.Fatal(err)
	}
	return h
}

// sampleDiff is a diff body built through gen's types, as the pipeline renders one.
func sampleDiff(t testing.TB, ed *catalog.Edition) *representation.Body {
	t.Helper()
	empty := gen.CategoryDiff{Added: []string{}, Removed: []string{}, Changed: []gen.ChangedItem{}}
	var cats gen.DiffCategories
	b, _ := json.Marshal(cats)
	var m map[string]gen.CategoryDiff
	_ = json.Unmarshal(b, &m)
	for k := range m {
		m[k] = empty
	}
	m["weapons"] = gen.CategoryDiff{Added: []string{}, Removed: []string{}, Changed: []gen.ChangedItem{{Uuid: "63e6c2b6-4a8e-869c-3d4c-e38355226584", Fields: []string{"skins"}}}}
	b, _ = json.Marshal(m)
	if err := json.Unmarshal(b, &cats); err != nil {
		t.Fatal(err)
	}
	d := gen.DiffBody{Status: 200, Data: gen.Diff{FromVersion: "376A04CC95974716", ToVersion: ed.ManifestID, GeneratedAt: "2026-11-22T00:00:00Z", Categories: cats, Summary: gen.DiffSummary{TotalChanged: 1}}}
	body, err := json.Marshal(d)
	if err != nil {
		t.Fatal(err)
	}
	return representation.NewBody(body, "")
}

func get(path string, header ...string) *http.Request {
	req := httptest.NewRequest(http.MethodGet, path, nil)
	req.Header.Set("User-Agent", ua)
	for i := 0; i+1 < len(header); i += 2 {
		if header[i+1] == "" {
			req.Header.Del(header[i])
			continue
		}
		req.Header.Set(header[i], header[i+1])
	}
	return req
}

// categoryOf maps a spec path to the catalog it serves: /v1/weapons/skins/{uuid}
// → weapons/skins.
func categoryOf(path string) (catalog.Category, bool) {
	return catalog.CategoryNamed(strings.TrimSuffix(strings.TrimPrefix(path, "/v1/"), "/{uuid}"))
}

// TestEveryOperation walks every operation of openapi.yaml against the real router,
// directly and through the edge server, and fails if any status an operation
// documents was never produced.
func TestEveryOperation(t *testing.T) { viaBoth(t, everyOperation) }

func everyOperation(t *testing.T, handler func(impl.Repository, http.Handler) http.Handler) {
	eds, err := walked()
	if err != nil {
		t.Fatal(err)
	}
	ed := eds[0]
	check := apitest.New(t)
	full := retainingOf(t, ed, eds[1])
	full.diff, full.diffErr = sampleDiff(t, ed), nil
	h := handler(full, nil)
	noDiff := handler(impl.Static{Edition: ed}, nil)
	corrupt := handler(repo{ed: ed, diffErr: errors.New("checksum mismatch")}, nil)
	broken := handler(repo{ed: ed, panics: true}, http.HandlerFunc(func(http.ResponseWriter, *http.Request) { panic("metrics exploded") }))

	doc, err := catalog.Spec()
	if err != nil {
		t.Fatal(err)
	}
	paths := doc.Paths.InMatchingOrder()
	sort.Strings(paths)
	// The operations are read-only over shared handlers: walk them in parallel,
	// inside one group so the tally below waits for them all.
	t.Run("paths", func(t *testing.T) {
		for _, path := range paths {
			op := doc.Paths.Find(path).Get
			if op == nil {
				t.Fatalf("%s has no GET", path)
			}
			t.Run(strings.TrimPrefix(path, "/"), func(t *testing.T) {
				t.Parallel()
				c, isCatalog := categoryOf(path)
				byUUID := strings.Contains(path, "{uuid}")
				url := path
				if byUUID {
					uuids := ed.UUIDs(c)
					if len(uuids) == 0 {
						t.Fatalf("%s: the sample data has no %s", path, c.Noun())
					}
					url = strings.Replace(path, "{uuid}", uuids[len(uuids)-1].String(), 1)
				}
				url = strings.Replace(url, "{locale}", "de-de", 1)
				url = strings.Replace(url, "{from}", full.older[0].ManifestID, 1)
				url = strings.Replace(url, "{to}", ed.ManifestID, 1)
				url = strings.Replace(url, "{manifestId}", strings.ToLower(full.older[0].ManifestID), 1)
				page := op.Security != nil && len(*op.Security) == 0 // no User-Agent rule

				res := check.Do(t, h, get(url))
				if res.StatusCode != http.StatusOK {
					t.Fatalf("GET %s = %d", url, res.StatusCode)
				}
				probe := path == "/healthz" || path == "/readyz" // live state: no-store, no ETag
				if path != "/v1/metrics" && !probe {
					etag := res.Header.Get("ETag")
					if res := check.Do(t, h, get(url, "If-None-Match", etag)); res.StatusCode != http.StatusNotModified {
						t.Errorf("If-None-Match %s = %d, want 304", etag, res.StatusCode)
					}
					head := get(url)
					head.Method = http.MethodHead
					if res := check.Do(t, h, head); res.StatusCode != http.StatusOK {
						t.Errorf("HEAD %s = %d", url, res.StatusCode)
					}
				}
				for _, enc := range []string{"gzip", "br", "gzip;q=0.5, br;q=0.1", "identity"} {
					res := check.Do(t, h, get(url, "Accept-Encoding", enc))
					want := strings.Split(enc, ";")[0]
					if path == "/v1/metrics" || probe || want == "identity" {
						continue
					}
					// Bodies too small to gain are sent as identity.
					if got := res.Header.Get("Content-Encoding"); got != want && got != "" {
						t.Errorf("Accept-Encoding %s: Content-Encoding %q", enc, got)
					}
				}
				if isCatalog || op.Parameters.GetByInAndName("query", "language") != nil {
					// Every locale, in any letter case.
					for _, loc := range catalog.Locales {
						res := check.Do(t, h, get(url+"?language="+strings.ToLower(loc)))
						if res.StatusCode != http.StatusOK {
							t.Errorf("language=%s: %d", loc, res.StatusCode)
						}
					}
					if res := check.Do(t, h, get(url+"?language=xx-XX")); res.StatusCode != http.StatusBadRequest {
						t.Errorf("language=xx-XX: %d, want 400", res.StatusCode)
					}
					// language=all: every localized text keyed by the 18 codes, on catalog
					// routes; a page shows one language and refuses it.
					res := check.Do(t, h, get(url+"?language=ALL", "Accept-Encoding", "br"))
					switch {
					case isCatalog && res.StatusCode != http.StatusOK:
						t.Errorf("language=all: %d, want 200", res.StatusCode)
					case isCatalog && res.Header.Get("Content-Language") != catalog.AllLanguages:
						t.Errorf("language=all: Content-Language %q", res.Header.Get("Content-Language"))
					case !isCatalog && res.StatusCode != http.StatusBadRequest:
						t.Errorf("language=all on a page: %d, want 400", res.StatusCode)
					}
					if isCatalog {
						etag := res.Header.Get("ETag")
						if res := check.Do(t, h, get(url+"?language=all", "Accept-Encoding", "br", "If-None-Match", etag)); res.StatusCode != http.StatusNotModified {
							t.Errorf("language=all If-None-Match: %d, want 304", res.StatusCode)
						}
					}
				}
				if byUUID {
					if res := check.Do(t, h, get(strings.Replace(path, "{uuid}", "00000000-0000-0000-0000-000000000000", 1))); res.StatusCode != http.StatusNotFound {
						t.Errorf("unknown uuid: %d, want 404", res.StatusCode)
					}
					if res := check.Do(t, h, get(strings.Replace(path, "{uuid}", "not-a-uuid", 1))); res.StatusCode != http.StatusBadRequest {
						t.Errorf("malformed uuid: %d, want 400", res.StatusCode)
					}
				}
				switch path {
				case "/v1/locres/{locale}":
					if res := check.Do(t, h, get("/v1/locres/xx-XX")); res.StatusCode != http.StatusNotFound {
						t.Errorf("unsupported locale: %d, want 404", res.StatusCode)
					}
				case "/v1/diff/latest":
					if res := check.Do(t, noDiff, get(url)); res.StatusCode != http.StatusNotFound {
						t.Errorf("no diff: %d, want 404", res.StatusCode)
					}
					if res := check.Do(t, corrupt, get(url)); res.StatusCode != http.StatusInternalServerError {
						t.Errorf("corrupt diff: %d, want 500", res.StatusCode)
					}
				case "/v1/diff/{from}/{to}", "/changes/{from}/{to}":
					prefix := strings.TrimSuffix(path, "{from}/{to}")
					if res := check.Do(t, h, get(prefix+ed.ManifestID+"/0000000000000000")); res.StatusCode != http.StatusNotFound {
						b, _ := io.ReadAll(res.Body)
						t.Errorf("unknown version: %d, want 404; header %v; body %.300q", res.StatusCode, res.Header, b)
					}
					if res := check.Do(t, h, get(prefix+ed.ManifestID+"/latest")); res.StatusCode != http.StatusBadRequest {
						t.Errorf("malformed version: %d, want 400", res.StatusCode)
					}
				case "/readyz":
					notReady := handler(unready{impl.Static{Edition: ed}}, nil)
					if res := check.Do(t, notReady, get(url)); res.StatusCode != http.StatusServiceUnavailable {
						t.Errorf("a replica that is not ready: %d, want 503", res.StatusCode)
					}
				case "/changes":
					if res := check.Do(t, noDiff, get(url)); res.StatusCode != http.StatusNotFound {
						t.Errorf("no earlier version: %d, want 404", res.StatusCode)
					}
					if res := check.Do(t, corrupt, get(url)); res.StatusCode != http.StatusInternalServerError {
						t.Errorf("corrupt latest diff: %d, want 500", res.StatusCode)
					}
				case "/v1/export", "/v1/export/{manifestId}":
					if res := check.Do(t, noDiff, get(url)); res.StatusCode != http.StatusNotFound {
						t.Errorf("a repository with no files: %d, want 404", res.StatusCode)
					}
					if path == "/v1/export/{manifestId}" {
						if res := check.Do(t, h, get("/v1/export/0000000000000000")); res.StatusCode != http.StatusNotFound {
							t.Errorf("unknown version: %d, want 404", res.StatusCode)
						}
						if res := check.Do(t, h, get("/v1/export/..%2f..%2fetc")); res.StatusCode != http.StatusBadRequest {
							t.Errorf("malformed version: %d, want 400", res.StatusCode)
						}
					}
				}
				if res := check.Do(t, h, get(url, "User-Agent", "")); page && res.StatusCode != http.StatusOK {
					t.Errorf("page without a User-Agent: %d, want 200", res.StatusCode)
				} else if !page && res.StatusCode != http.StatusBadRequest {
					t.Errorf("no User-Agent: %d, want 400", res.StatusCode)
				}
				if res := check.Do(t, broken, get(url)); res.StatusCode != http.StatusInternalServerError {
					t.Errorf("panicking repository: %d, want 500", res.StatusCode)
				}
			})
		}
	})
	if f := flag.Lookup("test.run"); f != nil && f.Value.String() != "" {
		return // a filtered run exercises only part of the spec
	}
	if missing := check.Unexercised(); len(missing) > 0 {
		t.Errorf("documented statuses never exercised:\n%s", strings.Join(missing, "\n"))
	}
}

// unready is a repository whose replica is still staging a version.
type unready struct{ impl.Static }

func (u unready) Ready() (gen.ProbeStatus, bool, string) {
	staged := "0000000000000001"
	return gen.ProbeStatus{Serving: u.Edition.ManifestID, Staged: &staged}, false, "staging " + staged
}
