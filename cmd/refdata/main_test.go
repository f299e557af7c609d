package main

import (
	"context"
	"encoding/json"
	"io"
	"io/fs"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/refdata/refdata/envelope"
	"github.com/refdata/refdata/fixtures"
	"github.com/refdata/refdata/gen"
	"github.com/refdata/refdata/router/apitest"
	"github.com/refdata/refdata/store/postgres"
	"github.com/refdata/refdata/store/storetest"
)

// TestServe runs `serve` on the embedded sample data as main wires it — edge server,
// router, metrics — checks its answers against the spec over a real connection,
// that requests answered from the edge's memo are counted like routed ones, that
// it becomes ready once both sample versions are loaded and then serves the
// diff, and that it stops cleanly when its context ends.
func TestServe(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	addr, done := start(t, ctx, "--addr", "127.0.0.1:0", "--log-level", "warn")
	check := apitest.New(t)
	h := apitest.Forward(t, &http.Client{Transport: &http.Transport{DisableCompression: true}}, "http://"+addr)
	get := func(method, target string, header ...string) *http.Response {
		req := httptest.NewRequest(method, target, nil)
		req.Header.Set("User-Agent", "refdata-test/1.0 (+http://localhost)")
		for i := 0; i+1 < len(header); i += 2 {
			req.Header.Set(header[i], header[i+1])
		}
		return check.Do(t, h, req)
	}
	// It listens before it loads: alive at once, ready once both sample
	// versions are there (503 until then).
	if res := get("GET", "/healthz"); res.StatusCode != http.StatusOK {
		t.Errorf("/healthz: %d, want 200 at once", res.StatusCode)
	}
	waitReady(t, get)
	first := get("GET", "/v1/weapons") // routed, then remembered
	etag := first.Header.Get("ETag")
	for _, tc := range []struct {
		method string
		header []string
		want   int
	}{
		{"GET", nil, 200},
		{"HEAD", nil, 200},
		{"GET", []string{"Accept-Encoding", "gzip"}, 200},
		{"GET", []string{"If-None-Match", etag}, 304},
	} {
		if res := get(tc.method, "/v1/weapons", tc.header...); res.StatusCode != tc.want {
			t.Errorf("%s /v1/weapons %q: %d, want %d", tc.method, tc.header, res.StatusCode, tc.want)
		}
	}

	// The embedded default shows the headline feature: the diff between its two
	// versions, under /v1/diff/latest and by name, and the pages over it.
	// The two versions' IDs, from their files (rendering them again would cost
	// what serve just spent).
	vs := fixtures.Versions()
	from, to := manifestOf(t, vs[len(vs)-2]), manifestOf(t, vs[len(vs)-1])
	var latest gen.DiffBody
	if res := get("GET", "/v1/diff/latest"); res.StatusCode != 200 {
		t.Errorf("/v1/diff/latest: %d, want 200", res.StatusCode)
	} else if err := json.NewDecoder(res.Body).Decode(&latest); err != nil || latest.Data.FromVersion != from || latest.Data.ToVersion != to {
		t.Errorf("/v1/diff/latest is %s → %s (%v), want %s → %s", latest.Data.FromVersion, latest.Data.ToVersion, err, from, to)
	}
	if latest.Data.Summary.TotalAdded+latest.Data.Summary.TotalChanged == 0 {
		t.Error("/v1/diff/latest shows no change")
	}
	for _, target := range []string{"/v1/diff/" + from + "/" + to, "/changes"} {
		if res := get("GET", target); res.StatusCode != 200 {
			t.Errorf("%s: %d, want 200", target, res.StatusCode)
		}
	}

	// An ETag stays good across the sample's swaps (the older version joining,
	// the compressed encodings following): they keep the identity bytes.
	if res := get("GET", "/v1/weapons", "If-None-Match", etag); res.StatusCode != 304 {
		t.Errorf("GET /v1/weapons with the first ETag once ready: %d, want 304", res.StatusCode)
	}

	res := get("GET", "/v1/metrics")
	body, _ := io.ReadAll(res.Body)
	for _, want := range []string{
		`refdata_http_request_duration_seconds_count{code="200",route="/v1/weapons"} 4`,
		`refdata_http_request_duration_seconds_count{code="304",route="/v1/weapons"} 2`,
		`refdata_build_info{goversion="` + runtime.Version() + `",revision=`,
	} {
		if !strings.Contains(string(body), want) {
			t.Errorf("metrics lack %s", want)
		}
	}

	cancel()
	select {
	case code := <-done:
		if code != 0 {
			t.Errorf("serve after its context ended: exit %d", code)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("serve did not return after its context ended")
	}
}

// start runs `refdata serve args…` as main runs it, and returns the address
// it listens on and the channel its exit status arrives on; it fails t when
// serve ends before it listens. The embedded sample's store (serve without a
// store) is the test binary's own, of the trimmed versions under -short.
func start(t *testing.T, ctx context.Context, args ...string) (string, <-chan int) {
	t.Helper()
	ready := make(chan string, 1)
	done := make(chan int, 1)
	var stderr syncBuffer
	go func() {
		p := process{stdout: io.Discard, stderr: &stderr, env: noEnv, ready: ready,
			sample: sampleOptions{effort: apitest.Effort(), trimmed: testing.Short(), dir: filepath.Join(sampleRoot(), "cache")}}
		done <- p.run(ctx, append([]string{"serve"}, args...))
	}()
	select {
	case addr := <-ready:
		return addr, done
	case code := <-done:
		t.Fatalf("serve %q: exit %d before listening\n%s", args, code, stderr.String())
	}
	return "", nil
}

// noEnv is an environment without variables, so the tests do not depend on
// the one they run in.
func noEnv(string) (string, bool) { return "", false }

// syncBuffer is a strings.Builder safe for a writer and a reader at once.
type syncBuffer struct {
	mu sync.Mutex
	b  strings.Builder
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

// waitReady asks /readyz until it answers 200: the embedded sample data is
// ready once every version is loaded (503 until then).
func waitReady(t *testing.T, get func(method, target string, header ...string) *http.Response) {
	t.Helper()
	eventually(t, "/readyz answers 200", func() bool {
		res := get("GET", "/readyz")
		if res.StatusCode != http.StatusOK && res.StatusCode != http.StatusServiceUnavailable {
			t.Fatalf("/readyz: %d, want 200 or 503", res.StatusCode)
		}
		return res.StatusCode == http.StatusOK
	})
}

// eventually checks cond every 20 ms until it holds, and fails t when it
// still does not after two minutes (a condition a server reaches in the
// background: a load, a sync).
func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	deadline := time.After(2 * time.Minute)
	for !cond() {
		select {
		case <-tick.C:
		case <-deadline:
			t.Fatalf("never: %s", what)
		}
	}
}

// manifestOf reads the manifest ID of an embedded version from its version.json.
func manifestOf(t *testing.T, dir string) string {
	t.Helper()
	b, err := fs.ReadFile(fixtures.FS, path.Join(dir, "version.json"))
	if err != nil {
		t.Fatal(err)
	}
	v, err := envelope.Decode(b)
	m, _ := v.(map[string]any)
	id, _ := m["manifestId"].(string)
	if id == "" {
		t.Fatalf("%s/version.json: no manifestId (%v)", dir, err)
	}
	return id
}

// TestRun: the commands' exit statuses and what they say: 2 for a usage error
// (nothing done), 1 for a failure, and the flags of the deleted build and
// compression children refused.
func TestRun(t *testing.T) {
	t.Parallel()
	missing := filepath.Join(t.TempDir(), "does-not-exist")
	for _, tc := range []struct {
		args []string
		want int
		out  string // in stdout or stderr
	}{
		{nil, 2, "Usage: refdata <command>"},
		{[]string{"nonsense"}, 2, `unknown command "nonsense"`},
		{[]string{"serve", "--procs", "-1"}, 2, "flag provided but not defined: -procs"},
		{[]string{"serve", "--build-child=false"}, 2, "flag provided but not defined: -build-child"},
		{[]string{"serve", "--compress-child=false"}, 2, "flag provided but not defined: -compress-child"},
		{[]string{"serve", "--data", "", "--store", "", "--watch", "inbox"}, 2, "--watch, --sync, --init and --sample-until-imported need a version store"},
		{[]string{"serve", "--data", missing}, 2, "--data " + missing + ": no such directory"},
		{[]string{"serve", "extra"}, 2, `takes no arguments, got ["extra"]`},
		{[]string{"import", "--brotli=false", "dir"}, 2, "flag provided but not defined: -brotli"},
		{[]string{"import", "--data", missing}, 2, "wants SNAPSHOT, got 0 arguments"},
		{[]string{"import", "--data", missing, "a", "b"}, 2, "wants SNAPSHOT, got 2 arguments"},
		{[]string{"import", "--data", missing, "--", "--force", "b"}, 2, "wants SNAPSHOT, got 2 arguments"}, // after --, arguments
		{[]string{"sync", "--from", "http://127.0.0.1:1", "--part=false"}, 2, "flag provided but not defined: -part"},
		{[]string{"activate", "--data", missing, "not-an-id"}, 2, `"not-an-id" is not a manifest ID`},
		{[]string{"activate", "--data", missing, "0123456789ABCDEF"}, 2, "no such directory"},
		{[]string{"import", "--data", t.TempDir(), missing}, 1, "refdata import: "},
	} {
		var out syncBuffer
		p := process{stdout: &out, stderr: &out, env: noEnv}
		if got := p.run(context.Background(), tc.args); got != tc.want || !strings.Contains(out.String(), tc.out) {
			t.Errorf("refdata %q: exit %d, want %d, with %q in:\n%s", tc.args, got, tc.want, tc.out, out.String())
		}
	}
	if _, err := os.Stat(missing); err == nil {
		t.Errorf("a refused command created %s", missing)
	}
}

// TestServeEmptyStore: serve on a store with no version — a directory --init
// creates, or a PostgreSQL schema — is alive but not ready, and answers 503
// in the error envelope wherever a version is needed; a version imported
// while it runs is picked up, and both turn 200.
func TestServeEmptyStore(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name  string
		store func(t *testing.T) []string
	}{
		{"directory", func(t *testing.T) []string { return []string{"--data", filepath.Join(t.TempDir(), "store"), "--init"} }},
		{"postgres", func(t *testing.T) []string { return []string{"--store", storetest.PostgresSchema(t, "cmd")} }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			store := tc.store(t)
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			addr, _ := start(t, ctx, append([]string{"--addr", "127.0.0.1:0", "--log-level", "warn", "--poll", "20ms"}, store...)...)
			check := apitest.New(t)
			h := apitest.Forward(t, &http.Client{}, "http://"+addr)
			get := func(target string) (*http.Response, string) {
				req := httptest.NewRequest("GET", target, nil)
				req.Header.Set("User-Agent", "refdata-test/1.0 (+http://localhost)")
				res := check.Do(t, h, req)
				b, _ := io.ReadAll(res.Body)
				return res, string(b)
			}
			for _, target := range []string{"/readyz", "/v1/weapons", "/v1/version"} {
				eventually(t, target+" says no version is imported", func() bool {
					res, body := get(target)
					if res.StatusCode != http.StatusServiceUnavailable {
						t.Fatalf("%s on an empty store: %d, want 503", target, res.StatusCode)
					}
					return strings.Contains(body, "no version imported yet") // not "loading"
				})
			}
			if res, _ := get("/healthz"); res.StatusCode != http.StatusOK {
				t.Errorf("/healthz on an empty store: %d, want 200", res.StatusCode)
			}

			var out syncBuffer
			if code := run(ctx, append(append([]string{"import"}, store[:2]...), sampleDir(t, 1)), &out, &out); code != 0 {
				t.Fatalf("import into the served store: exit %d\n%s", code, out.String())
			}
			id15 := manifestOf(t, fixtures.Versions()[1])
			eventually(t, "/readyz answers 200 after the import", func() bool {
				res, _ := get("/readyz")
				return res.StatusCode == http.StatusOK
			})
			if res, _ := get("/v1/weapons"); res.StatusCode != http.StatusOK || res.Header.Get("X-Data-Version") != id15 {
				t.Errorf("/v1/weapons after the import: %d from %q, want 200 from %s", res.StatusCode, res.Header.Get("X-Data-Version"), id15)
			}
		})
	}
}

// TestServeFailsBeforeLoading: a malformed --addr, and one already taken,
// end serve before it reads any data: the store named is a database that
// never answers, which a load would wait for (until the deadline, which
// only keeps a regression from hanging the test).
func TestServeFailsBeforeLoading(t *testing.T) {
	t.Parallel()
	taken, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer taken.Close()
	for _, tc := range []struct {
		addr string
		want int
		says string
	}{
		{"nonsense", 2, `--addr "nonsense": want host:port`},
		{"127.0.0.1:http", 2, "numeric port"},
		{taken.Addr().String(), 1, "--addr: listen tcp " + taken.Addr().String() + ": bind: address already in use"},
	} {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		var out syncBuffer
		p := process{stdout: &out, stderr: &out, env: noEnv}
		code := p.run(ctx, []string{"serve", "--addr", tc.addr, "--store", "postgres://refdata@127.0.0.1:1/none?connect_timeout=60"})
		if code != tc.want || !strings.Contains(out.String(), tc.says) || ctx.Err() != nil {
			t.Errorf("serve --addr %s: exit %d, want %d saying %q:\n%s", tc.addr, code, tc.want, tc.says, out.String())
		}
		cancel()
	}
}

// TestServeLeavesReplicasAtShutdown: a replica of a PostgreSQL store takes
// itself out of the store's replicas as it shuts down, so the next publish
// switches at once rather than waiting for a replica that is gone until its
// heartbeat ages out.
func TestServeLeavesReplicasAtShutdown(t *testing.T) {
	t.Parallel()
	u := storetest.PostgresSchema(t, "cmd")
	var out syncBuffer
	if code := run(context.Background(), []string{"import", "--store", u, sampleDir(t, 0)}, &out, &out); code != 0 {
		t.Fatalf("import: exit %d\n%s", code, out.String())
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	addr, done := start(t, ctx, "--addr", "127.0.0.1:0", "--log-level", "warn", "--store", u)
	eventually(t, "/readyz answers 200", func() bool {
		res, err := http.Get("http://" + addr + "/readyz")
		if err != nil {
			return false
		}
		res.Body.Close()
		return res.StatusCode == http.StatusOK
	})
	cancel()
	if code := <-done; code != 0 {
		t.Fatalf("serve: exit %d", code)
	}
	if code := run(context.Background(), []string{"import", "--store", u, sampleDir(t, 1)}, &out, &out); code != 0 {
		t.Fatalf("import: exit %d\n%s", code, out.String())
	}
	st, err := postgres.Open(context.Background(), u)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	if p, _, err := st.Active(); err != nil || !p.ActivateAt.IsZero() {
		t.Errorf("the publish after the only replica stopped: pointer %+v, %v; want the switch at once", p, err)
	}
}
