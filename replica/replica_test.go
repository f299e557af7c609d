package replica_test

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
	"path"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"github.com/prometheus/client_golang/prometheus/testutil/promlint"

	"github.com/refdata/refdata/blob"
	"github.com/refdata/refdata/catalog"
	"github.com/refdata/refdata/edition"
	"github.com/refdata/refdata/fixtures"
	"github.com/refdata/refdata/gen"
	"github.com/refdata/refdata/handler"
	"github.com/refdata/refdata/pipeline"
	"github.com/refdata/refdata/replica"
	"github.com/refdata/refdata/router"
	"github.com/refdata/refdata/router/apitest"
	"github.com/refdata/refdata/store"
	"github.com/refdata/refdata/store/storetest"
)

const (
	id14      = "376A04CC95974716"
	id15      = "05E83EB5E32657B9"
	id3       = "0000000000000003"
	vandal    = "9c82e19d-4575-0200-1a81-3eacf00cf872"
	userAgent = "refdata-test/1.0 (+https://example.com)"
)

// writeFixture writes embedded version nn ("14" or "15") to dir: trimmed under
// -short (the protocol at a fraction of the size), else whole but lightened
// (storage and swapping, not translations: most skin names go).
func writeFixture(dir, nn string) error {
	if err := fixtures.Write(dir, nn, testing.Short()); err != nil {
		return err
	}
	if !testing.Short() {
		return fixtures.Lighten(dir)
	}
	return nil
}

// writeSynthetic writes a new version derived from 15 to dir: another manifest
// ID and a renamed Vandal, so its bodies differ.
func writeSynthetic(dir, id string) error {
	if err := writeFixture(dir, "15"); err != nil {
		return err
	}
	rewrite := func(file string, f func(data any)) error {
		p := filepath.Join(dir, file)
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		var env map[string]any
		if err := json.Unmarshal(b, &env); err != nil {
			return fmt.Errorf("%s: %w", file, err)
		}
		f(env["data"])
		if b, err = json.Marshal(env); err != nil {
			return err
		}
		return os.WriteFile(p, b, 0o644)
	}
	if err := rewrite("version.json", func(d any) { d.(map[string]any)["manifestId"] = id }); err != nil {
		return err
	}
	return rewrite("en-US/weapons.json", func(d any) {
		for _, w := range d.([]any) {
			if m := w.(map[string]any); m["uuid"] == vandal {
				m["displayName"] = "Vandal " + id
			}
		}
	})
}

// fixtureDir writes embedded version nn to a temp dir (writeFixture).
func fixtureDir(t testing.TB, nn string) string {
	t.Helper()
	dst := filepath.Join(t.TempDir(), "v"+nn)
	if err := writeFixture(dst, nn); err != nil {
		t.Fatal(err)
	}
	return dst
}

// syntheticVersion writes the version writeSynthetic derives to a temp dir.
func syntheticVersion(t testing.TB, id string) string {
	t.Helper()
	dst := filepath.Join(t.TempDir(), "v"+id)
	if err := writeSynthetic(dst, id); err != nil {
		t.Fatal(err)
	}
	return dst
}

// published is when the templates' nth version was published: fixed instants
// in the past, so a diff computed later can be told from one stamped now, and
// compared with the one its import stored.
func published(n int) time.Time { return time.Date(2024, time.January, n, 12, 0, 0, 0, time.UTC) }

// importAt imports dir into st (its bodies compressed at the tests' effort) as
// published at at: the stored diff is generated then too.
func importAt(st store.Backend, dir string, at time.Time) (*pipeline.Report, error) {
	return pipeline.Import(st, dir, pipeline.Options{Effort: apitest.Effort(), Now: func() time.Time { return at }, Bulk: true})
}

// Imports are the slow part of these tests (more so under -race), so each
// store shape is imported once per test binary and copied per test; the
// templates never change once made.
var templates struct {
	once sync.Once
	dirs [4]string // dirs[n]: a store holding the first n of 14, 15, synthetic 3
	err  error
}

// TestMain runs the tests in a temporary directory of their own, removed at
// exit with what they wrote there (the templates).
func TestMain(m *testing.M) { os.Exit(storetest.RunInTempDir(m)) }

func buildTemplates() error {
	root, err := os.MkdirTemp("", "refdata-replica-")
	if err != nil {
		return err
	}
	srcs := []string{filepath.Join(root, "src", "14"), filepath.Join(root, "src", "15"), filepath.Join(root, "src", "3")}
	if err := writeFixture(srcs[0], "14"); err != nil {
		return err
	}
	if err := writeFixture(srcs[1], "15"); err != nil {
		return err
	}
	if err := writeSynthetic(srcs[2], id3); err != nil {
		return err
	}
	for n := 1; n <= 3; n++ {
		templates.dirs[n] = filepath.Join(root, fmt.Sprint(n))
		if n > 1 {
			if err := os.CopyFS(templates.dirs[n], os.DirFS(templates.dirs[n-1])); err != nil {
				return err
			}
		}
		st, err := store.Open(templates.dirs[n])
		if err != nil {
			return err
		}
		if _, err := importAt(st, srcs[n-1], published(n)); err != nil {
			return err
		}
	}
	return nil
}

// copyStore is a copy of the template store holding the first n of 14, 15,
// synthetic 3 (n = 0: an empty store), the test's own.
func copyStore(t *testing.T, n int) (string, *store.Store) {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "store")
	if n > 0 {
		templates.once.Do(func() { templates.err = buildTemplates() })
		if templates.err != nil {
			t.Fatal(templates.err)
		}
		if err := os.CopyFS(dir, os.DirFS(templates.dirs[n])); err != nil {
			t.Fatal(err)
		}
	}
	st, err := store.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	return dir, st
}

type env struct {
	dir   string
	st    *store.Store
	repo  *replica.Repository
	h     http.Handler
	check *apitest.Checker
	logs  *syncBuffer
	// clock is the replica's: it stands still unless the test moves it.
	clock *testClock
}

// newEnv serves a copy of a store holding the first n of: 14, 15, synthetic 3.
func newEnv(t *testing.T, n int) *env {
	t.Helper()
	e := &env{logs: new(syncBuffer)}
	e.dir, e.st = copyStore(t, n)
	e.open(t, nil)
	return e
}

// open opens a Repository on e.st (again: as a restarted replica) and the
// API over it, as serve wires them.
func (e *env) open(t *testing.T, fallback *edition.Edition) {
	t.Helper()
	logger := slog.New(slog.NewTextHandler(e.logs, nil))
	reg := prometheus.NewRegistry()
	if e.clock == nil {
		e.clock = newClock(time.Now())
	}
	repo, err := replica.Open(e.st, logger, replica.NewMetrics(reg, time.Now()), fallback, replica.WithClock(e.clock.Now))
	if err != nil {
		t.Fatal(err)
	}
	pipeline.NewMetrics(reg) // as serve wires them: one scrape for both
	replica.RegisterReplicaMetrics(reg, repo)
	h, err := router.New(&handler.Server{Repo: repo, Metrics: promhttp.HandlerFor(reg, promhttp.HandlerOpts{})}, logger, router.NewHTTPMetrics(reg))
	if err != nil {
		t.Fatal(err)
	}
	e.repo, e.h, e.check = repo, h, apitest.New(t)
}

func (e *env) importDir(t *testing.T, dir string) *pipeline.Report {
	t.Helper()
	rep, err := importAt(e.st, dir, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	return rep
}

// transfer is the publication of version id of from's store into to's, as
// its import made it: its index, and the one segment it names that to's
// store lacks (each import writes at most one), read from from's directory.
// The caller sets the rest.
func transfer(t *testing.T, from, to *env, id string) store.Publication {
	t.Helper()
	m, index, err := from.st.ReadIndex(id, "")
	if err != nil {
		t.Fatal(err)
	}
	p := store.Publication{ManifestID: id, Index: index, Segments: m.Segments}
	for _, sum := range m.Segments {
		b, err := os.ReadFile(blob.Path(filepath.Join(from.dir, "segments"), sum))
		if err != nil {
			t.Fatal(err)
		}
		if _, err := to.st.Segment(sum, int64(len(b)), nil); err == nil {
			continue
		}
		if p.Segment != nil {
			t.Fatalf("version %s names two segments %s lacks", id, to.dir)
		}
		p.Segment = &blob.Finished{Sum: sum, Size: int64(len(b)), Mem: b}
	}
	return p
}

// ownSegment is the segment version id names and version base does not: the
// one id's import wrote.
func ownSegment(t *testing.T, e *env, base, id string) string {
	t.Helper()
	mb, _, err := e.st.ReadIndex(base, "")
	if err != nil {
		t.Fatal(err)
	}
	m, _, err := e.st.ReadIndex(id, "")
	if err != nil {
		t.Fatal(err)
	}
	var own []string
	for _, sum := range m.Segments {
		if !slices.Contains(mb.Segments, sum) {
			own = append(own, sum)
		}
	}
	if len(own) != 1 {
		t.Fatalf("%s names %d segments %s does not: %v", id, len(own), base, own)
	}
	return own[0]
}

// get serves one request through the spec-validating checker; header holds
// request header fields as name, value pairs.
func (e *env) get(t *testing.T, target string, header ...string) (*http.Response, []byte) {
	t.Helper()
	return do(t, e.check, e.h, target, header...)
}

func do(t testing.TB, check *apitest.Checker, h http.Handler, target string, header ...string) (*http.Response, []byte) {
	t.Helper()
	req := httptest.NewRequest(http.MethodGet, target, nil)
	req.Header.Set("User-Agent", userAgent)
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	res := check.Do(t, h, req)
	b, _ := io.ReadAll(res.Body)
	return res, b
}

// syncBuffer is a log destination goroutines share.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

func decodeDiff(t *testing.T, b []byte) gen.Diff {
	t.Helper()
	var d gen.DiffBody
	if err := json.Unmarshal(b, &d); err != nil {
		t.Fatalf("diff body: %v", err)
	}
	return d.Data
}

// manifest is the stored manifest of version id.
func manifest(t *testing.T, st store.Backend, id string) store.Manifest {
	t.Helper()
	ms, err := st.Versions()
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range ms {
		if m.ManifestID == id {
			return m
		}
	}
	t.Fatalf("no stored version %s", id)
	return store.Manifest{}
}

// TestLatestDiff: the first version has no latest diff; after a swap the
// latest diff is the one stored with the new version, in every encoding at
// once.
func TestLatestDiff(t *testing.T) {
	t.Parallel()
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
	stored, err := e.st.ReadDiff(id14, id15)
	if err != nil || !bytes.Equal(b, stored) {
		t.Errorf("/v1/diff/latest is not the stored diff (%v)", err)
	}
	// A client that accepts brotli or gzip gets it from the first answer (the
	// checker decodes it and compares it with the schema).
	for _, enc := range []string{"br", "gzip"} {
		if res, _ := e.get(t, "/v1/diff/latest", "Accept-Encoding", enc); res.Header.Get("Content-Encoding") != enc {
			t.Errorf("/v1/diff/latest, Accept-Encoding %s: Content-Encoding %q", enc, res.Header.Get("Content-Encoding"))
		}
	}
}

// TestSwapServesCompressedAtOnce: a swapped-in version's bodies, changed ones
// and unchanged ones, are served in gzip and brotli from its first answer:
// they come compressed in its segments, nothing is compressed after the swap.
func TestSwapServesCompressedAtOnce(t *testing.T) {
	t.Parallel()
	e := newEnv(t, 1)
	e.importDir(t, fixtureDir(t, "15"))
	if swapped, err := e.repo.Reload(); !swapped || err != nil {
		t.Fatalf("Reload = %v, %v", swapped, err)
	}
	// currencies changed 14 → 15; the weapon list in ja-JP did not.
	for _, target := range []string{"/v1/currencies", "/v1/weapons?language=ja-JP"} {
		for _, tc := range []struct{ accept, want string }{{"gzip", "gzip"}, {"br", "br"}, {"gzip, br", "br"}, {"", ""}} {
			res, _ := e.get(t, target, "Accept-Encoding", tc.accept)
			if res.StatusCode != http.StatusOK || res.Header.Get("Content-Encoding") != tc.want || res.Header.Get("X-Data-Version") != id15 {
				t.Errorf("%s, Accept-Encoding %q, right after the swap: %d, Content-Encoding %q from %s; want %q from %s",
					target, tc.accept, res.StatusCode, res.Header.Get("Content-Encoding"), res.Header.Get("X-Data-Version"), tc.want, id15)
			}
		}
	}
}

// TestReloadSkipsToNewest: a replica that missed a version (two were published
// between its reloads) swaps straight to the one the pointer names, and its
// latest diff is the pointer's.
func TestReloadSkipsToNewest(t *testing.T) {
	t.Parallel()
	e := newEnv(t, 1)
	e.importDir(t, fixtureDir(t, "15"))
	e.importDir(t, syntheticVersion(t, id3))
	if swapped, err := e.repo.Reload(); !swapped || err != nil {
		t.Fatalf("Reload = %v, %v", swapped, err)
	}
	if got := e.repo.Active().ManifestID; got != id3 {
		t.Fatalf("serving %s, want %s", got, id3)
	}
	res, b := e.get(t, "/v1/weapons/"+vandal)
	if res.StatusCode != http.StatusOK || res.Header.Get("X-Data-Version") != id3 || !bytes.Contains(b, []byte("Vandal "+id3)) {
		t.Errorf("/v1/weapons/%s: %d from %s, %.200s", vandal, res.StatusCode, res.Header.Get("X-Data-Version"), b)
	}
	if _, b := e.get(t, "/v1/diff/latest"); decodeDiff(t, b).FromVersion != id15 {
		t.Errorf("latest diff from %s, want %s", decodeDiff(t, b).FromVersion, id15)
	}
}

// TestReloadTakesReplace: a version published again (import --force, here
// with its media URLs pointing to a mirror) is read by a replica serving it:
// the pointer names the same version with another manifest.
func TestReloadTakesReplace(t *testing.T) {
	t.Parallel()
	e := newEnv(t, 2)
	const mirror = "https://mirror.example/media/"
	if _, err := pipeline.Import(e.st, fixtureDir(t, "15"), pipeline.Options{Effort: apitest.Effort(), Force: true, Bulk: true,
		MediaURL: func(u string) (string, bool) { return mirror + path.Base(u), true }}); err != nil {
		t.Fatal(err)
	}
	if swapped, err := e.repo.Reload(); !swapped || err != nil {
		t.Fatalf("Reload after the replace = %v, %v; want a swap", swapped, err)
	}
	if res, b := e.get(t, "/v1/weapons/"+vandal); res.StatusCode != http.StatusOK || !bytes.Contains(b, []byte(mirror)) {
		t.Errorf("/v1/weapons/%s after the replace: %d, %.200s; want the mirror's URLs", vandal, res.StatusCode, b)
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

// TestCorruptDiff: a damaged stored diff is a 500 JSON error on
// /v1/diff/latest; the catalog keeps being served; /v1/diff/{from}/{to}
// computes the diff again (the bytes the import stored: stamped with the newer
// version's publication) and stores it, which mends /v1/diff/latest too.
func TestCorruptDiff(t *testing.T) {
	t.Parallel()
	e := newEnv(t, 2)
	stored, err := e.st.ReadDiff(id14, id15)
	if err != nil {
		t.Fatal(err)
	}
	flipByte(t, filepath.Join(e.dir, "diffs", id14+"-"+id15+".json"), 20)
	res, body := e.get(t, "/v1/diff/latest")
	if res.StatusCode != http.StatusInternalServerError || res.Header.Get("Content-Type") != "application/json" {
		t.Fatalf("corrupt diff: %d %s %s", res.StatusCode, res.Header.Get("Content-Type"), body)
	}
	if res, _ := e.get(t, "/v1/weapons/"+vandal); res.StatusCode != http.StatusOK {
		t.Errorf("catalog after a diff error: %d", res.StatusCode)
	}
	res, got := e.get(t, "/v1/diff/"+id14+"/"+id15)
	if res.StatusCode != http.StatusOK || !bytes.Equal(got, stored) {
		t.Errorf("/v1/diff/{from}/{to} over a damaged file: %d, the body the import stored: %v\n%.300s\n%.300s", res.StatusCode, bytes.Equal(got, stored), got, stored)
	}
	if again, err := e.st.ReadDiff(id14, id15); err != nil || !bytes.Equal(again, stored) {
		t.Errorf("the computed diff was not stored again (%v), or not the bytes the import stored (%d bytes, the import's %d)", err, len(again), len(stored))
	}
	if res, b := e.get(t, "/v1/diff/latest"); res.StatusCode != http.StatusOK || !bytes.Equal(b, stored) {
		t.Errorf("/v1/diff/latest once the diff is stored again: %d", res.StatusCode)
	}
}

// TestNotReadyWithoutLatestDiff: a replica whose active version's stored diff
// cannot be read is not ready, from its start: /readyz is 200 only once every
// route answers, so it never says 200 before the first poll and 503 after.
func TestNotReadyWithoutLatestDiff(t *testing.T) {
	t.Parallel()
	for _, polled := range []bool{false, true} {
		e := &env{logs: new(syncBuffer)}
		e.dir, e.st = copyStore(t, 2)
		flipByte(t, filepath.Join(e.dir, "diffs", id14+"-"+id15+".json"), 20)
		e.open(t, nil)
		if polled {
			if _, err := e.repo.Reload(); err != nil {
				t.Fatal(err)
			}
		}
		if res, b := e.get(t, "/readyz"); res.StatusCode != http.StatusServiceUnavailable || !bytes.Contains(b, []byte("latest diff")) {
			t.Errorf("/readyz with a damaged latest diff (polled %v): %d %s, want 503 naming the latest diff", polled, res.StatusCode, b)
		}
	}
}

// publishDuringRead is a store whose active pointer moves to another version
// while a replica reads the active one's index: a publish racing a start.
type publishDuringRead struct {
	*store.Store
	t    *testing.T
	to   string
	once sync.Once
}

func (s *publishDuringRead) ReadIndex(id, manifestSHA string) (store.Manifest, []byte, error) {
	m, b, err := s.Store.ReadIndex(id, manifestSHA)
	s.once.Do(func() {
		unlock, lerr := s.Lock(context.Background())
		if lerr == nil {
			_, lerr = s.Activate(s.to, nil, time.Now())
			unlock()
		}
		if lerr != nil {
			s.t.Error(lerr)
		}
	})
	return m, b, err
}

// TestOpenDuringPublish: a replica that starts while a publish moves the
// active pointer serves the version it read, and the new one at its first
// poll, ready; it must not take the new pointer for the version it read and
// stay behind, not ready, until the next publish.
func TestOpenDuringPublish(t *testing.T) {
	t.Parallel()
	_, st := copyStore(t, 2)
	repo, err := replica.Open(&publishDuringRead{Store: st, t: t, to: id14}, slog.New(slog.DiscardHandler), replica.NewMetrics(prometheus.NewRegistry(), time.Now()), nil)
	if err != nil {
		t.Fatal(err)
	}
	if got := repo.Active().ManifestID; got != id15 {
		t.Fatalf("serving %s at start, want %s, the version active when it was read", got, id15)
	}
	if swapped, err := repo.Reload(); !swapped || err != nil || repo.Active().ManifestID != id14 {
		t.Errorf("first poll after a publish during the start: swapped %v, %v; serving %s, want %s", swapped, err, repo.Active().ManifestID, id14)
	}
	if st, ok, why := repo.Ready(); !ok {
		t.Errorf("not ready after the first poll: %s (%+v)", why, st)
	}
}

// TestDiffBetweenVersions: /v1/diff/{from}/{to} serves the stored diff, or
// computes one and stores it; any letter case; either order; 404 for a
// version not retained.
func TestDiffBetweenVersions(t *testing.T) {
	t.Parallel()
	e := newEnv(t, 3)
	_, latest := e.get(t, "/v1/diff/latest")
	if d := decodeDiff(t, latest); d.FromVersion != id15 || d.ToVersion != id3 {
		t.Fatalf("latest diff %s → %s", d.FromVersion, d.ToVersion)
	}
	res, fwd := e.get(t, "/v1/diff/"+id14+"/"+id15)
	if stored, err := e.st.ReadDiff(id14, id15); res.StatusCode != http.StatusOK || err != nil || !bytes.Equal(fwd, stored) {
		t.Fatalf("14→15: %d, the stored diff: %v", res.StatusCode, err)
	}
	if _, err := e.st.ReadDiff(id15, id14); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("15→14 stored before it was asked for: %v", err)
	}
	_, back := e.get(t, "/v1/diff/"+strings.ToLower(id15)+"/"+id14)
	f, b := decodeDiff(t, fwd), decodeDiff(t, back)
	if f.Summary.TotalAdded != b.Summary.TotalRemoved || f.Summary.TotalRemoved != b.Summary.TotalAdded || f.Summary.TotalChanged != b.Summary.TotalChanged || f.Summary == (gen.DiffSummary{}) {
		t.Errorf("15→14 is not 14→15 reversed: %+v vs %+v", f.Summary, b.Summary)
	}
	if stored, err := e.st.ReadDiff(id15, id14); err != nil || !bytes.Equal(stored, back) {
		t.Errorf("the computed diff was not stored: %v", err)
	}
	_, skip := e.get(t, "/v1/diff/"+id14+"/"+id3)
	if d := decodeDiff(t, skip); d.Categories.Weapons.Changed == nil || d.FromVersion != id14 || d.ToVersion != id3 {
		t.Errorf("14→synthetic: %s → %s, %+v", d.FromVersion, d.ToVersion, d.Summary)
	}
	for _, target := range []string{"/v1/diff/" + id14 + "/0123456789ABCDEF", "/v1/diff/0123456789ABCDEF/" + id14} {
		if res, _ := e.get(t, target); res.StatusCode != http.StatusNotFound {
			t.Errorf("%s: %d, want 404", target, res.StatusCode)
		}
	}
}

// TestComputedDiffIsStable: a diff the repository computes for a pair with no
// stored diff is stamped with the newer version's publishedAt (in either
// order), not the instant it was asked for, so two replicas computing it make
// the same bytes: two Repository instances, on two copies of a store, do.
func TestComputedDiffIsStable(t *testing.T) {
	t.Parallel()
	a, b := newEnv(t, 3), newEnv(t, 3)
	newer := manifest(t, a.st, id3).PublishedAt.UTC().Format(time.RFC3339)
	if newer != published(3).Format(time.RFC3339) {
		t.Fatalf("%s published %s, the template says %s", id3, newer, published(3))
	}
	for _, pair := range [][2]string{{id14, id3}, {id3, id14}} {
		target := "/v1/diff/" + pair[0] + "/" + pair[1]
		for _, e := range []*env{a, b} {
			if _, err := e.st.ReadDiff(pair[0], pair[1]); !errors.Is(err, store.ErrNotFound) {
				t.Fatalf("%s is stored already (%v): nothing would be computed", target, err)
			}
		}
		resA, bodyA := a.get(t, target)
		resB, bodyB := b.get(t, target)
		if resA.StatusCode != http.StatusOK || resB.StatusCode != http.StatusOK {
			t.Fatalf("%s: %d and %d", target, resA.StatusCode, resB.StatusCode)
		}
		if d := decodeDiff(t, bodyA); d.GeneratedAt != newer || d.FromVersion != pair[0] || d.ToVersion != pair[1] {
			t.Errorf("%s: %s → %s generated at %s, want %s (%s's publishedAt)", target, d.FromVersion, d.ToVersion, d.GeneratedAt, newer, id3)
		}
		if !bytes.Equal(bodyA, bodyB) {
			t.Errorf("%s: two repositories computed different bodies:\n%.300s\n%.300s", target, bodyA, bodyB)
		}
		if resA.Header.Get("ETag") != resB.Header.Get("ETag") {
			t.Errorf("%s: ETags %s and %s", target, resA.Header.Get("ETag"), resB.Header.Get("ETag"))
		}
	}
}

// TestTraversal: path segments that try to leave the API give 400/404 and the
// store opens no file for them; a sentinel a traversal would name stays untouched.
func TestTraversal(t *testing.T) {
	t.Parallel()
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
		"/v1/export/..%2F..%2FACTIVE",
	} {
		res, body := e.get(t, target)
		if res.StatusCode != http.StatusBadRequest && res.StatusCode != http.StatusNotFound {
			t.Errorf("%s: %d %s, want 400 or 404", target, res.StatusCode, body)
		}
		if bytes.Contains(body, []byte("secret")) {
			t.Errorf("%s leaked the sentinel", target)
		}
	}
	mu.Lock()
	if len(opened) != 0 {
		t.Errorf("traversal requests opened %q", opened)
	}
	mu.Unlock()
	after, err := os.Stat(sentinel)
	if err != nil || !after.ModTime().Equal(before.ModTime()) || after.Size() != before.Size() {
		t.Errorf("sentinel changed: %v", err)
	}
}

// TestFallbackOnDamagedActive: an active version whose edition index or
// manifest fails its checksum, or a segment of whose bodies is missing or cut
// short, at start-up is not served; the newest intact one is, and the log
// says why.
func TestFallbackOnDamagedActive(t *testing.T) {
	t.Parallel()
	const index = "INDEX.gz"
	for _, tc := range []struct {
		name   string
		damage func(t *testing.T, v, seg string) // the version's directory; the segment only it names
		why    string                            // in the log; "segment" for the segment's name
	}{
		{"index changed", func(t *testing.T, v, _ string) {
			// A well-formed gzip of other bytes: the index's own checksum.
			p := filepath.Join(v, index)
			z, err := os.ReadFile(p)
			if err != nil {
				t.Fatal(err)
			}
			b, err := store.DecompressFile(z)
			if err != nil {
				t.Fatal(err)
			}
			b[100] ^= 1
			if err := os.WriteFile(p, store.CompressFile(b), 0o644); err != nil {
				t.Fatal(err)
			}
		}, "edition fails its checksum"},
		{"index file flipped", func(t *testing.T, v, _ string) { flipByte(t, filepath.Join(v, index), 100) }, "edition: corrupt"},
		{"index truncated", func(t *testing.T, v, _ string) {
			p := filepath.Join(v, index)
			st, err := os.Stat(p)
			if err != nil {
				t.Fatal(err)
			}
			if err := os.Truncate(p, st.Size()/2); err != nil {
				t.Fatal(err)
			}
		}, "edition: corrupt"},
		{"index missing", func(t *testing.T, v, _ string) {
			if err := os.Remove(filepath.Join(v, index)); err != nil {
				t.Fatal(err)
			}
		}, "edition: corrupt"},
		{"manifest changed", func(t *testing.T, v, _ string) {
			p := filepath.Join(v, "MANIFEST.json")
			b, err := os.ReadFile(p)
			if err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(p, append(b, ' '), 0o644); err != nil {
				t.Fatal(err)
			}
		}, "manifest checksum"},
		{"segment missing", func(t *testing.T, _, seg string) {
			if err := os.Remove(seg); err != nil {
				t.Fatal(err)
			}
		}, "segment"},
		{"segment cut short", func(t *testing.T, _, seg string) {
			st, err := os.Stat(seg)
			if err != nil {
				t.Fatal(err)
			}
			if err := os.Truncate(seg, st.Size()-1); err != nil {
				t.Fatal(err)
			}
		}, "segment"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			e := &env{logs: new(syncBuffer)}
			e.dir, e.st = copyStore(t, 2)
			v15 := filepath.Join(e.dir, "versions", id15)
			sum := ownSegment(t, e, id14, id15)
			seg := blob.Path(filepath.Join(e.dir, "segments"), sum)
			intact := map[string][]byte{}
			for _, p := range []string{filepath.Join(v15, index), filepath.Join(v15, "MANIFEST.json"), seg} {
				b, err := os.ReadFile(p)
				if err != nil {
					t.Fatal(err)
				}
				intact[p] = b
			}
			if tc.why == "segment" {
				tc.why = "segment " + sum[:12]
			}
			tc.damage(t, v15, seg)
			e.open(t, nil)
			if got := e.repo.Active().ManifestID; got != id14 {
				t.Fatalf("serving %s, want the intact %s", got, id14)
			}
			if logs := e.logs.String(); !strings.Contains(logs, "fails its checks") || !strings.Contains(logs, tc.why) || !strings.Contains(logs, id15) {
				t.Errorf("the log does not say why (%s):\n%s", tc.why, logs)
			}
			if res, _ := e.get(t, "/v1/version"); res.Header.Get("X-Data-Version") != id14 {
				t.Errorf("X-Data-Version %s", res.Header.Get("X-Data-Version"))
			}
			// It was not the pointer's: it has no latest diff.
			if res, _ := e.get(t, "/v1/diff/latest"); res.StatusCode != http.StatusNotFound {
				t.Errorf("/v1/diff/latest of the fallback: %d, want 404", res.StatusCode)
			}
			// Not the store's active version: not ready, from the start.
			if res, b := e.get(t, "/readyz"); res.StatusCode != http.StatusServiceUnavailable || !bytes.Contains(b, []byte(id15)) {
				t.Errorf("/readyz serving %s with %s active and damaged: %d %s, want 503 naming %s", id14, id15, res.StatusCode, b, id15)
			}
			// The damaged version is not tried again while the pointer stays.
			if swapped, err := e.repo.Reload(); swapped || err != nil || e.repo.Active().ManifestID != id14 {
				t.Errorf("Reload with the damaged version active: %v, %v; serving %s", swapped, err, e.repo.Active().ManifestID)
			}
			// Repaired in place (a backup restored under the replica), it is
			// tried again once the retry interval has passed, not before,
			// and served.
			for p, b := range intact {
				if err := os.WriteFile(p, b, 0o644); err != nil {
					t.Fatal(err)
				}
			}
			e.clock.Add(replica.DefaultBadRetry - time.Nanosecond)
			if swapped, err := e.repo.Reload(); swapped || err != nil || e.repo.Active().ManifestID != id14 {
				t.Errorf("Reload after the repair, just before the retry interval: %v, %v; serving %s, want %s", swapped, err, e.repo.Active().ManifestID, id14)
			}
			e.clock.Add(time.Nanosecond)
			if swapped, err := e.repo.Reload(); !swapped || err != nil || e.repo.Active().ManifestID != id15 {
				t.Errorf("Reload after the repair and the retry interval: %v, %v; serving %s, want %s", swapped, err, e.repo.Active().ManifestID, id15)
			}
		})
	}
}

// TestEmptyStoreServesFallback: a replica on a store with no version serves
// the fallback edition given to Open, ready, until a version is published,
// and then swaps to it.
func TestEmptyStoreServesFallback(t *testing.T) {
	t.Parallel()
	r, err := fixtures.Small("14")
	if err != nil {
		t.Fatal(err)
	}
	fallback := edition.New(r)
	e := &env{logs: new(syncBuffer)}
	e.dir, e.st = copyStore(t, 0)
	e.open(t, fallback)
	var told atomic.Int64
	e.repo.OnSwap(func() { told.Add(1) })
	if e.repo.Active() != fallback {
		t.Fatalf("serving %s, not the fallback", e.repo.Active().ManifestID)
	}
	if !strings.Contains(e.logs.String(), "serving the embedded sample data") {
		t.Errorf("the log does not say the fallback is served:\n%s", e.logs)
	}
	for _, tc := range []struct {
		target string
		status int
		says   string
	}{
		{"/v1/version", http.StatusOK, ""},
		{"/v1/weapons/" + vandal, http.StatusOK, ""},
		{"/readyz", http.StatusOK, ""},
		// The fallback is one version, with no diff: the 404 says why.
		{"/v1/diff/latest", http.StatusNotFound, "embedded sample data"},
		{"/v1/export", http.StatusNotFound, "embedded sample data"}, // no stored files
	} {
		res, b := e.get(t, tc.target)
		if res.StatusCode != tc.status || !bytes.Contains(b, []byte(tc.says)) {
			t.Errorf("%s on an empty store: %d %.200s, want %d saying %q", tc.target, res.StatusCode, b, tc.status, tc.says)
		}
		if tc.status == http.StatusOK && tc.target != "/readyz" && res.Header.Get("X-Data-Version") != id14 {
			t.Errorf("%s on an empty store: from %q, want the fallback %s", tc.target, res.Header.Get("X-Data-Version"), id14)
		}
	}
	if vs := e.repo.Versions().Versions; len(vs) != 1 || vs[0].ManifestId != id14 || !vs[0].Active {
		t.Errorf("/v1/versions on an empty store: %+v, want the fallback alone", vs)
	}
	if swapped, err := e.repo.Reload(); swapped || err != nil {
		t.Errorf("Reload of an empty store: %v, %v", swapped, err)
	}
	if _, ok, why := e.repo.Ready(); !ok {
		t.Errorf("not ready on an empty store: %s", why)
	}
	e.importDir(t, fixtureDir(t, "15"))
	if swapped, err := e.repo.Reload(); !swapped || err != nil {
		t.Fatalf("Reload after the first publish = %v, %v", swapped, err)
	}
	if got := e.repo.Active().ManifestID; got != id15 || told.Load() != 1 {
		t.Errorf("after the first publish: serving %s, OnSwap's function ran %d times", got, told.Load())
	}
	if res, _ := e.get(t, "/readyz"); res.StatusCode != http.StatusOK {
		t.Errorf("/readyz after the first publish: %d", res.StatusCode)
	}
}

// TestEmptyStoreNotReady: a replica on a store with no version and no
// fallback is alive but not ready, answers 503 wherever a version is needed,
// and serves the first version once it is published.
func TestEmptyStoreNotReady(t *testing.T) {
	t.Parallel()
	e := &env{logs: new(syncBuffer)}
	e.dir, e.st = copyStore(t, 0)
	e.open(t, nil)
	for _, tc := range []struct {
		target string
		status int
		says   string
	}{
		{"/readyz", http.StatusServiceUnavailable, replica.NoVersion},
		{"/v1/weapons", http.StatusServiceUnavailable, replica.NoVersion + "; retry later"},
		{"/v1/version", http.StatusServiceUnavailable, replica.NoVersion},
		{"/healthz", http.StatusOK, ""},
		{"/v1/metrics", http.StatusOK, "refdata_replica_ready 0"},
	} {
		if res, b := e.get(t, tc.target); res.StatusCode != tc.status || !bytes.Contains(b, []byte(tc.says)) {
			t.Errorf("%s on an empty store: %d %.200s, want %d saying %q", tc.target, res.StatusCode, b, tc.status, tc.says)
		}
	}
	// A state, not an error: every probe would log one.
	if logs := e.logs.String(); !strings.Contains(logs, "the store holds no version yet; not ready, answering 503 until one is imported") || strings.Contains(logs, "level=ERROR") {
		t.Errorf("the log does not say the replica waits for a version, or logs its 503s as errors:\n%s", logs)
	}
	e.importDir(t, fixtureDir(t, "15"))
	if swapped, err := e.repo.Reload(); !swapped || err != nil {
		t.Fatalf("Reload after the first publish = %v, %v", swapped, err)
	}
	for _, target := range []string{"/readyz", "/v1/weapons"} {
		if res, b := e.get(t, target); res.StatusCode != http.StatusOK {
			t.Errorf("%s after the first publish: %d %.200s", target, res.StatusCode, b)
		}
	}
}

// TestPending: a replica whose store cannot be reached at start answers
// before it is: alive, not ready, 503 wherever a version is needed; it keeps
// trying, and once the store opens serves its version, ready.
func TestPending(t *testing.T) {
	t.Parallel()
	_, st := copyStore(t, 2)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	up := make(chan struct{})
	var tries atomic.Int64
	tried := make(chan struct{}, 1)
	connect := func(context.Context) (store.Backend, error) {
		tries.Add(1)
		select {
		case <-up:
			return st, nil
		default:
			select {
			case tried <- struct{}{}:
			default:
			}
			return nil, errors.New("connection refused")
		}
	}
	logger := slog.New(slog.NewTextHandler(io.Discard, nil))
	repo := replica.NewPending("loading", true)
	var told atomic.Int64
	repo.OnSwap(func() { told.Add(1) })
	opened := make(chan *replica.Repository, 1)
	go func() {
		r, err := replica.OpenRetrying(ctx, connect, logger, replica.NewMetrics(prometheus.NewRegistry(), time.Now()), nil, time.Millisecond, repo)
		if err != nil {
			t.Error(err)
		}
		opened <- r
	}()
	h, err := router.New(&handler.Server{Repo: repo}, logger, nil)
	if err != nil {
		t.Fatal(err)
	}
	check := apitest.New(t)
	<-tried
	for _, tc := range []struct {
		target string
		status int
	}{
		{"/readyz", http.StatusServiceUnavailable},
		{"/healthz", http.StatusOK},
		{"/v1/version", http.StatusServiceUnavailable},
	} {
		if res, b := do(t, check, h, tc.target); res.StatusCode != tc.status || tc.status != 200 && !bytes.Contains(b, []byte("cannot be reached")) {
			t.Errorf("%s with the store unreachable: %d %s, want %d saying why", tc.target, res.StatusCode, b, tc.status)
		}
	}
	close(up)
	select {
	case r := <-opened:
		repo.Set(r)
	case <-time.After(time.Minute):
		t.Fatalf("the store never opened after %d tries", tries.Load())
	}
	if res, _ := do(t, check, h, "/readyz"); res.StatusCode != http.StatusOK || told.Load() != 1 {
		t.Errorf("/readyz once the store opened: %d; OnSwap's function ran %d times, want 1", res.StatusCode, told.Load())
	}
	if res, _ := do(t, check, h, "/v1/version"); res.Header.Get("X-Data-Version") != id15 {
		t.Errorf("once the store opened: serving %s, want %s", res.Header.Get("X-Data-Version"), id15)
	}
	if _, b := do(t, check, h, "/v1/diff/latest"); decodeDiff(t, b).ToVersion != id15 {
		t.Errorf("/v1/diff/latest once the store opened: %.200s", b)
	}
}

// TestReloadFailureCounted: a published version whose index fails its checks
// when a replica loads it is counted, the replica keeps serving what it had,
// says it is not ready (it is not serving the store's active version), and
// does not try the same pointer again.
func TestReloadFailureCounted(t *testing.T) {
	t.Parallel()
	e := newEnv(t, 1)
	e.importDir(t, fixtureDir(t, "15"))
	flipByte(t, filepath.Join(e.dir, "versions", id15, "INDEX.gz"), 100)
	if swapped, err := e.repo.Reload(); swapped || err == nil {
		t.Fatalf("reload of a damaged version: swapped %v, err %v", swapped, err)
	}
	if got := e.repo.Active().ManifestID; got != id14 {
		t.Errorf("serving %s after a failed reload, want %s", got, id14)
	}
	if swapped, err := e.repo.Reload(); swapped || err != nil {
		t.Errorf("a second reload of the same pointer: swapped %v, err %v; want it not tried again", swapped, err)
	}
	_, body := e.get(t, "/v1/metrics")
	for _, want := range []string{"refdata_reload_errors_total 1", `refdata_pipeline_errors_total{stage="load"} 0`, "refdata_replica_ready 0"} {
		if !bytes.Contains(body, []byte(want)) {
			t.Errorf("scrape lacks %s", want)
		}
	}
	res, b := e.get(t, "/readyz")
	if res.StatusCode != http.StatusServiceUnavailable || !bytes.Contains(b, []byte(id15)) {
		t.Errorf("/readyz serving %s with %s active: %d %s, want 503 naming %s", id14, id15, res.StatusCode, b, id15)
	}
	st, ok, _ := e.repo.Ready()
	if ok || st.Serving != id14 || st.Active == nil || *st.Active != id15 {
		t.Errorf("Ready = %+v, %v", st, ok)
	}
}

// TestHotSwap: readers hammer list and by-uuid routes in every encoding while
// four versions are published after the first; every response is 200 and its
// bytes are exactly those of the version its X-Data-Version header names. The
// versions are imported into a staging store first and published from there
// (files, diff, index and its new segment), so the readers race the publish and the swap rather
// than the import.
func TestHotSwap(t *testing.T) {
	t.Parallel()
	staging := newEnv(t, 3)
	for i := 4; i <= 5; i++ {
		if _, err := importAt(staging.st, syntheticVersion(t, fmt.Sprintf("%016X", i)), published(i)); err != nil {
			t.Fatal(err)
		}
	}
	versions, err := staging.st.Versions()
	if err != nil || len(versions) != 5 {
		t.Fatalf("staging has %d versions: %v", len(versions), err)
	}
	// Small bodies (the race detector makes big copies slow); each changes across
	// the five versions: currencies and events 14→15, Vandal in every version.
	targets := []string{"/v1/currencies", "/v1/events?language=de-DE", "/v1/version", "/v1/weapons/" + vandal, "/v1/weapons/" + vandal + "?language=ja-JP", "/v1/playertitles"}
	encodings := []string{"", "gzip", "br"}
	type answer struct {
		body []byte
		etag string
	}
	want := map[string]map[string]answer{} // manifest ID → target and encoding → answer
	for _, v := range versions {
		_, index, err := staging.st.ReadIndex(v.ManifestID, "")
		if err != nil {
			t.Fatal(err)
		}
		ed, err := edition.Decode(index, func(sum string, size int64) (*blob.Segment, error) {
			return staging.st.Segment(sum, size, nil)
		})
		if err != nil {
			t.Fatal(err)
		}
		h := mustHandler(t, edition.Serve(ed))
		want[v.ManifestID] = map[string]answer{}
		for _, target := range targets {
			for _, enc := range encodings {
				res, b := do(t, staging.check, h, target, "Accept-Encoding", enc)
				want[v.ManifestID][target+" "+enc] = answer{b, res.Header.Get("ETag")}
			}
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
	for g := range readers {
		wg.Go(func() {
			for i := 0; ; i++ {
				select {
				case <-stop:
					return
				default:
				}
				target, enc := targets[(g+i)%len(targets)], encodings[(g+i/len(targets))%len(encodings)]
				res, b := e.get(t, target, "Accept-Encoding", enc)
				requests.Add(1)
				ver := res.Header.Get("X-Data-Version")
				seen.Store(ver, true)
				bodies, ok := want[ver]
				if w := bodies[target+" "+enc]; res.StatusCode != http.StatusOK || !ok || !bytes.Equal(b, w.body) || res.Header.Get("ETag") != w.etag {
					if failures.Add(1) <= 5 {
						t.Errorf("%s (%q): %d from version %q (known: %v) does not match that version's answer", target, enc, res.StatusCode, ver, ok)
					}
				}
			}
		})
	}
	// Between publishes, wait until every reader has asked for every target
	// in every encoding again, rather than sleeping and hoping they ran.
	settle := func() {
		next := requests.Load() + int64(readers*len(targets)*len(encodings))
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
		p := transfer(t, staging, e, v.ManifestID)
		prev := versions[i].ManifestID
		diff, err := staging.st.ReadDiff(prev, v.ManifestID)
		if err != nil {
			t.Fatal(err)
		}
		unlock, err := e.st.Lock(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		p.Version, p.Branch, p.Files, p.Previous, p.DiffBody, p.Retain, p.Now = v.Version, v.Branch, files, prev, diff, 10, v.PublishedAt
		_, err = e.st.Publish(p)
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
		for _, b := range apitest.Bodies(e.repo.Active()) {
			if b.Len() >= 4096 && (b.Gzip() == nil || b.Brotli() == nil) {
				t.Fatalf("after the swap to %s, a %d-byte body lacks gzip or brotli", v.ManifestID, b.Len())
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
}

func mustHandler(t *testing.T, repo edition.Repository) http.Handler {
	t.Helper()
	h, err := router.New(&handler.Server{Repo: repo}, slog.New(slog.NewTextHandler(io.Discard, nil)), nil)
	if err != nil {
		t.Fatal(err)
	}
	return h
}

// TestMetrics: the scrape passes promtool's linter and names every metric the
// README lists.
func TestMetrics(t *testing.T) {
	t.Parallel()
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
		fmt.Sprintf("refdata_data_published_timestamp_seconds %g", float64(published(1).Unix())),
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
// the content hash of each manifest's files, its bulk files' sums as its index
// has them, and the active one marked; after a
// swap it follows the store. The changelog pages read the stored diff and load the
// older edition from the store.
func TestVersionsAndChanges(t *testing.T) {
	t.Parallel()
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
		// The bulk files, as the manifest and the version's index have them.
		ed, err := e.repo.RetainedEdition(v.ManifestId)
		if err != nil {
			t.Fatal(err)
		}
		files := ed.BulkFiles()
		if v.Bulk == nil || len(*v.Bulk) != len(files) || len(files) != catalog.NumLocales+1 {
			t.Fatalf("%s: bulk files %v, the index has %d", v.ManifestId, v.Bulk, len(files))
		}
		for _, f := range files {
			if got := (*v.Bulk)[f.Language]; got.Sha256 != f.SHA256 || got.Size != f.Size || m.Bulk[f.Language].SHA256 != f.SHA256 {
				t.Errorf("%s: bulk file %s listed as %+v; the index has %+v", v.ManifestId, f.Language, got, f)
			}
		}
	}
	if ed, err := e.repo.RetainedEdition(strings.ToLower(id14)); err != nil || ed.ManifestID != id14 || ed.ContentHash != vs[1].ContentHash {
		t.Errorf("RetainedEdition(14) = %v, %v", ed, err)
	}
	if _, err := e.repo.RetainedEdition("0000000000000000"); catalog.ErrorCode(err) != catalog.ENOTFOUND {
		t.Errorf("RetainedEdition(unknown) = %v, want ENOTFOUND", err)
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
