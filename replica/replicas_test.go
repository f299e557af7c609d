package replica_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/refdata/refdata/handler"
	"github.com/refdata/refdata/pipeline"
	"github.com/refdata/refdata/replica"
	"github.com/refdata/refdata/router"
	"github.com/refdata/refdata/router/apitest"
	"github.com/refdata/refdata/store"
	"github.com/refdata/refdata/store/postgres"
	"github.com/refdata/refdata/store/storetest"
)

// pgSchema is an empty schema of the test server (make pg-start), or a skip;
// under REFDATA_REQUIRE_POSTGRES=1 (CI) a failure.
func pgSchema(t *testing.T) string { return storetest.PostgresSchema(t, "replica") }

// node is one serving process (a replica) on the shared store.
type node struct {
	repo *replica.Repository
	h    http.Handler
	// ctx ends with the test; loops counts the goroutines that reload the
	// replica, which end before the test's cleanup returns.
	ctx   context.Context
	loops sync.WaitGroup
	// swapped gets a signal (dropped when one is pending) after each swap,
	// for waitServing.
	swapped chan struct{}
	// clock is the replica's, when the test moves it (nil: the real one).
	clock *testClock
}

// waitServing waits until n serves id, woken by its swaps: Poll and the
// reloads on notifications install a version, or promote a staged one once
// its instant has come.
func (n *node) waitServing(t *testing.T, id string, timeout time.Duration) {
	t.Helper()
	deadline := time.NewTimer(timeout)
	defer deadline.Stop()
	for n.repo.Active().ManifestID != id {
		select {
		case <-n.swapped:
		case <-deadline.C:
			t.Errorf("after %v the replica serves %s, not %s", timeout, n.repo.Active().ManifestID, id)
			return
		}
	}
}

// startReplica is a replica on u as serve runs one: it reloads when the store
// notifies and every second (the fallback when a notification is lost).
func startReplica(t *testing.T, ctx context.Context, u string) *node {
	t.Helper()
	r := openReplica(t, ctx, u, time.Second, nil, nil)
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
// says), its loads slowed by delay when given, on clock when given. Polling,
// it reports to the store as every replica does.
func openReplica(t *testing.T, ctx context.Context, u string, poll time.Duration, delay *atomic.Int64, clock *testClock) *node {
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
	return serveReplica(t, ctx, st, poll, clock)
}

// serveReplica is a replica on st, as openReplica.
func serveReplica(t *testing.T, ctx context.Context, st store.Backend, poll time.Duration, clock *testClock) *node {
	t.Helper()
	logger := slog.New(slog.NewTextHandler(io.Discard, nil))
	reg := prometheus.NewRegistry()
	var opts []replica.Option
	if clock != nil {
		opts = append(opts, replica.WithClock(clock.Now))
	}
	repo, err := replica.Open(st, logger, replica.NewMetrics(reg, time.Now()), nil, opts...)
	if err != nil {
		t.Fatal(err)
	}
	h, err := router.New(&handler.Server{Repo: repo}, logger, router.NewHTTPMetrics(reg))
	if err != nil {
		t.Fatal(err)
	}
	replica.SetHeartbeat(repo, testHeartbeat)
	rctx, stop := context.WithCancel(ctx)
	r := &node{repo: repo, h: h, ctx: rctx, swapped: make(chan struct{}, 1), clock: clock}
	repo.OnSwap(func() {
		select {
		case r.swapped <- struct{}{}:
		default:
		}
	})
	r.loops.Go(func() { repo.Poll(rctx, poll) })
	t.Cleanup(func() {
		stop()
		r.loops.Wait()
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
	publish(t, pub, fixtureDir(t, "15"))
	return pub
}

// publish imports dir into the shared store at the tests' effort, published
// now (the switch scheduled by the store).
func publish(t *testing.T, pub *postgres.Store, dir string) {
	t.Helper()
	if _, err := importPG(pub, dir); err != nil {
		t.Fatal(err)
	}
}

func importPG(pub *postgres.Store, dir string) (*pipeline.Report, error) {
	return pipeline.Import(pub, dir, pipeline.Options{Effort: apitest.Effort()})
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
	replicas := []*node{startReplica(t, ctx, u), startReplica(t, ctx, u), startReplica(t, ctx, u)}
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
		publish(t, pub, d)
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
	for _, r := range replicas {
		r.waitServing(t, lastID, 5*time.Minute)
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
// load. They keep answering from what they loaded (0 errors), stay ready while
// the store is unreachable (the version it last said is active is still the
// one), reconnect on their own, and follow the next publish.
func TestDatabaseRestart(t *testing.T) {
	t.Parallel() // its own cluster and replicas; mostly waiting on the database
	c := ownCluster(t)
	c.run(t, "start")
	u := c.url
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	pub := publisher(t, ctx, u)
	replicas := []*node{startReplica(t, ctx, u), startReplica(t, ctx, u), startReplica(t, ctx, u)}
	check := apitest.New(t)
	var requests, failures atomic.Int64
	stop := make(chan struct{})
	var wg sync.WaitGroup
	for i, r := range replicas {
		wg.Go(func() {
			for {
				select {
				case <-stop:
					return
				default:
				}
				res, b := do(t, check, r.h, "/v1/weapons/"+vandal)
				requests.Add(1)
				if res.StatusCode != http.StatusOK && failures.Add(1) <= 3 {
					t.Errorf("replica %d during the restart: %d %s", i, res.StatusCode, b)
				}
				time.Sleep(time.Millisecond) // a steady load, not a spin
			}
		})
	}
	id := "0000000000002001"
	dir := syntheticVersion(t, id)
	c.run(t, "stop")
	// Every replica notices at its next reload, and stays ready: it serves
	// the version the store last said is active, and nothing is published
	// while the database is down, so a balancer keeps every replica.
	for i, r := range replicas {
		if _, err := r.repo.Reload(); err == nil {
			t.Errorf("replica %d: Reload with the database down succeeded", i)
		}
		if res, b := do(t, check, r.h, "/readyz"); res.StatusCode != http.StatusOK || !bytes.Contains(b, []byte(`"serving":"`+id15+`"`)) {
			t.Errorf("replica %d: /readyz with the database down: %d %s, want 200 serving %s", i, res.StatusCode, b, id15)
		}
	}
	c.run(t, "start")
	deadline := time.Now().Add(60 * time.Second)
	for {
		_, err := importPG(pub, dir)
		if err == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("publish after the restart: %v", err)
		}
		time.Sleep(200 * time.Millisecond) // the publisher's pool reconnects on its next try
	}
	for i, r := range replicas {
		r.waitServing(t, id, time.Minute)
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
	repo := replica.NewPending("loading", true)
	opened := make(chan *replica.Repository, 1)
	go func() {
		r, err := replica.OpenRetrying(ctx, connect, logger, replica.NewMetrics(prometheus.NewRegistry(), time.Now()), nil, 100*time.Millisecond, repo)
		if err == nil {
			repo.Set(r)
		}
		opened <- r
	}()
	h, err := router.New(&handler.Server{Repo: repo}, logger, nil)
	if err != nil {
		t.Fatal(err)
	}
	check := apitest.New(t)
	ask := func(target string) *http.Response {
		res, _ := do(t, check, h, target)
		return res
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
	publish(t, pub, syntheticVersion(t, id3))
	var r *replica.Repository
	select {
	case r = <-opened:
	case <-time.After(60 * time.Second):
		t.Fatal("the replica never reached the database")
	}
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
	go func() { _, err := importPG(pub, d3); published <- err }()
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
	r.clock.Set(p3.ActivateAt.Add(-time.Nanosecond))
	if got := r.repo.Active().ManifestID; got != v2 {
		t.Errorf("just before %s's instant: serving %s, want %s", v3, got, v2)
	}
	r.clock.Set(p3.ActivateAt)
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
	r := openReplica(t, ctx, u, 200*time.Millisecond, &delay, nil)
	delay.Store(int64(2 * pub.ReplicaTTL)) // each load of a version from now on
	v2 := "0000000000004002"
	publish(t, pub, syntheticVersion(t, v2))
	if st, _, _ := r.repo.Ready(); st.Serving != v2 && (st.Staged == nil || *st.Staged != v2) {
		t.Errorf("the publish scheduled the switch before the slow replica staged %s: serving %s, staged %v", v2, st.Serving, st.Staged)
	}
}

// slowStore delays every read of a version's edition by delay nanoseconds: a
// large version on a loaded machine.
type slowStore struct {
	*postgres.Store
	delay *atomic.Int64
}

func (s slowStore) ReadIndex(id, manifestSHA string) (store.Manifest, []byte, error) {
	time.Sleep(time.Duration(s.delay.Load()))
	return s.Store.ReadIndex(id, manifestSHA)
}

// waitPointer waits until the store's pointer names id, woken by the store's
// notifications (and, in case one is lost, every second).
func waitPointer(t *testing.T, st *postgres.Store, id string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	changes := st.Changes(ctx)
	tick := time.NewTicker(time.Second)
	defer tick.Stop()
	for {
		if p, _, err := st.Active(); err == nil && p.ManifestID == id {
			return
		}
		select {
		case <-changes:
		case <-tick.C:
		case <-ctx.Done():
			t.Fatalf("the pointer never named %s", id)
		}
	}
}

// stagingReplica is a publisher on a schema of its own that schedules each
// switch once the replicas have staged the version, and one replica that
// reloads only when the test says, on a clock the test moves (it stands
// still at the replica's start, before any switch instant the publisher
// sets, until moved).
func stagingReplica(t *testing.T, ctx context.Context) (*postgres.Store, *node) {
	t.Helper()
	u := pgSchema(t)
	pub := publisher(t, ctx, u)
	pub.StageBound, pub.Margin = time.Minute, 300*time.Millisecond
	return pub, openReplica(t, ctx, u, time.Hour, nil, newClock(time.Now()))
}

// stage publishes the synthetic version id, has r stage it when the pointer
// names it (before the publish has scheduled the switch, which waits for
// that), and returns the pointer with the instant the publish then set.
func stage(t *testing.T, pub *postgres.Store, r *node, id string) store.Pointer {
	t.Helper()
	dir := syntheticVersion(t, id)
	published := make(chan error, 1)
	go func() { _, err := importPG(pub, dir); published <- err }()
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

// TestStagedVersionServedCompressed: a version staged before its switch
// instant is reported staged, not served, and from the instant it is served
// in gzip and brotli from its first answer (its segments have them: nothing is
// compressed at the switch), also when the replica learned the instant after
// staging (a state of its own).
func TestStagedVersionServedCompressed(t *testing.T) {
	t.Parallel() // its own schema
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	pub, r := stagingReplica(t, ctx)
	v2 := "0000000000003102"
	p2 := stage(t, pub, r, v2)
	if _, err := r.repo.Reload(); err != nil { // learns the instant
		t.Fatal(err)
	}
	r.clock.Set(p2.ActivateAt.Add(-time.Nanosecond))
	if st, ok, why := r.repo.Ready(); !ok || st.Serving != id15 || st.Staged == nil || *st.Staged != v2 || st.Active == nil || *st.Active != id15 {
		t.Errorf("just before %s's instant: Ready = %+v, %v (%s); want serving %s, %s staged", v2, st, ok, why, id15, v2)
	}
	r.clock.Set(p2.ActivateAt) // the instant itself
	if got := r.repo.Active().ManifestID; got != v2 {
		t.Fatalf("at %s's instant: serving %s", v2, got)
	}
	if st, ok, why := r.repo.Ready(); !ok || st.Serving != v2 || st.Staged != nil {
		t.Errorf("at %s's instant: Ready = %+v, %v (%s)", v2, st, ok, why)
	}
	n := 0
	for _, b := range apitest.Bodies(r.repo.Active()) {
		if b.Len() < 4096 {
			continue
		}
		n++
		if b.Gzip() == nil || b.Brotli() == nil {
			t.Fatalf("a %d-byte body of %s lacks gzip or brotli once it is served", b.Len(), v2)
		}
	}
	if n == 0 {
		t.Fatal("no body of 4 KB or more: the test looked at nothing")
	}
	check := apitest.New(t)
	for _, enc := range []string{"br", "gzip"} {
		res, _ := do(t, check, r.h, "/v1/weapons/"+vandal, "Accept-Encoding", enc)
		if res.StatusCode != http.StatusOK || res.Header.Get("Content-Encoding") != enc || res.Header.Get("X-Data-Version") != v2 {
			t.Errorf("Accept-Encoding %s at %s's instant: %d, Content-Encoding %q from %s", enc, v2, res.StatusCode, res.Header.Get("Content-Encoding"), res.Header.Get("X-Data-Version"))
		}
	}
}

// testClock is a replica's clock (replica.WithClock) that a test moves.
type testClock struct{ ns atomic.Int64 }

func newClock(at time.Time) *testClock {
	c := &testClock{}
	c.Set(at)
	return c
}

func (c *testClock) Now() time.Time      { return time.Unix(0, c.ns.Load()) }
func (c *testClock) Set(at time.Time)    { c.ns.Store(at.UnixNano()) }
func (c *testClock) Add(d time.Duration) { c.ns.Add(int64(d)) }

// TestReplicaStartedDuringSwitch: a replica that starts while a switch is
// staged serves the version the others serve until the instant, as they do:
// its latest diff too (the diff into that version, not a 404 saying it was
// the first one imported).
func TestReplicaStartedDuringSwitch(t *testing.T) {
	t.Parallel() // its own schema
	u := pgSchema(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	pub := publisher(t, ctx, u)
	pub.StageBound, pub.Margin = time.Minute, 300*time.Millisecond
	r := openReplica(t, ctx, u, time.Hour, nil, newClock(time.Now()))
	v2, v3 := "0000000000003202", "0000000000003203"
	p2 := stage(t, pub, r, v2)
	if _, err := r.repo.Reload(); err != nil { // learns the instant
		t.Fatal(err)
	}
	r.clock.Set(p2.ActivateAt)
	if got := r.repo.Active().ManifestID; got != v2 {
		t.Fatalf("at %s's instant: serving %s", v2, got)
	}
	p3 := stage(t, pub, r, v3)
	late := openReplica(t, ctx, u, time.Hour, nil, newClock(p3.ActivateAt.Add(-time.Nanosecond)))
	check := apitest.New(t)
	want, wantBody := do(t, check, r.h, "/v1/diff/latest")
	if want.StatusCode != http.StatusOK || want.Header.Get("X-Data-Version") != v2 {
		t.Fatalf("the replica serving %s before %s's instant: /v1/diff/latest %d from %s", v2, v3, want.StatusCode, want.Header.Get("X-Data-Version"))
	}
	res, b := do(t, check, late.h, "/v1/diff/latest")
	if res.StatusCode != want.StatusCode || res.Header.Get("X-Data-Version") != v2 || string(b) != string(wantBody) {
		t.Errorf("a replica started before %s's instant: /v1/diff/latest %d from %s (%.200s); the others answer %d from %s", v3, res.StatusCode, res.Header.Get("X-Data-Version"), b, want.StatusCode, v2)
	}
}

// TestStagedDiffServedWhileStoreDown: a staged version's latest diff is read
// with the version, so from the switch instant /v1/diff/latest answers even
// when the store cannot be read then (a database restarting).
func TestStagedDiffServedWhileStoreDown(t *testing.T) {
	t.Parallel() // its own schema
	u := pgSchema(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	pub := publisher(t, ctx, u)
	pub.StageBound, pub.Margin = time.Minute, 300*time.Millisecond
	pg, err := postgres.Open(ctx, u)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(pg.Close)
	st := &diffDownStore{Store: pg}
	r := serveReplica(t, ctx, st, time.Hour, newClock(time.Now()))
	v2 := "0000000000003302"
	p2 := stage(t, pub, r, v2)
	if _, err := r.repo.Reload(); err != nil { // learns the instant
		t.Fatal(err)
	}
	st.down.Store(true)
	r.clock.Set(p2.ActivateAt)
	res, b := do(t, apitest.New(t), r.h, "/v1/diff/latest")
	if res.StatusCode != http.StatusOK || res.Header.Get("X-Data-Version") != v2 {
		t.Errorf("at %s's instant, the store down: /v1/diff/latest %d from %s (%.200s); want 200 from %s", v2, res.StatusCode, res.Header.Get("X-Data-Version"), b, v2)
	}
}

// diffDownStore fails every read of a diff once down: the database gone
// after the replica staged a version.
type diffDownStore struct {
	*postgres.Store
	down atomic.Bool
}

func (s *diffDownStore) ReadDiff(from, to string) ([]byte, error) {
	if s.down.Load() {
		return nil, errors.New("connect: connection refused")
	}
	return s.Store.ReadDiff(from, to)
}
