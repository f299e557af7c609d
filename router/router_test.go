package router_test

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"path"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/refdata/refdata/catalog"
	"github.com/refdata/refdata/edition"
	"github.com/refdata/refdata/fixtures"
	"github.com/refdata/refdata/handler"
	"github.com/refdata/refdata/media"
	"github.com/refdata/refdata/representation"
	"github.com/refdata/refdata/router"
	"github.com/refdata/refdata/router/apitest"
)

const ua = "refdata-test/1.0 (+http://localhost)"

// walked is what TestEveryOperation walks and the protocol tests serve: both
// sample versions as the service serves them (fixtures.Static: the newer
// active, the diffs between them in both orders, each exporting its files),
// every body compressed at apitest.Effort(). Under the race detector (make
// test-race) the trimmed versions (fixtures.Small: every catalog and locale, a
// few items each), served the same way, since the detector looks for races in
// the handlers, not in the data, and slows the validation of full lists and
// their compression tenfold. The tests of data contents (counts, golden files)
// serve the full sample in every tier (sample).
var walked = sync.OnceValues(func() (*edition.Static, error) {
	if !raceOn {
		return fixtures.Static(apitest.Effort())
	}
	var vs []edition.StaticVersion
	dirs := fixtures.Versions()
	for i := len(dirs) - 1; i >= 0; i-- {
		dir := dirs[i]
		nn, _, _ := strings.Cut(path.Base(dir), "_")
		r, err := fixtures.Small(nn)
		if err != nil {
			return nil, err
		}
		ed, err := edition.Build(r, edition.Options{Effort: apitest.Effort()})
		if err != nil {
			return nil, err
		}
		at, err := time.Parse(time.RFC3339, ed.Version.BuildDate)
		if err != nil {
			return nil, err
		}
		vs = append(vs, edition.StaticVersion{Edition: ed, Published: at, Files: func() (map[string][]byte, error) { return fixtures.Files(dir, true) }})
	}
	return edition.NewStatic(vs...)
})

// served is the repository the protocol tests serve (see walked).
func served(t testing.TB) *edition.Static {
	t.Helper()
	st, err := walked()
	if err != nil {
		t.Fatal(err)
	}
	if n := len(st.Versions().Versions); n != 2 {
		t.Fatalf("%d sample versions served, want 2", n)
	}
	return st
}

// active is the newest version the protocol tests serve (see walked).
func active(t testing.TB) *edition.Edition {
	t.Helper()
	return served(t).Active()
}

// previous is the manifest ID of the version retained before r's active one.
func previous(t testing.TB, r edition.Repository) string {
	t.Helper()
	l := r.Versions().Versions
	if len(l) < 2 || l[0].ManifestId != r.Active().ManifestID {
		t.Fatalf("no version retained before the active one: %+v", l)
	}
	return l[1].ManifestId
}

// newest is the full newest sample version, uncompressed: what sample serves
// under the race detector.
var newest = sync.OnceValues(func() (*edition.Edition, error) {
	r, err := fixtures.Newest()
	if err != nil {
		return nil, err
	}
	return edition.New(r), nil
})

// sample is the full newest sample version, for the tests of data contents.
// Under the race detector it is uncompressed: those tests ask for identity
// bodies, and the encodings are the protocol tests' concern (active).
func sample(t testing.TB) *edition.Edition {
	t.Helper()
	if !raceOn {
		return active(t)
	}
	ed, err := newest()
	if err != nil {
		t.Fatal(err)
	}
	return ed
}

// faulty is a Repository whose diffs cannot be read (diffErr), or that panics
// on every call (panics).
type faulty struct {
	*edition.Static
	diffErr error
	panics  bool
}

func (r faulty) explode() {
	if r.panics {
		panic("repository exploded")
	}
}

func (r faulty) Active() *edition.Edition { r.explode(); return r.Static.Active() }
func (r faulty) Versions() *edition.VersionList {
	r.explode()
	return r.Static.Versions()
}
func (r faulty) RetainedEdition(id string) (*edition.Edition, error) {
	r.explode()
	return r.Static.RetainedEdition(id)
}
func (r faulty) Snapshot(id string) (*edition.Snapshot, error) {
	r.explode()
	return r.Static.Snapshot(id)
}
func (r faulty) LatestDiff() (*representation.Body, error) {
	r.explode()
	if r.diffErr != nil {
		return nil, r.diffErr
	}
	return r.Static.LatestDiff()
}
func (r faulty) Diff(from, to string) (*representation.Body, error) {
	r.explode()
	b, err := r.Static.Diff(from, to)
	if err == nil && r.diffErr != nil {
		return nil, r.diffErr
	}
	return b, err
}

// handler is the router over r, its metrics served by metrics (nil: its own);
// opts change the server before it is built.
func testRouter(t testing.TB, r edition.Repository, metrics http.Handler, opts ...func(*handler.Server)) http.Handler {
	t.Helper()
	reg := prometheus.NewRegistry()
	if metrics == nil {
		metrics = promhttp.HandlerFor(reg, promhttp.HandlerOpts{})
	}
	// A stream ends after its first event, so a test reads it whole.
	lib := &fakeMedia{files: map[string][]byte{"https://media.example/icon.png": testMediaBytes}, every: markerPNG(t)}
	srv := &handler.Server{Repo: r, Metrics: metrics, StreamFor: time.Nanosecond, Media: lib}
	for _, o := range opts {
		o(srv)
	}
	h, err := router.New(srv, slog.New(slog.NewTextHandler(io.Discard, nil)), router.NewHTTPMetrics(reg))
	if err != nil {
		t.Fatal(err)
	}
	return h
}

// tooMany has one client hold what it may of target's kind (a wait, or a
// recoloring that waits for its base image), then asks for one more: 429 with
// Retry-After; for a wait, a stream too.
func tooMany(t *testing.T, check *apitest.Checker, build func(edition.Repository, http.Handler, ...func(*handler.Server)) http.Handler, r edition.Repository, target string) {
	t.Helper()
	var srv *handler.Server
	opened, release := make(chan struct{}, 1), make(chan struct{})
	h := build(r, nil, func(s *handler.Server) {
		srv = s
		s.MaxHeldPerClient, s.MaxRecolorsPerClient = 1, 1
		s.Media = &slowMedia{Library: s.Media, opened: opened, release: release}
	})
	first, more := get(target), []string{target}
	isWait := target == "/v1/version"
	if isWait {
		etag := check.Do(t, h, get(target)).Header.Get("ETag")
		first, more = get(target+"?wait=120s", "If-None-Match", etag), []string{target + "?wait=120s", "/v1/version/stream"}
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		h.ServeHTTP(httptest.NewRecorder(), first.WithContext(ctx)) // ends when canceled, unchecked
	}()
	deadline := time.Now().Add(time.Minute)
	for isWait && srv.Held() != 1 && time.Now().Before(deadline) {
		time.Sleep(time.Millisecond)
	}
	if !isWait {
		<-opened // the first recoloring has its place
	}
	for _, target := range more {
		res := check.Do(t, h, get(target, "If-None-Match", first.Header.Get("If-None-Match")))
		if res.StatusCode != http.StatusTooManyRequests || res.Header.Get("Retry-After") == "" {
			t.Errorf("%s past the client's limit: %d, Retry-After %q; want 429 with Retry-After", target, res.StatusCode, res.Header.Get("Retry-After"))
		}
	}
	close(release)
	cancel()
	<-done
}

// slowMedia is a mirror whose files open once release is closed, telling
// opened of each opening that waits.
type slowMedia struct {
	media.Library
	opened, release chan struct{}
}

func (m *slowMedia) Open(ctx context.Context, sum string) (io.ReadSeekCloser, error) {
	select {
	case m.opened <- struct{}{}:
	default:
	}
	<-m.release
	return m.Library.Open(ctx, sum)
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
// A pinned path serves its catalog too: /v1/versions/{manifestId}/weapons.
// A route below an item names the item's: /v1/seasons/competitive/{uuid}/tiers
// → seasons/competitive.
func categoryOf(path string) (catalog.Category, bool) {
	path = strings.TrimPrefix(strings.TrimPrefix(path, handler.PinnedPrefix), "/v1")
	path, _, _ = strings.Cut(path, "/{uuid}") // an item's route, or one below it (…/{uuid}/tiers)
	return catalog.CategoryNamed(strings.TrimPrefix(path, "/"))
}

// TestEveryOperation walks every operation of openapi.yaml against the real router,
// directly and through the edge server, and fails if any status an operation
// documents was never produced.
func TestEveryOperation(t *testing.T) {
	t.Parallel()
	viaBoth(t, everyOperation)
}

func everyOperation(t *testing.T, build func(edition.Repository, http.Handler, ...func(*handler.Server)) http.Handler) {
	full := served(t)
	ed, older := full.Active(), previous(t, full)
	olderEd, err := full.RetainedEdition(older)
	if err != nil {
		t.Fatal(err)
	}
	check := apitest.New(t)
	h := build(full, nil)
	// One version: no diff, no earlier version, no files to export.
	noDiff := build(edition.Serve(ed), nil)
	corrupt := build(faulty{Static: full, diffErr: errors.New("checksum mismatch")}, nil)
	broken := build(faulty{Static: full, panics: true}, http.HandlerFunc(func(http.ResponseWriter, *http.Request) { panic("metrics exploded") }))
	// A replica still loading the versions before the active one.
	loading := &edition.Static{}
	if err := loading.Set(false, edition.StaticVersion{Edition: ed}); err != nil {
		t.Fatal(err)
	}
	notReady := build(loading, nil)
	// No version at all: an empty store.
	empty := build(edition.Serve(edition.None()), nil)

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
				browse := strings.HasPrefix(path, "/browse/")
				// The catalog's last item; for a logo's image the first logo, which has one.
				pick := -1
				switch image, isImage := strings.CutSuffix(path, "/image"); {
				case browse:
					c = catalog.WeaponSkins // a catalog whose name has a '/'
				case isImage:
					c, _ = categoryOf(image)
					isCatalog, pick = false, 0 // a PNG, in no language
				}
				byUUID := strings.Contains(path, "{uuid}")
				pinned, src := strings.HasPrefix(path, handler.PinnedPrefix), ed
				if pinned {
					src = olderEd // the pinned routes are walked in the older version
				}
				url := path
				if byUUID {
					uuids := src.UUIDs(c)
					if len(uuids) == 0 {
						t.Fatalf("%s: the sample data has no %s", path, c.Noun())
					}
					url = strings.Replace(path, "{uuid}", uuids[(pick+len(uuids))%len(uuids)].String(), 1)
				}
				url = strings.Replace(url, "{catalog}", strings.TrimPrefix(handler.BrowsePath(c), "/browse/"), 1)
				url = strings.Replace(url, "{locale}", "de-de", 1)
				url = strings.Replace(url, "{sha256}", testMediaHash(), 1)
				url = strings.Replace(url, "{from}", older, 1)
				url = strings.Replace(url, "{to}", ed.ManifestID, 1)
				url = strings.Replace(url, "{manifestId}", strings.ToLower(older), 1)
				page := op.Security != nil && len(*op.Security) == 0 // no User-Agent rule

				res := check.Do(t, h, get(url))
				if res.StatusCode != http.StatusOK {
					t.Fatalf("GET %s = %d", url, res.StatusCode)
				}
				// Live state: no-store, no ETag.
				probe := path == "/healthz" || path == "/readyz" || path == "/v1/version/stream"
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
					// The bulk files too.
					all := isCatalog || path == handler.PinnedPrefix+"/bulk"
					res := check.Do(t, h, get(url+"?language=ALL", "Accept-Encoding", "br"))
					switch {
					case all && res.StatusCode != http.StatusOK:
						t.Errorf("language=all: %d, want 200", res.StatusCode)
					case all && res.Header.Get("Content-Language") != catalog.AllLanguages:
						t.Errorf("language=all: Content-Language %q", res.Header.Get("Content-Language"))
					case !all && res.StatusCode != http.StatusBadRequest:
						t.Errorf("language=all on a page: %d, want 400", res.StatusCode)
					}
					if all {
						etag := res.Header.Get("ETag")
						if res := check.Do(t, h, get(url+"?language=all", "Accept-Encoding", "br", "If-None-Match", etag)); res.StatusCode != http.StatusNotModified {
							t.Errorf("language=all If-None-Match: %d, want 304", res.StatusCode)
						}
					}
				}
				if pinned {
					if res.Header.Get("X-Data-Version") != older || res.Header.Get("Cache-Control") != handler.CacheImmutable {
						t.Errorf("pinned: X-Data-Version %q, Cache-Control %q; want %s, immutable", res.Header.Get("X-Data-Version"), res.Header.Get("Cache-Control"), older)
					}
					for _, tc := range []struct {
						id   string
						want int
					}{{"0000000000000000", http.StatusNotFound}, {"latest", http.StatusBadRequest}} {
						res := check.Do(t, h, get(strings.Replace(url, strings.ToLower(older), tc.id, 1)))
						if body, _ := io.ReadAll(res.Body); res.StatusCode != tc.want || !bytes.Contains(body, []byte("/v1/versions")) {
							t.Errorf("version %s: %d %s, want %d naming /v1/versions", tc.id, res.StatusCode, body, tc.want)
						}
					}
				}
				if byUUID {
					at := strings.Replace(path, "{manifestId}", older, 1)
					at = strings.Replace(at, "{catalog}", strings.TrimPrefix(handler.BrowsePath(c), "/browse/"), 1)
					if res := check.Do(t, h, get(strings.Replace(at, "{uuid}", "00000000-0000-0000-0000-000000000000", 1))); res.StatusCode != http.StatusNotFound {
						t.Errorf("unknown uuid: %d, want 404", res.StatusCode)
					}
					// Not a UUID: the API's 400; a page that does not exist.
					wantMalformed := http.StatusBadRequest
					if page {
						wantMalformed = http.StatusNotFound
					}
					if res := check.Do(t, h, get(strings.Replace(at, "{uuid}", "not-a-uuid", 1))); res.StatusCode != wantMalformed {
						t.Errorf("malformed uuid: %d, want %d", res.StatusCode, wantMalformed)
					}
				}
				switch path {
				case "/v1/levelborders":
					if res := check.Do(t, h, get(url+"?level=0")); res.StatusCode != http.StatusNotFound {
						t.Errorf("a level below every border: %d, want 404", res.StatusCode)
					}
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
					// Every pair in both orders: back to the older version.
					if res := check.Do(t, h, get(prefix+ed.ManifestID+"/"+strings.ToLower(older))); res.StatusCode != http.StatusOK {
						t.Errorf("back to the older version: %d, want 200", res.StatusCode)
					}
					if res := check.Do(t, h, get(prefix+ed.ManifestID+"/"+ed.ManifestID)); res.StatusCode != http.StatusNotFound {
						t.Errorf("one version twice: %d, want 404", res.StatusCode)
					}
					if res := check.Do(t, corrupt, get(url)); res.StatusCode != http.StatusInternalServerError {
						t.Errorf("corrupt diff: %d, want 500", res.StatusCode)
					}
					if res := check.Do(t, h, get(prefix+ed.ManifestID+"/0000000000000000")); res.StatusCode != http.StatusNotFound {
						b, _ := io.ReadAll(res.Body)
						t.Errorf("unknown version: %d, want 404; header %v; body %.300q", res.StatusCode, res.Header, b)
					}
					// Not a manifest ID: the API's 400; a page that does not exist.
					wantMalformed := http.StatusBadRequest
					if page {
						wantMalformed = http.StatusNotFound
					}
					if res := check.Do(t, h, get(prefix+ed.ManifestID+"/latest")); res.StatusCode != wantMalformed {
						t.Errorf("malformed version: %d, want %d", res.StatusCode, wantMalformed)
					}
				case "/v1/version", "/v1/premier/logos/{uuid}/image":
					tooMany(t, check, build, full, url)
				case "/media/{sha256}":
					for _, tc := range []struct {
						url, rng string
						want     int
					}{
						{url, "bytes=0-3", http.StatusPartialContent},
						{url, "bytes=100000-", http.StatusRequestedRangeNotSatisfiable},
						{"/media/" + strings.Repeat("0", 64), "", http.StatusNotFound},
						{"/media/" + strings.ToUpper(testMediaHash()), "", http.StatusBadRequest},
						{"/media/..%2f..%2fetc%2fpasswd", "", http.StatusBadRequest},
					} {
						res := check.Do(t, h, get(tc.url, "Range", tc.rng))
						if body, _ := io.ReadAll(res.Body); res.StatusCode != tc.want {
							t.Errorf("GET %s Range %q: %d %s, want %d", tc.url, tc.rng, res.StatusCode, body, tc.want)
						} else if tc.want == http.StatusPartialContent && string(body) != "\x89PNG" {
							t.Errorf("Range %s: %q, want the file's first 4 bytes", tc.rng, body)
						}
					}
					if cc, etag := res.Header.Get("Cache-Control"), res.Header.Get("ETag"); cc != handler.CacheImmutable || etag != `"`+testMediaHash()+`"` {
						t.Errorf("media: Cache-Control %q, ETag %s; want immutable, the sha256", cc, etag)
					}
				case "/readyz":
					res := check.Do(t, notReady, get(url))
					if body, _ := io.ReadAll(res.Body); res.StatusCode != http.StatusServiceUnavailable || !bytes.Contains(body, []byte(ed.ManifestID)) {
						t.Errorf("a replica that is not ready: %d %s, want 503 saying what it loads", res.StatusCode, body)
					}
					if res := check.Do(t, notReady, get("/healthz")); res.StatusCode != http.StatusOK {
						t.Errorf("/healthz of a replica that is not ready: %d, want 200", res.StatusCode)
					}
				case "/browse/{catalog}", "/browse/{catalog}/{uuid}":
					// A catalog the API does not have, or named as /v1 names it.
					for _, name := range []string{"nope", "weapons%2Fskins", "WEAPONS"} {
						bad := strings.Replace(url, strings.TrimPrefix(handler.BrowsePath(c), "/browse/"), name, 1)
						if res := check.Do(t, h, get(bad)); res.StatusCode != http.StatusNotFound {
							t.Errorf("catalog %s: %d, want 404", name, res.StatusCode)
						}
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
				// A malformed percent-escape: 400 before any route, on every operation.
				sep := "?"
				if strings.Contains(url, "?") {
					sep = "&"
				}
				if res := check.Do(t, h, get(url+sep+"%zz")); res.StatusCode != http.StatusBadRequest {
					t.Errorf("malformed escape: %d, want 400", res.StatusCode)
				}
				res = check.Do(t, empty, get(url))
				if _, needs := op.Responses.Map()["503"]; needs && path != "/readyz" {
					if body, _ := io.ReadAll(res.Body); res.StatusCode != http.StatusServiceUnavailable || !bytes.Contains(body, []byte("retry later")) {
						t.Errorf("no version yet: %d %s, want 503 saying to retry later", res.StatusCode, body)
					}
				} else if res.StatusCode != http.StatusOK {
					t.Errorf("no version yet: %d, want 200 (it needs none)", res.StatusCode)
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
