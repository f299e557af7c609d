package live_test

import (
	"context"
	"fmt"
	"github.com/refdata/refdata/fixtures"
	"github.com/refdata/refdata/store"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/refdata/refdata/api"
	"github.com/refdata/refdata/api/apitest"
	"github.com/refdata/refdata/impl"
	"github.com/refdata/refdata/live"
	"github.com/refdata/refdata/pipeline"
	"github.com/refdata/refdata/store/postgres"
	"github.com/refdata/refdata/store/storetest"
)

// pgSchema is an empty schema of the test server (make pg-start), or a skip;
// under REFDATA_REQUIRE_POSTGRES=1 (CI) a failure.
func pgSchema(t *testing.T) string { return storetest.PostgresSchema(t, "live") }

// replica is one serving process on the shared store.
type replica struct {
	repo *live.Repository
	h    http.Handler
	// ctx ends with the test; loops counts the goroutines that reload the
	// replica, which end before the test's cleanup waits on repo: a reload
	// still running could start background work (repo.Wait's WaitGroup.Add)
	// while Wait waits, a race the detector reports.
	ctx   context.Context
	loops sync.WaitGroup
}

// startReplica is a replica on u as serve runs one: it reloads when the store
// notifies and every second (the fallback when a notification is lost).
func startReplica(t *testing.T, ctx context.Context, u string) *replica {
	t.Helper()
	r := openReplica(t, ctx, u, time.Second, nil)
	r.loops.Go(func() {
		for range r.repo.Store().(store.Notifier).Changes(r.ctx) {
			_, _ = r.repo.Reload()
		}
	})
	return r
}

// testHeartbeat is the test replicas' report interval, and testTTL the
// ReplicaTTL of a test that counts on it: a tenth (serve's is a fifth of
// postgres.DefaultReplicaTTL), as a heartbeat on a loaded machine can lag.
const testHeartbeat, testTTL = 200 * time.Millisecond, 2 * time.Second

// openReplica is a replica on u that reloads every poll (and when the test
// says), its loads slowed by delay when given. Polling, it reports to the
// store as every replica does.
func openReplica(t *testing.T, ctx context.Context, u string, poll time.Duration, delay *atomic.Int64) *replica {
	t.Helper()
	pg, err := postgres.Open(ctx, u)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(pg.Close)
	var st store.Backend = pg
	if delay != nil {
		st = slowStore{Store: pg, delay: delay}
	}
	logger := slog.New(slog.NewTextHandler(io.Discard, nil))
	reg := prometheus.NewRegistry()
	repo, err := live.Open(st, logger, live.NewMetrics(reg, time.Now()), nil)
	if err != nil {
		t.Fatal(err)
	}
	h, err := api.New(&impl.Server{Repo: repo}, logger, api.NewHTTPMetrics(reg))
	if err != nil {
		t.Fatal(err)
	}
	live.SetHeartbeat(repo, testHeartbeat)
	rctx, stop := context.WithCancel(ctx)
	r := &replica{repo: repo, h: h, ctx: rctx}
	r.loops.Go(func() { repo.Poll(rctx, poll) })
	t.Cleanup(func() {
		stop()
		r.loops.Wait()
		repo.Wait()
	})
	return r
}

// publisher opens the store at u for a test to publish to, with version 15
// published (before any replica starts, so nothing is scheduled).
func publisher(t *testing.T, ctx context.Context, u string) *postgres.Store {
	t.Helper()
	pub, err := postgres.Open(ctx, u)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(pub.Close)
	if _, err := pipeline.Import(pub, fixtureDir(t, "15"), pipeline.Options{}); err != nil {
		t.Fatal(err)
	}
	return pub
}

// TestReplicasSwitchTogether: three replicas on one PostgreSQL store and a client
// asking them in turn, one request after another, while ten versions are
// published: no error, and the version the client sees never goes back — each
// replica stages a new version and all switch at the instant the publisher
// schedules once they have.
func TestReplicasSwitchTogether(t *testing.T) {
	t.Parallel() // its own schema; most of its time is the scheduled switches' margin
	u := pgSchema(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	pub := publisher(t, ctx, u)
	// Long enough for the slowest replica to stage a full-size version on a
	// loaded machine (make stress); past it the design lets a laggard fall
	// behind, not ready, which a round-robin client that ignores readiness
	// would count as backward steps.
	pub.StageBound = 5 * time.Minute
	// Every replica must learn the instant before it comes: on a machine this
	// loaded (make stress beside other tests) a reload can lag a second.
	pub.Margin = 3 * time.Second
	replicas := []*replica{startReplica(t, ctx, u), startReplica(t, ctx, u), startReplica(t, ctx, u)}
	order := map[string]int{id15: 0}
	var dirs []string
	publishes := 10
	if testing.Short() {
		publishes = 4 // each waits out the previous switch's margin; make stress runs ten
	}
	for i := 1; i <= publishes; i++ {
		id := fmt.Sprintf("%016X", 0x1000+i)
		order[id] = i
		dirs = append(dirs, syntheticVersion(t, id))
	}

	check := apitest.New(t)
	first := map[string]map[int]time.Time{} // version → replica → first answer
	var mu sync.Mutex
	stop := make(chan struct{})
	done := make(chan struct{})
	requests, errs, backward, last := 0, 0, 0, 0
	// The client asks as fast as it can from just before each scheduled switch
	// until well after it, where a replica that switched late or early would
	// answer out of order, and once a millisecond between: a replica stuck
	// on an old version is still seen within a few requests, at a tenth of
	// the CPU (the test shares two cores with the rest of the suite).
	var instants []time.Time // under mu
	near := func(now time.Time) bool {
		for _, at := range instants {
			if d := now.Sub(at); d > -200*time.Millisecond && d < time.Second {
				return true
			}
		}
		return false
	}
	go func() {
		defer close(done)
		for i := 0; ; i++ {
			select {
			case <-stop:
				return
			default:
			}
			mu.Lock()
			busy := near(time.Now())
			mu.Unlock()
			if !busy {
				time.Sleep(time.Millisecond)
			}
			who := i % len(replicas)
			target := "/v1/version"
			if i%2 == 1 {
				target = "/readyz"
			}
			req, _ := http.NewRequest(http.MethodGet, target, nil)
			req.Header.Set("User-Agent", "refdata-test/1.0 (+https://example.com)")
			res := check.Do(t, replicas[who].h, req)
			mu.Lock()
			requests++
			if target == "/v1/version" {
				v := res.Header.Get("X-Data-Version")
				if res.StatusCode != http.StatusOK {
					errs++
				} else if n, ok := order[v]; !ok {
					errs++
				} else {
					if n < last {
						if backward++; backward <= 5 {
							t.Errorf("request %d to replica %d: version %s after %d", i, who, v, last)
						}
					}
					last = max(last, n)
					if first[v] == nil {
						first[v] = map[int]time.Time{}
					}
					if _, ok := first[v][who]; !ok {
						first[v][who] = time.Now()
					}
				}
			}
			mu.Unlock()
		}
	}()
	for _, d := range dirs {
		if _, err := pipeline.Import(pub, d, pipeline.Options{}); err != nil {
			t.Fatal(err)
		}
		// The import returns once the switch is scheduled, a Margin ahead.
		p, _, err := pub.Active()
		if err != nil || p.ActivateAt.IsZero() {
			t.Fatalf("no switch scheduled after a publish: %+v %v", p, err)
		}
		mu.Lock()
		instants = append(instants, p.ActivateAt)
		mu.Unlock()
	}
	// Every replica reaches the last version and says it is ready.
	lastID := fmt.Sprintf("%016X", 0x1000+publishes)
	deadline := time.Now().Add(5 * time.Minute)
	for _, r := range replicas {
		for r.repo.Active().ManifestID != lastID && time.Now().Before(deadline) {
			time.Sleep(10 * time.Millisecond)
		}
		if st, ok, why := r.repo.Ready(); !ok || st.Serving != lastID {
			t.Errorf("a replica serves %s, ready %v (%s)", st.Serving, ok, why)
		}
	}
	close(stop)
	<-done
	mu.Lock()
	defer mu.Unlock()
	var worst time.Duration
	for v, by := range first {
		if len(by) < len(replicas) || order[v] == 0 {
			continue
		}
		lo, hi := time.Time{}, time.Time{}
		for _, at := range by {
			if lo.IsZero() || at.Before(lo) {
				lo = at
			}
			if at.After(hi) {
				hi = at
			}
		}
		worst = max(worst, hi.Sub(lo))
	}
	if errs != 0 || backward != 0 {
		t.Errorf("%d requests: %d errors, %d backward steps", requests, errs, backward)
	}
	t.Logf("%d requests over %d replicas and %d publishes: %d errors, %d backward steps; largest gap between the first and the last replica answering with a new version, as the client saw it: %v",
		requests, len(replicas), len(dirs), errs, backward, worst.Round(time.Microsecond))
}

// TestDatabaseRestart: the database restarts while three replicas serve under
// load. They keep answering from what they loaded (0 errors), say they are not
// ready while the store is unreachable, reconnect on their own, and follow the
// next publish.
func TestDatabaseRestart(t *testing.T) {
	t.Parallel() // its own cluster and replicas; mostly waiting on the database
	c := ownCluster(t)
	c.run(t, "start")
	u := c.url
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	pub := publisher(t, ctx, u)
	replicas := []*replica{startReplica(t, ctx, u), startReplica(t, ctx, u), startReplica(t, ctx, u)}
	var requests, failures atomic.Int64
	stop := make(chan struct{})
	var wg sync.WaitGroup
	for i, r := range replicas {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				select {
				case <-stop:
					return
				default:
				}
				req := httptest.NewRequest(http.MethodGet, "/v1/weapons/"+vandal, nil)
				req.Header.Set("User-Agent", "refdata-test/1.0 (+https://example.com)")
				rec := httptest.NewRecorder()
				r.h.ServeHTTP(rec, req)
				requests.Add(1)
				if rec.Code != http.StatusOK && failures.Add(1) <= 3 {
					t.Errorf("replica %d during the restart: %d %s", i, rec.Code, rec.Body.String())
				}
				time.Sleep(time.Millisecond)
			}
		}()
	}
	c.run(t, "restart")
	// Let every replica notice (a poll fails or the listener drops) and recover.
	for _, r := range replicas {
		_, _ = r.repo.Reload()
	}
	id := "0000000000002001"
	deadline := time.Now().Add(60 * time.Second)
	for {
		_, err := pipeline.Import(pub, syntheticVersion(t, id), pipeline.Options{})
		if err == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("publish after the restart: %v", err)
		}
		time.Sleep(200 * time.Millisecond) // the publisher's pool reconnects on its next try
	}
	for i, r := range replicas {
		for r.repo.Active().ManifestID != id && time.Now().Before(deadline) {
			time.Sleep(20 * time.Millisecond)
		}
		if st, ok, why := r.repo.Ready(); !ok || st.Serving != id {
			t.Errorf("replica %d after the restart serves %s, ready %v (%s)", i, st.Serving, ok, why)
		}
	}
	close(stop)
	wg.Wait()
	if failures.Load() != 0 {
		t.Errorf("%d of %d requests failed", failures.Load(), requests.Load())
	}
	t.Logf("%d requests across a database restart and a publish after it, %d failed", requests.Load(), failures.Load())
}

// cluster is a PostgreSQL cluster of the test's own (tools/pg.sh with its own
// directory and port), for tests that stop or restart the database: the shared
// one serves other packages' tests meanwhile.
type cluster struct {
	dir, url string
	port     int
}

func ownCluster(t *testing.T) *cluster {
	t.Helper()
	if bins, _ := filepath.Glob("/usr/lib/postgresql/*/bin/initdb"); len(bins) == 0 {
		if os.Getenv("REFDATA_REQUIRE_POSTGRES") == "1" {
			t.Fatal("REFDATA_REQUIRE_POSTGRES=1 but no PostgreSQL server binaries (tools/pg.sh start installs them)")
		}
		t.Skip("no PostgreSQL server binaries: tools/pg.sh start installs them")
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := ln.Addr().(*net.TCPAddr).Port
	ln.Close()
	root, err := os.MkdirTemp("", "refdata-pg-")
	if err != nil {
		t.Fatal(err)
	}
	_ = os.Chmod(root, 0o755) // the server runs as postgres when the tests run as root
	c := &cluster{dir: filepath.Join(root, "pg"), port: port,
		url: fmt.Sprintf("postgres://refdata@127.0.0.1:%d/postgres?sslmode=disable", port)}
	t.Cleanup(func() {
		c.run(t, "stop")
		os.RemoveAll(root)
	})
	return c
}

func (c *cluster) run(t *testing.T, what string) {
	t.Helper()
	cmd := exec.Command("../tools/pg.sh", what)
	cmd.Env = append(os.Environ(), "REFDATA_PG_DIR="+c.dir, fmt.Sprintf("REFDATA_PG_PORT=%d", c.port))
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("tools/pg.sh %s: %v\n%s", what, err, out)
	}
}

// TestReplicaStartsBeforeDatabase: a replica started while its database is down
// serves, is not ready, and becomes ready with the store's version once the
// database is up.
func TestReplicaStartsBeforeDatabase(t *testing.T) {
	t.Parallel() // its own cluster; mostly waiting on the database
	c := ownCluster(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	logger := slog.New(slog.NewTextHandler(io.Discard, nil))
	connect := func(ctx context.Context) (store.Backend, error) { return postgres.Open(ctx, c.url) }
	fallback, err := fixtures.Small("15") // what it serves before the database answers: any edition
	if err != nil {
		t.Fatal(err)
	}
	opened := make(chan *live.Repository, 1)
	repo := live.OpenEventually(ctx, connect, logger, live.NewMetrics(prometheus.NewRegistry(), time.Now()), fallback, 100*time.Millisecond,
		func(r *live.Repository) { opened <- r })
	h, err := api.New(&impl.Server{Repo: repo}, logger, nil)
	if err != nil {
		t.Fatal(err)
	}
	check := apitest.New(t)
	ask := func(target string) *http.Response {
		req := httptest.NewRequest(http.MethodGet, target, nil)
		req.Header.Set("User-Agent", "refdata-test/1.0 (+https://example.com)")
		return check.Do(t, h, req)
	}
	if res := ask("/readyz"); res.StatusCode != http.StatusServiceUnavailable {
		t.Fatalf("/readyz with the database down: %d, want 503", res.StatusCode)
	}
	if res := ask("/healthz"); res.StatusCode != http.StatusOK {
		t.Errorf("/healthz with the database down: %d, want 200 (alive)", res.StatusCode)
	}
	c.run(t, "start")
	pub, err := postgres.Open(ctx, c.url)
	if err != nil {
		t.Fatal(err)
	}
	defer pub.Close()
	if _, err := pipeline.Import(pub, syntheticVersion(t, id3), pipeline.Options{}); err != nil {
		t.Fatal(err)
	}
	var r *live.Repository
	select {
	case r = <-opened:
	case <-time.After(60 * time.Second):
		t.Fatal("the replica never reached the database")
	}
	defer r.Wait()
	if _, err := r.Reload(); err != nil {
		t.Fatal(err)
	}
	res := ask("/readyz")
	if res.StatusCode != http.StatusOK || repo.Active().ManifestID != id3 {
		t.Errorf("once the database is up: /readyz %d, serving %s; want 200 and %s", res.StatusCode, repo.Active().ManifestID, id3)
	}
}

// TestReplicaPromotesOvertakenVersion: a replica that staged a version but
// never learned its switch instant (its reload after the schedule did not come)
// serves that version as soon as it sees the pointer move past it, as the
// other replicas do from the instant, rather than dropping it for the next
// one and stepping back. The publisher does not move a pointer before its
// scheduled switch.
func TestReplicaPromotesOvertakenVersion(t *testing.T) {
	t.Parallel() // its own schema
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	pub, r := stagingReplica(t, ctx)
	v2, v3 := "0000000000003002", "0000000000003003"
	d3 := syntheticVersion(t, v3)

	// The replica stages v2 and then reloads no more, so it never learns the
	// instant.
	p2 := stage(t, pub, r, v2)
	published := make(chan error, 1)
	publish := func(dir string) {
		go func() { _, err := pipeline.Import(pub, dir, pipeline.Options{}); published <- err }()
	}
	publish(d3)
	waitPointer(t, pub, v3)
	if seen := time.Now(); seen.Before(p2.ActivateAt) {
		t.Errorf("the pointer moved to %s at %v, before %s's switch at %v", v3, seen, v2, p2.ActivateAt)
	}
	if _, err := r.repo.Reload(); err != nil {
		t.Fatal(err)
	}
	if got := r.repo.Active().ManifestID; got != v2 {
		t.Errorf("with the pointer past %s (staged): serving %s, want %s", v2, got, v2)
	}
	if err := <-published; err != nil {
		t.Fatal(err)
	}
	p3, _, _ := pub.Active()
	if _, err := r.repo.Reload(); err != nil { // learns v3's instant
		t.Fatal(err)
	}
	time.Sleep(time.Until(p3.ActivateAt))
	if got := r.repo.Active().ManifestID; got != v3 {
		t.Errorf("at %s's instant: serving %s", v3, got)
	}
}

// TestSlowReplicaIsWaitedFor: a replica whose load of a new version outlasts
// the store's ReplicaTTL still counts as live (it reports beside the load), so
// the publisher schedules the switch only once it has staged.
func TestSlowReplicaIsWaitedFor(t *testing.T) {
	t.Parallel() // its own schema; mostly the slowed load
	u := pgSchema(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	pub := publisher(t, ctx, u)
	pub.StageBound, pub.Margin, pub.ReplicaTTL = time.Minute, 300*time.Millisecond, testTTL
	var delay atomic.Int64
	r := openReplica(t, ctx, u, 200*time.Millisecond, &delay)
	delay.Store(int64(2 * pub.ReplicaTTL)) // each load of a version from now on
	v2 := "0000000000004002"
	if _, err := pipeline.Import(pub, syntheticVersion(t, v2), pipeline.Options{}); err != nil {
		t.Fatal(err)
	}
	if st, _, _ := r.repo.Ready(); st.Serving != v2 && (st.Staged == nil || *st.Staged != v2) {
		t.Errorf("the publish scheduled the switch before the slow replica staged %s: serving %s, staged %v", v2, st.Serving, st.Staged)
	}
}

// slowStore delays every ReadVersion by delay nanoseconds: a large version on
// a loaded machine.
type slowStore struct {
	*postgres.Store
	delay *atomic.Int64
}

func (s slowStore) ReadVersion(id string) (store.Manifest, map[string][]byte, error) {
	time.Sleep(time.Duration(s.delay.Load()))
	return s.Store.ReadVersion(id)
}

// waitPointer waits until the store's pointer names id.
func waitPointer(t *testing.T, st store.Backend, id string) {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	for {
		if p, _, err := st.Active(); err == nil && p.ManifestID == id {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("the pointer never named %s", id)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// stagingReplica is a publisher on a schema of its own that schedules each
// switch once the replicas have staged the version, and one replica that
// reloads only when the test says.
func stagingReplica(t *testing.T, ctx context.Context) (*postgres.Store, *replica) {
	t.Helper()
	u := pgSchema(t)
	pub := publisher(t, ctx, u)
	pub.StageBound, pub.Margin = time.Minute, 300*time.Millisecond
	return pub, openReplica(t, ctx, u, time.Hour, nil)
}

// stage publishes the synthetic version id, has r stage it when the pointer
// names it (before the publish has scheduled the switch, which waits for
// that), and returns the pointer with the instant the publish then set.
func stage(t *testing.T, pub *postgres.Store, r *replica, id string) store.Pointer {
	t.Helper()
	dir := syntheticVersion(t, id)
	published := make(chan error, 1)
	go func() { _, err := pipeline.Import(pub, dir, pipeline.Options{}); published <- err }()
	waitPointer(t, pub, id)
	if _, err := r.repo.Reload(); err != nil {
		t.Fatal(err)
	}
	if err := <-published; err != nil {
		t.Fatal(err)
	}
	p, _, err := pub.Active()
	if err != nil || p.ActivateAt.IsZero() {
		t.Fatalf("after publishing %s: pointer %+v, %v; want a scheduled switch", id, p, err)
	}
	return p
}

// TestStagedVersionGetsBrotli: a version staged before its switch instant is
// prepared with gzip alone, and its brotli starts when it goes live, also
// when the replica learned the instant after staging (a state of its own).
func TestStagedVersionGetsBrotli(t *testing.T) {
	t.Parallel() // its own schema
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	pub, r := stagingReplica(t, ctx)
	v2 := "0000000000003102"
	p2 := stage(t, pub, r, v2)
	if _, err := r.repo.Reload(); err != nil { // learns the instant
		t.Fatal(err)
	}
	time.Sleep(time.Until(p2.ActivateAt))
	if got := r.repo.Active().ManifestID; got != v2 {
		t.Fatalf("at %s's instant: serving %s", v2, got)
	}
	r.repo.Wait() // the brotli started at the switch
	n := 0
	for _, b := range r.repo.Active().Bodies() {
		if len(b.JSON) < 4096 {
			continue
		}
		n++
		if v := b.Pick([]string{"br"}).Encoding.Value; len(v) == 0 || v[0] != "br" {
			t.Fatalf("a %d-byte body of %s has no brotli once it is served", len(b.JSON), v2)
		}
	}
	if n == 0 {
		t.Fatal("no body of 4 KB or more: the test looked at nothing")
	}
}
