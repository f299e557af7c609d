package live_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"github.com/prometheus/client_golang/prometheus/testutil/promlint"

	"github.com/refdata/refdata/api"
	"github.com/refdata/refdata/api/apitest"
	"github.com/refdata/refdata/builder"
	"github.com/refdata/refdata/catalog"
	"github.com/refdata/refdata/fixtures"
	"github.com/refdata/refdata/gen"
	"github.com/refdata/refdata/impl"
	"github.com/refdata/refdata/live"
	"github.com/refdata/refdata/pipeline"
	"github.com/refdata/refdata/representation"
	"github.com/refdata/refdata/store"
)

const (
	id14   = "376A04CC95974716"
	id15   = "05E83EB5E32657B9"
	id3    = "0000000000000003"
	vandal = "9c82e19d-4575-0200-1a81-3eacf00cf872"
)

// fixtureDir copies an embedded sample version (trimmed under -short) ("14" or "15") to a temp dir.
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

// syntheticVersion derives a new version from 15: another manifest ID and a
// renamed Vandal, so its bodies differ.
func syntheticVersion(t testing.TB, id string) string {
	t.Helper()
	dir := fixtureDir(t, "15")
	rewrite := func(file string, f func(data any)) {
		p := filepath.Join(dir, file)
		b, _ := os.ReadFile(p)
		var env map[string]any
		if err := json.Unmarshal(b, &env); err != nil {
			t.Fatal(err)
		}
		f(env["data"])
		b, _ = json.Marshal(env)
		if err := os.WriteFile(p, b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	rewrite("version.json", func(d any) { d.(map[string]any)["manifestId"] = id })
	rewrite("en-US/weapons.json", func(d any) {
		for _, w := range d.([]any) {
			if m := w.(map[string]any); m["uuid"] == vandal {
				m["displayName"] = "Vandal " + id
			}
		}
	})
	return dir
}

type env struct {
	dir     string
	st      *store.Store
	repo    *live.Repository
	h       http.Handler
	check   *apitest.Checker
	logs    *bytes.Buffer
	imports int
}

// Imports are the slow part of these tests (more so under -race), so each store
// shape is imported once and copied per test.
var (
	templatesOnce sync.Once
	templates     [4]string // templates[n]: a store holding the first n of 14, 15, synthetic 3
	templatesErr  error
	templatesRoot string
)

func TestMain(m *testing.M) {
	apitest.Setup()
	code := m.Run()
	if templatesRoot != "" {
		os.RemoveAll(templatesRoot)
	}
	os.Exit(code)
}

// newEnv serves a copy of a store holding the first n of: 14, 15, synthetic 3.
func newEnv(t *testing.T, n int) *env {
	t.Helper()
	templatesOnce.Do(func() { templatesErr = buildTemplates(t) })
	if templatesErr != nil {
		t.Fatal(templatesErr)
	}
	e := &env{dir: filepath.Join(t.TempDir(), "store"), logs: new(bytes.Buffer)}
	if err := os.CopyFS(e.dir, os.DirFS(templates[n])); err != nil {
		t.Fatal(err)
	}
	e.st, _ = store.Open(e.dir)
	e.open(t)
	return e
}

func buildTemplates(t *testing.T) error {
	root, err := os.MkdirTemp("", "refdata-live-")
	if err != nil {
		return err
	}
	templatesRoot = root
	srcs := []string{fixtureDir(t, "14"), fixtureDir(t, "15"), syntheticVersion(t, id3)}
	for n := 1; n <= 3; n++ {
		templates[n] = filepath.Join(root, fmt.Sprint(n))
		if n > 1 {
			if err := os.CopyFS(templates[n], os.DirFS(templates[n-1])); err != nil {
				return err
			}
		}
		st, err := store.Open(templates[n])
		if err != nil {
			return err
		}
		if _, err := pipeline.Import(st, srcs[n-1], pipeline.Options{}); err != nil {
			return err
		}
	}
	return nil
}

func (e *env) importDir(t *testing.T, dir string) {
	t.Helper()
	if _, err := pipeline.Import(e.st, dir, pipeline.Options{}); err != nil {
		t.Fatal(err)
	}
}

func (e *env) open(t *testing.T) {
	t.Helper()
	logger := slog.New(slog.NewTextHandler(&syncWriter{w: e.logs}, nil))
	reg := prometheus.NewRegistry()
	repo, err := live.Open(e.st, logger, live.NewMetrics(reg, time.Now()), nil)
	if err != nil {
		t.Fatal(err)
	}
	pipeline.NewMetrics(reg) // as serve wires them: one scrape for both
	live.RegisterReplicaMetrics(reg, repo)
	h, err := api.New(&impl.Server{Repo: repo, Metrics: promhttp.HandlerFor(reg, promhttp.HandlerOpts{})}, logger, api.NewHTTPMetrics(reg))
	if err != nil {
		t.Fatal(err)
	}
	e.repo, e.h, e.check = repo, h, apitest.New(t)
	// The next test should not share the CPU with this one's compression.
	t.Cleanup(repo.Wait)
}

// get serves one request through the spec-validating checker.
func (e *env) get(t *testing.T, target string) (*http.Response, []byte) {
	t.Helper()
	req := httptest.NewRequest(http.MethodGet, target, nil)
	req.Header.Set("User-Agent", "refdata-test/1.0 (+https://example.com)")
	res := e.check.Do(t, e.h, req)
	b, _ := io.ReadAll(res.Body)
	return res, b
}

type syncWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (s *syncWriter) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.w.Write(p)
}

func decodeDiff(t *testing.T, b []byte) gen.Diff {
	t.Helper()
	var d gen.DiffBody
	if err := json.Unmarshal(b, &d); err != nil {
		t.Fatalf("diff body: %v", err)
	}
	return d.Data
}

func TestLatestDiff(t *testing.T) {
	e := newEnv(t, 1)
	if res, b := e.get(t, "/v1/diff/latest"); res.StatusCode != http.StatusNotFound {
		t.Fatalf("first version: /v1/diff/latest = %d %s, want 404", res.StatusCode, b)
	}
	e.importDir(t, fixtureDir(t, "15"))
	if swapped, err := e.repo.Reload(); !swapped || err != nil {
		t.Fatalf("Reload = %v, %v", swapped, err)
	}
	res, b := e.get(t, "/v1/diff/latest")
	if res.StatusCode != http.StatusOK || res.Header.Get("X-Data-Version") != id15 {
		t.Fatalf("/v1/diff/latest = %d (%s)", res.StatusCode, res.Header.Get("X-Data-Version"))
	}
	d := decodeDiff(t, b)
	if d.FromVersion != id14 || d.ToVersion != id15 || d.Summary.TotalAdded == 0 {
		t.Errorf("latest diff %s → %s, %+v", d.FromVersion, d.ToVersion, d.Summary)
	}
	// The diff body is compressed beside serving; once that is done a client
	// that accepts brotli gets it, decoding to the same bytes.
	e.repo.Wait()
	req := httptest.NewRequest(http.MethodGet, "/v1/diff/latest", nil)
	req.Header.Set("User-Agent", "refdata-test/1.0 (+https://example.com)")
	req.Header.Set("Accept-Encoding", "br")
	if res := e.check.Do(t, e.h, req); res.Header.Get("Content-Encoding") != "br" {
		t.Errorf("/v1/diff/latest after Wait: Content-Encoding %q, want br", res.Header.Get("Content-Encoding"))
	}
}

// TestSwapServesGzipAtOnce: a swapped-in version's changed bodies have gzip
// before the swap (a gzip client never gets its identity bodies) and brotli
// once the background work is done, whether the version was built in-process
// or by the builder child.
func TestSwapServesGzipAtOnce(t *testing.T) {
	for _, child := range []bool{false, true} {
		t.Run(fmt.Sprintf("child=%v", child), func(t *testing.T) {
			e := newEnv(t, 1)
			e.repo.Wait()
			if child {
				// Built by the child, even with other test binaries on the cores.
				t.Setenv(builder.NormalPriorityEnv, "1")
				patience := builder.Patience
				builder.Patience = time.Hour
				defer func() { builder.Patience = patience }()
				builder.Enable(slog.New(slog.NewTextHandler(&syncWriter{w: e.logs}, &slog.HandlerOptions{Level: slog.LevelDebug})))
				defer builder.Disable()
			}
			e.importDir(t, fixtureDir(t, "15"))
			if swapped, err := e.repo.Reload(); !swapped || err != nil {
				t.Fatalf("Reload = %v, %v", swapped, err)
			}
			if strings.Contains(e.logs.String(), "building in-process") {
				t.Fatalf("the builder child did not build: %s", e.logs)
			}
			// The log counts the bodies taken from 14 with their encodings,
			// wherever the edition was built: most of them.
			m := regexp.MustCompile(`msg="prepared version".* reused=(\d+)`).FindStringSubmatch(e.logs.String())
			if m == nil {
				t.Fatalf("no prepared version line with reused: %s", e.logs)
			}
			n, _ := strconv.Atoi(m[1])
			if total := len(e.repo.Active().Bodies()); n < total/2 || n > total {
				t.Errorf("reused=%d of %d bodies", n, total)
			}
			do := func(target, accept string) (*http.Response, []byte) {
				req := httptest.NewRequest(http.MethodGet, target, nil)
				req.Header.Set("User-Agent", "refdata-test/1.0 (+https://example.com)")
				req.Header.Set("Accept-Encoding", accept)
				res := e.check.Do(t, e.h, req)
				b, _ := io.ReadAll(res.Body)
				return res, b
			}
			// currencies changed 14 → 15; the weapon list in de-DE did not.
			for _, target := range []string{"/v1/currencies", "/v1/weapons?language=de-DE"} {
				if res, _ := do(target, "gzip"); res.Header.Get("Content-Encoding") != "gzip" || res.Header.Get("X-Data-Version") != id15 {
					t.Errorf("%s right after the swap: Content-Encoding %q from %s, want gzip from %s", target, res.Header.Get("Content-Encoding"), res.Header.Get("X-Data-Version"), id15)
				}
			}
			e.repo.Wait()
			if res, _ := do("/v1/currencies", "gzip, br"); res.Header.Get("Content-Encoding") != "br" {
				t.Errorf("after Wait: Content-Encoding %q, want br", res.Header.Get("Content-Encoding"))
			}
			// The next build's child: one started by Enable, taken by the
			// build; the next once the swap's brotli is done.
			if n := strings.Count(e.logs.String(), "started the next build's builder child"); child && n != 2 {
				t.Errorf("builder children started ahead: %d, want 2 (Enable's and the swap's): %s", n, e.logs)
			}
		})
	}
}

// flipByte damages a stored file behind the store's back: one bit of the byte
// fromEnd bytes before its end.
func flipByte(t *testing.T, p string, fromEnd int) {
	t.Helper()
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	b[len(b)-fromEnd] ^= 1
	if err := os.WriteFile(p, b, 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestCorruptDiff: a damaged stored diff is a 500 JSON error; the catalog keeps
// being served.
func TestCorruptDiff(t *testing.T) {
	e := newEnv(t, 2)
	flipByte(t, filepath.Join(e.dir, "diffs", id14+"-"+id15+".json"), 20)
	res, body := e.get(t, "/v1/diff/latest")
	if res.StatusCode != http.StatusInternalServerError || res.Header.Get("Content-Type") != "application/json" {
		t.Fatalf("corrupt diff: %d %s %s", res.StatusCode, res.Header.Get("Content-Type"), body)
	}
	if res, _ := e.get(t, "/v1/weapons/"+vandal); res.StatusCode != http.StatusOK {
		t.Errorf("catalog after a diff error: %d", res.StatusCode)
	}
	// The ad-hoc route recomputes a damaged file rather than failing.
	if res, _ := e.get(t, "/v1/diff/"+id14+"/"+id15); res.StatusCode != http.StatusOK {
		t.Errorf("/v1/diff/{from}/{to} over a damaged file: %d", res.StatusCode)
	}
}

func TestDiffBetweenVersions(t *testing.T) {
	e := newEnv(t, 3)
	_, latest := e.get(t, "/v1/diff/latest")
	if d := decodeDiff(t, latest); d.FromVersion != id15 {
		t.Fatalf("latest diff from %s", d.FromVersion)
	}
	res, fwd := e.get(t, "/v1/diff/"+id14+"/"+id15)
	if res.StatusCode != http.StatusOK {
		t.Fatalf("14→15: %d %s", res.StatusCode, fwd)
	}
	_, back := e.get(t, "/v1/diff/"+strings.ToLower(id15)+"/"+id14)
	f, b := decodeDiff(t, fwd), decodeDiff(t, back)
	if f.Summary.TotalAdded != b.Summary.TotalRemoved || f.Summary.TotalRemoved != b.Summary.TotalAdded || f.Summary.TotalChanged != b.Summary.TotalChanged {
		t.Errorf("15→14 is not 14→15 reversed: %+v vs %+v", f.Summary, b.Summary)
	}
	if _, err := e.st.ReadDiff(id15, id14); err != nil {
		t.Errorf("the computed diff was not stored: %v", err)
	}
	_, skip := e.get(t, "/v1/diff/"+id14+"/"+id3)
	if d := decodeDiff(t, skip); d.Categories.Weapons.Changed == nil || d.ToVersion != id3 {
		t.Errorf("14→synthetic: %+v", d.Summary)
	}
	if res, _ := e.get(t, "/v1/diff/"+id14+"/0123456789ABCDEF"); res.StatusCode != http.StatusNotFound {
		t.Errorf("unknown version: %d, want 404", res.StatusCode)
	}
}

// TestTraversal: path segments that try to leave the API give 400/404 and the
// store opens no file for them; a sentinel a traversal would name stays untouched.
func TestTraversal(t *testing.T) {
	e := newEnv(t, 2)
	sentinel := filepath.Join(e.dir, "versions", "SENTINEL.json")
	if err := os.WriteFile(sentinel, []byte(`{"secret":true}`), 0o600); err != nil {
		t.Fatal(err)
	}
	before, _ := os.Stat(sentinel)
	var mu sync.Mutex
	var opened []string
	e.st.Trace = func(name string) { mu.Lock(); opened = append(opened, name); mu.Unlock() }
	for _, target := range []string{
		"/v1/diff/..%2F..%2FACTIVE/" + id15,
		"/v1/diff/" + id14 + "/..%2Fversions%2FSENTINEL",
		"/v1/diff/..%2Fversions%2FSENTINEL.json/" + id15,
		"/v1/diff/%2e%2e/%2e%2e",
		"/v1/diff/" + id14 + "%2F..%2F..%2F/" + id15,
		"/v1/locres/..%2F..%2Fversions%2FSENTINEL",
		"/v1/locres/..%2Fen-US",
		"/v1/locres/%2e%2e%2f%2e%2e%2fetc%2fpasswd",
	} {
		res, body := e.get(t, target)
		if res.StatusCode != http.StatusBadRequest && res.StatusCode != http.StatusNotFound {
			t.Errorf("%s: %d %s, want 400 or 404", target, res.StatusCode, body)
		}
		if bytes.Contains(body, []byte("secret")) {
			t.Errorf("%s leaked the sentinel", target)
		}
	}
	if len(opened) != 0 {
		t.Errorf("traversal requests opened %q", opened)
	}
	after, err := os.Stat(sentinel)
	if err != nil || !after.ModTime().Equal(before.ModTime()) || after.Size() != before.Size() {
		t.Errorf("sentinel changed: %v", err)
	}
}

// TestFallbackOnDamagedActive: a version failing its checksum at start-up is
// not served; the newest intact one is, and the log says why.
func TestFallbackOnDamagedActive(t *testing.T) {
	e := newEnv(t, 2)
	p := filepath.Join(e.dir, "versions", id15, "en-US", "maps.json")
	b, _ := os.ReadFile(p)
	if err := os.WriteFile(p, append(b, ' '), 0o644); err != nil {
		t.Fatal(err)
	}
	e.open(t)
	if got := e.repo.Active().ManifestID; got != id14 {
		t.Fatalf("serving %s, want the intact %s", got, id14)
	}
	if !strings.Contains(e.logs.String(), "fails its checks") || !strings.Contains(e.logs.String(), "maps.json") {
		t.Errorf("the log does not say why:\n%s", e.logs.String())
	}
	if res, _ := e.get(t, "/v1/version"); res.Header.Get("X-Data-Version") != id14 {
		t.Errorf("X-Data-Version %s", res.Header.Get("X-Data-Version"))
	}
}

// TestReloadFailureCounted: a published version that fails its checks when a
// replica loads it is counted, and the replica keeps serving what it had.
func TestReloadFailureCounted(t *testing.T) {
	e := newEnv(t, 1)
	e.importDir(t, fixtureDir(t, "15"))
	p := filepath.Join(e.dir, "versions", id15, "en-US", "maps.json")
	b, _ := os.ReadFile(p)
	if err := os.WriteFile(p, append(b, ' '), 0o644); err != nil {
		t.Fatal(err)
	}
	if swapped, err := e.repo.Reload(); swapped || err == nil {
		t.Fatalf("reload of a damaged version: swapped %v, err %v", swapped, err)
	}
	if got := e.repo.Active().ManifestID; got != id14 {
		t.Errorf("serving %s after a failed reload, want %s", got, id14)
	}
	_, body := e.get(t, "/v1/metrics")
	for _, want := range []string{"refdata_reload_errors_total 1", `refdata_pipeline_errors_total{stage="load"} 0`} {
		if !bytes.Contains(body, []byte(want)) {
			t.Errorf("scrape lacks %s", want)
		}
	}
}

// TestHotSwap: readers hammer list and by-uuid routes while five versions are
// published; every response is 200 and its body is exactly the one of the
// version its X-Data-Version header names. The versions are imported into a
// staging store first and published from there, so the readers race the publish
// and the swap rather than validation.
func TestHotSwap(t *testing.T) {
	staging := newEnv(t, 3)
	for i := 4; i <= 5; i++ {
		staging.importDir(t, syntheticVersion(t, fmt.Sprintf("%016X", i)))
	}
	versions, err := staging.st.Versions()
	if err != nil || len(versions) != 5 {
		t.Fatalf("staging has %d versions: %v", len(versions), err)
	}
	// Small bodies (the race detector makes big copies slow); each changes across
	// the five versions: currencies and events 14→15, Vandal in every version.
	targets := []string{"/v1/currencies", "/v1/events?language=de-DE", "/v1/version", "/v1/weapons/" + vandal, "/v1/weapons/" + vandal + "?language=ja-JP", "/v1/playertitles"}
	want := map[string]map[string][]byte{} // manifest ID → target → body
	for _, v := range versions {
		ed, _, err := live.LoadEdition(staging.st, v.ManifestID)
		if err != nil {
			t.Fatal(err)
		}
		probe := &env{h: mustHandler(t, impl.Static{Edition: ed}), check: staging.check}
		want[v.ManifestID] = map[string][]byte{}
		for _, target := range targets {
			_, b := probe.get(t, target)
			want[v.ManifestID][target] = b
		}
	}

	e := newEnv(t, 1)
	var told atomic.Int64
	e.repo.OnSwap(func() { told.Add(1) })
	stop := make(chan struct{})
	var wg sync.WaitGroup
	var requests, failures atomic.Int64
	var seen sync.Map
	readers := 4
	if raceOn {
		readers = 2
	}
	for g := 0; g < readers; g++ {
		wg.Add(1)
		go func(g int) {
			defer wg.Done()
			for i := 0; ; i++ {
				select {
				case <-stop:
					return
				default:
				}
				if i%16 == 15 {
					time.Sleep(time.Millisecond) // leave the publisher some CPU
				}
				target := targets[(g+i)%len(targets)]
				req := httptest.NewRequest(http.MethodGet, target, nil)
				req.Header.Set("User-Agent", "refdata-test/1.0 (+https://example.com)")
				rec := httptest.NewRecorder()
				e.h.ServeHTTP(rec, req)
				requests.Add(1)
				ver := rec.Header().Get("X-Data-Version")
				seen.Store(ver, true)
				bodies, ok := want[ver]
				if rec.Code != http.StatusOK || !ok || !bytes.Equal(rec.Body.Bytes(), bodies[target]) {
					if failures.Add(1) <= 5 {
						t.Errorf("%s: %d from version %q (known: %v) does not match that version's body", target, rec.Code, ver, ok)
					}
				}
			}
		}(g)
	}
	// Between publishes, wait until every reader has asked for every target
	// again, rather than sleeping and hoping they ran.
	settle := func() {
		next := requests.Load() + int64(readers*len(targets))
		for requests.Load() < next && failures.Load() == 0 {
			runtime.Gosched()
		}
	}
	for i, v := range versions[1:] {
		settle()
		_, files, err := staging.st.ReadVersion(v.ManifestID)
		if err != nil {
			t.Fatal(err)
		}
		prev := versions[i].ManifestID
		diff, err := staging.st.ReadDiff(prev, v.ManifestID)
		if err != nil {
			t.Fatal(err)
		}
		unlock, err := e.st.Lock(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		_, err = e.st.Publish(store.Publication{ManifestID: v.ManifestID, Version: v.Version, Branch: v.Branch,
			Files: files, Previous: prev, DiffBody: diff, Retain: 10, Now: time.Now()})
		unlock()
		if err != nil {
			t.Fatal(err)
		}
		if swapped, err := e.repo.Reload(); !swapped || err != nil {
			t.Fatalf("Reload after %s: %v %v", v.ManifestID, swapped, err)
		}
		if n := told.Load(); n != int64(i+1) {
			t.Errorf("after swap %d, OnSwap's function ran %d times", i+1, n)
		}
		// A swapped-in version is served compressed from its first request.
		for _, b := range e.repo.Active().Bodies() {
			if len(b.JSON) >= 4096 && b.Pick([]string{"gzip"}).Encoding.Value == nil {
				t.Fatalf("after the swap to %s, a %d-byte body has no gzip representation", v.ManifestID, len(b.JSON))
			}
		}
	}
	settle()
	close(stop)
	wg.Wait()
	if swapped, err := e.repo.Reload(); swapped || err != nil || told.Load() != int64(len(versions)-1) {
		t.Errorf("a Reload with nothing new: swapped %v (%v), OnSwap's function ran %d times in all", swapped, err, told.Load())
	}
	n := 0
	seen.Range(func(_, _ any) bool { n++; return true })
	if failures.Load() != 0 || n != 5 {
		t.Errorf("%d of %d requests failed; %d versions seen", failures.Load(), requests.Load(), n)
	}
	t.Logf("%d requests over %d versions", requests.Load(), n)
	// Every route still answers per the spec after the swaps.
	for _, target := range targets {
		e.get(t, target)
	}
}

func mustHandler(t *testing.T, repo impl.Repository) http.Handler {
	h, err := api.New(&impl.Server{Repo: repo}, slog.New(slog.NewTextHandler(io.Discard, nil)), nil)
	if err != nil {
		t.Fatal(err)
	}
	return h
}

// TestMetrics: the scrape passes promtool's linter and names every metric the
// README lists.
func TestMetrics(t *testing.T) {
	e := newEnv(t, 1)
	e.get(t, "/v1/weapons")
	res, body := e.get(t, "/v1/metrics")
	if res.StatusCode != http.StatusOK {
		t.Fatalf("/v1/metrics: %d", res.StatusCode)
	}
	problems, err := promlint.New(bytes.NewReader(body)).Lint()
	if err != nil {
		t.Fatalf("parse scrape: %v", err)
	}
	for _, p := range problems {
		t.Errorf("promlint: %s: %s", p.Metric, p.Text)
	}
	for _, name := range []string{
		`refdata_pipeline_stage{stage="idle"} 1`,
		`refdata_pipeline_errors_total{stage="validate"} 0`,
		"refdata_data_age_seconds ",
		"refdata_data_published_timestamp_seconds ",
		"refdata_last_success_timestamp_seconds ",
		"refdata_uptime_seconds ",
		"refdata_reload_errors_total 0",
		`refdata_active_version_info{branch="release-03.10",manifest_id="376A04CC95974716",version="03.10.00.637823"} 1`,
		`refdata_http_request_duration_seconds_count{code="200",route="/v1/weapons"} 1`,
		"refdata_replica_ready 1",
		"refdata_replica_serving_active 1",
		"refdata_replica_behind_seconds 0",
		"refdata_store_up 1",
	} {
		if !bytes.Contains(body, []byte(name)) {
			t.Errorf("scrape lacks %s", name)
		}
	}
}

// TestVersionsAndChanges: /v1/versions lists the store's versions newest first with
// the content hash of each manifest's files and the active one marked; after a
// swap it follows the store. The changelog pages read the stored diff and load the
// older edition from the store.
func TestVersionsAndChanges(t *testing.T) {
	e := newEnv(t, 2)
	list := func() []gen.RetainedVersion {
		res, b := e.get(t, "/v1/versions")
		if res.StatusCode != http.StatusOK {
			t.Fatalf("/v1/versions = %d", res.StatusCode)
		}
		var body gen.RetainedVersionListBody
		if err := json.Unmarshal(b, &body); err != nil {
			t.Fatal(err)
		}
		return body.Data
	}
	ms, err := e.st.Versions()
	if err != nil {
		t.Fatal(err)
	}
	vs := list()
	if len(vs) != 2 || vs[0].ManifestId != id15 || vs[1].ManifestId != id14 || !vs[0].Active || vs[1].Active {
		t.Fatalf("/v1/versions = %+v, want 15 (active) then 14", vs)
	}
	for i, v := range vs {
		m := ms[len(ms)-1-i]
		if v.ContentHash != catalog.ContentHash(m.Files) || v.PublishedAt == nil || *v.PublishedAt != m.PublishedAt.UTC().Format(time.RFC3339) {
			t.Errorf("%s: hash %s, published %v; manifest %s, %s", v.ManifestId, v.ContentHash, v.PublishedAt, catalog.ContentHash(m.Files), m.PublishedAt)
		}
	}
	if ed, err := e.repo.RetainedEdition(strings.ToLower(id14)); err != nil || ed.ManifestID != id14 || ed.ContentHash != vs[1].ContentHash {
		t.Errorf("RetainedEdition(14) = %v, %v", ed, err)
	}
	if _, err := e.repo.RetainedEdition("0000000000000000"); !errors.Is(err, impl.ErrNotFound) {
		t.Errorf("RetainedEdition(unknown) = %v, want ErrNotFound", err)
	}
	for _, target := range []string{"/changes", "/changes/" + id14 + "/" + id15 + "?language=ja-JP", "/"} {
		if res, b := e.get(t, target); res.StatusCode != http.StatusOK || !bytes.Contains(b, []byte(id14)) {
			t.Errorf("%s = %d, or it does not name %s", target, res.StatusCode, id14)
		}
	}

	e.importDir(t, syntheticVersion(t, id3))
	if swapped, err := e.repo.Reload(); !swapped || err != nil {
		t.Fatalf("Reload = %v, %v", swapped, err)
	}
	if vs := list(); len(vs) != 3 || vs[0].ManifestId != id3 || !vs[0].Active || vs[1].Active {
		t.Errorf("after importing a third version: %+v", vs)
	}
}

// TestSwapInstallsStoredBrotli: a version imported with its added bodies'
// brotli has that brotli from its first answer, not brotli made here (the import
// compressed at another quality, so the bytes tell the two apart); a stored
// brotli that fails its checksum is not used, and the bodies are compressed
// here as before.
func TestSwapInstallsStoredBrotli(t *testing.T) {
	stored := representation.Effort{Gzip: 1, Brotli: 4} // this process compresses at Fast (apitest.Setup)
	for _, damaged := range []bool{false, true} {
		t.Run(fmt.Sprintf("damaged=%v", damaged), func(t *testing.T) {
			e := newEnv(t, 1)
			e.repo.Wait()
			restore := representation.UseEffort(stored)
			rep, err := pipeline.Import(e.st, fixtureDir(t, "15"), pipeline.Options{Brotli: true})
			restore()
			if err != nil {
				t.Fatal(err)
			}
			if rep.Brotli == 0 || rep.BrotliBytes == 0 {
				t.Fatalf("the import stored brotli of %d bodies (%d bytes)", rep.Brotli, rep.BrotliBytes)
			}
			if damaged {
				flipByte(t, filepath.Join(e.dir, "versions", id15, "BROTLI.bin"), 1)
			}
			if swapped, err := e.repo.Reload(); !swapped || err != nil {
				t.Fatalf("Reload = %v, %v", swapped, err)
			}
			if damaged {
				e.repo.Wait() // brotli is made here, beside serving
			}
			// currencies changed 14 → 15: its brotli is one the import made,
			// in the first answers of the version when it was stored.
			req := httptest.NewRequest(http.MethodGet, "/v1/currencies", nil)
			req.Header.Set("User-Agent", "refdata-test/1.0 (+https://example.com)")
			req.Header.Set("Accept-Encoding", "br")
			res := e.check.Do(t, e.h, req)
			got, _ := io.ReadAll(res.Body)
			if res.Header.Get("Content-Encoding") != "br" {
				t.Fatalf("/v1/currencies after the swap (damaged %v): Content-Encoding %q, want br", damaged, res.Header.Get("Content-Encoding"))
			}
			_, plain := e.get(t, "/v1/currencies")
			atImport := representation.NewBody(plain, "")
			restore = representation.UseEffort(stored)
			atImport.Compress()
			restore()
			fromStore := bytes.Equal(got, atImport.Pick([]string{"br"}).Bytes)
			m := regexp.MustCompile(`msg="brotli from the store".* bodies=(\d+)`).FindStringSubmatch(e.logs.String())
			switch {
			case !damaged && (!fromStore || m == nil):
				t.Errorf("the swap did not install the stored brotli (bytes from the store: %v): %s", fromStore, e.logs)
			case !damaged && atoi(m[1]) < rep.Brotli:
				// More, not fewer: bodies that share their bytes share a stream.
				t.Errorf("brotli from the store for %s bodies, the import stored %d", m[1], rep.Brotli)
			case damaged && (fromStore || m != nil || !strings.Contains(e.logs.String(), "stored brotli is not used")):
				t.Errorf("damaged brotli: bytes from the store %v, log: %s", fromStore, e.logs)
			}
		})
	}
}

// TestSwapReadsStoredPart: a server swapping to a version from the one its
// import built the part after reads the version from that part instead of
// building it, and serves it; a part that fails its checksum, or was built
// after another version than the one served (a version skipped), is not used
// and the version is built as before.
func TestSwapReadsStoredPart(t *testing.T) {
	for _, tc := range []struct {
		name    string
		damaged bool
		skipped bool // another version is published between: the part is for it
		wantLog string
	}{
		{"after the version served", false, false, `msg="read the version from its stored part"`},
		{"damaged", true, false, `msg="building the version: its stored part cannot be used"`},
		{"a version skipped", false, true, `msg="building the version: its stored part is not for the version served"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t, 1)
			e.repo.Wait()
			want := id15
			rep, err := pipeline.Import(e.st, fixtureDir(t, "15"), pipeline.Options{Part: true})
			if err != nil || rep.PartBytes == 0 {
				t.Fatalf("import: %v, a part of %d bytes", err, rep.PartBytes)
			}
			if tc.skipped {
				want = id3
				if _, err := pipeline.Import(e.st, syntheticVersion(t, id3), pipeline.Options{Part: true}); err != nil {
					t.Fatal(err)
				}
			}
			if tc.damaged {
				flipByte(t, filepath.Join(e.dir, "versions", id15, "PART.bin"), 1)
			}
			if swapped, err := e.repo.Reload(); !swapped || err != nil {
				t.Fatalf("Reload = %v, %v", swapped, err)
			}
			e.repo.Wait()
			if !strings.Contains(e.logs.String(), tc.wantLog) {
				t.Errorf("the log does not say %s:\n%s", tc.wantLog, e.logs)
			}
			if tc.wantLog != `msg="read the version from its stored part"` && strings.Contains(e.logs.String(), `msg="read the version from its stored part"`) {
				t.Errorf("the stored part was used:\n%s", e.logs)
			}
			// The edition served is the one this process builds from the files.
			_, files, err := e.st.ReadVersion(want)
			if err != nil {
				t.Fatal(err)
			}
			built, err := catalog.BuildFiles(files)
			if err != nil {
				t.Fatal(err)
			}
			representation.CompressGzipAll(built.Bodies())
			apitest.SameEdition(t, built, e.repo.Active())
			for _, target := range []string{"/v1/version", "/v1/currencies", "/v1/weapons/skins?language=ja-JP"} {
				if res, _ := e.get(t, target); res.StatusCode != http.StatusOK || res.Header.Get("X-Data-Version") != want {
					t.Errorf("%s: %d, version %s; want 200 from %s", target, res.StatusCode, res.Header.Get("X-Data-Version"), want)
				}
			}
		})
	}
}

func atoi(s string) int {
	n, _ := strconv.Atoi(s)
	return n
}
