package main

import (
	"bytes"
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil/promlint"

	"github.com/refdata/refdata/catalog"
	"github.com/refdata/refdata/handler"
	"github.com/refdata/refdata/replica"
	"github.com/refdata/refdata/router"
	"github.com/refdata/refdata/router/apitest"

	"github.com/refdata/refdata/fixtures"
	"github.com/refdata/refdata/store"
	"github.com/refdata/refdata/store/postgres"
	"github.com/refdata/refdata/store/storetest"
	"github.com/refdata/refdata/upstream/upstreamtest"
)

// TestSyncActivateForce: the commands as main wires them. sync --once twice
// (14, then 15), activate 14 (a rollback: /v1/diff/latest then compares 15 →
// 14), a sync that finds 15 unchanged leaves the rollback alone, and
// import --force of the stored 15 re-publishes it.
func TestSyncActivateForce(t *testing.T) {
	t.Parallel()
	vs := standInVersions(t)
	up := upstreamtest.New(vs...)
	hs := httptest.NewServer(up)
	defer hs.Close()
	data := t.TempDir()
	cmd := func(want int, args ...string) string {
		t.Helper()
		var out, errOut strings.Builder
		if got := run(context.Background(), args, &out, &errOut); got != want {
			t.Fatalf("refdata %v: exit %d, want %d\n%s%s", args, got, want, out.String(), errOut.String())
		}
		return out.String()
	}
	active := func() store.Pointer {
		st, _ := store.Open(data)
		p, _, err := st.Active()
		if err != nil {
			t.Fatal(err)
		}
		return p
	}
	id14, id15 := vs[0].Name, vs[1].Name
	sync := []string{"sync", "--from", hs.URL, "--data", data, "--once", "--contact", "https://example.org/ops"}
	if out := cmd(0, sync...); !strings.Contains(out, "published "+id14) {
		t.Fatalf("first sync: %s", out)
	}
	up.Publish(1)
	cmd(0, sync...)
	if p := active(); p.ManifestID != id15 || p.Previous != id14 {
		t.Fatalf("after syncing 15: %+v", p)
	}
	cmd(0, "activate", "--data", data, id14)
	if p := active(); p.ManifestID != id14 || p.Previous != id15 {
		t.Fatalf("after activate: %+v, want %s with previous %s", p, id14, id15)
	}
	st, _ := store.Open(data)
	if _, err := st.ReadDiff(id15, id14); err != nil {
		t.Fatalf("no diff 15 → 14 for /v1/diff/latest: %v", err)
	}
	if out := cmd(0, sync...); !strings.Contains(out, "unchanged") {
		t.Fatalf("sync after a rollback: %s", out)
	}
	if p := active(); p.ManifestID != id14 {
		t.Fatalf("a sync undid the rollback: %+v", p)
	}
	cmd(1, "activate", "--data", data, "0123456789ABCDEF")
	cmd(2, "activate", "--data", data, "../etc")

	// import --force of the stored 15 (its files, as an export holds them).
	_, files, err := st.ReadVersion(id15)
	if err != nil {
		t.Fatal(err)
	}
	copy15 := filepath.Join(t.TempDir(), id15)
	for name, b := range files {
		p := filepath.Join(copy15, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if out := cmd(0, "import", "--data", data, copy15); !strings.Contains(out, "already stored") {
		t.Fatalf("import of a stored version: %s", out)
	}
	cmd(0, "import", "--force", "--data", data, copy15)
	if p := active(); p.ManifestID != id15 {
		t.Fatalf("import --force did not re-publish 15: %+v", p)
	}
}

// TestExportImport: /v1/export of a store-backed server, saved as it is, is
// what `refdata import` takes: the new store holds the same files (same
// content hash), and the export's ETag gives a 304.
func TestExportImport(t *testing.T) {
	t.Parallel()
	data := t.TempDir()
	for i := range fixtures.Versions() {
		dir := sampleDir(t, i)
		var out strings.Builder
		if run(context.Background(), []string{"import", "--data", data, dir}, &out, &out) != 0 {
			t.Fatal(out.String())
		}
	}
	st, _ := store.Open(data)
	logger := slog.New(slog.DiscardHandler)
	repo, err := replica.Open(st, logger, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	router, err := router.New(&handler.Server{Repo: repo}, logger, router.NewHTTPMetrics(prometheus.NewRegistry()))
	if err != nil {
		t.Fatal(err)
	}
	check := apitest.New(t)
	get := func(target string, header ...string) *http.Response {
		req := httptest.NewRequest("GET", target, nil)
		req.Header.Set("User-Agent", "refdata-test/1.0 (+http://localhost)")
		for i := 0; i+1 < len(header); i += 2 {
			req.Header.Set(header[i], header[i+1])
		}
		return check.Do(t, router, req)
	}
	vs, _ := st.Versions()
	for _, target := range []string{"/v1/export", "/v1/export/" + strings.ToLower(vs[0].ManifestID)} {
		res := get(target)
		if res.StatusCode != 200 {
			t.Fatalf("%s: %d", target, res.StatusCode)
		}
		if r2 := get(target, "If-None-Match", res.Header.Get("ETag")); r2.StatusCode != http.StatusNotModified {
			t.Fatalf("%s with its ETag: %d", target, r2.StatusCode)
		}
		b, _ := io.ReadAll(res.Body)
		file := filepath.Join(t.TempDir(), "export.tar.gz")
		if err := os.WriteFile(file, b, 0o644); err != nil {
			t.Fatal(err)
		}
		mirror := t.TempDir()
		var out strings.Builder
		if run(context.Background(), []string{"import", "--data", mirror, file}, &out, &out) != 0 {
			t.Fatalf("import of %s: %s", target, out.String())
		}
		id := res.Header.Get("X-Data-Version")
		ms, _ := store.Open(mirror)
		got, _ := ms.Versions()
		want, _ := st.Versions()
		var wantHash string
		for _, m := range want {
			if m.ManifestID == id {
				wantHash = catalog.ContentHash(m.Files)
			}
		}
		if len(got) != 1 || got[0].ManifestID != id || catalog.ContentHash(got[0].Files) != wantHash {
			t.Fatalf("%s: the mirror holds %+v, want %s with hash %s", target, got, id, wantHash)
		}
	}
}

// TestMain runs the tests in a temporary directory of their own, removed at
// exit with what they wrote there (sampleRoot).
func TestMain(m *testing.M) { os.Exit(storetest.RunInTempDir(m)) }

// sampleRoot holds the sample versions written once for every test here
// (sampleDirs) and the sample store serve makes (start).
var sampleRoot = sync.OnceValue(func() string {
	dir, err := os.MkdirTemp("", "refdata-samples-")
	if err != nil {
		panic(err)
	}
	return dir
})

// sampleDirs writes the embedded sample versions once (trimmed with -short);
// they are read only.
var sampleDirs = sync.OnceValues(func() ([]string, error) {
	return fixtures.WriteAll(sampleRoot(), testing.Short())
})

// sampleDir is the directory of sample version i (0 the older).
func sampleDir(t *testing.T, i int) string {
	t.Helper()
	dirs, err := sampleDirs()
	if err != nil {
		t.Fatal(err)
	}
	return dirs[i]
}

// sampleVersions are the sample versions as a stand-in upstream serves them,
// read once.
var sampleVersions = sync.OnceValues(func() ([]upstreamtest.Version, error) {
	dirs, err := sampleDirs()
	if err != nil {
		return nil, err
	}
	return upstreamtest.FromSnapshotDirs(dirs)
})

// standInVersions is sampleVersions, or the test fails.
func standInVersions(t *testing.T) []upstreamtest.Version {
	t.Helper()
	vs, err := sampleVersions()
	if err != nil {
		t.Fatal(err)
	}
	return vs
}

// TestServeSync: serve --data --sync follows an upstream in the serving
// process: the upstream's version is served once synced, and the scrape has
// the sync series, clean under promlint.
func TestServeSync(t *testing.T) {
	t.Parallel()
	vs := standInVersions(t)
	up := upstreamtest.New(vs[1])
	hs := httptest.NewServer(up)
	defer hs.Close()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	addr, done := start(t, ctx, "--addr", "127.0.0.1:0", "--log-level", "warn", "--data", t.TempDir(),
		"--sync", hs.URL, "--sync-every", "1h", "--poll", "20ms", "--contact", "https://example.org/ops")
	check := apitest.New(t)
	h := apitest.Forward(t, &http.Client{}, "http://"+addr)
	get := func(target string) *http.Response {
		req := httptest.NewRequest("GET", target, nil)
		req.Header.Set("User-Agent", "refdata-test/1.0 (+http://localhost)")
		return check.Do(t, h, req)
	}
	// Wait for the first sync to publish, the poll to swap it in and the
	// sync's state (written after the run is counted) to reach the scrape.
	wants := []string{
		`refdata_sync_runs_total{outcome="published"} 1`,
		`refdata_sync_upstream_version_info{manifest_id="` + vs[1].Name + `",upstream="` + hs.URL + `"} 1`,
		`refdata_sync_upstream_requests_total{code="200"}`,
		`refdata_sync_last_success_timestamp_seconds`,
	}
	var body []byte
	eventually(t, "serve --sync serves "+vs[1].Name+" and its metrics say so", func() bool {
		body, _ = io.ReadAll(get("/v1/metrics").Body)
		return get("/v1/version").Header.Get("X-Data-Version") == vs[1].Name &&
			!slices.ContainsFunc(wants, func(w string) bool { return !bytes.Contains(body, []byte(w)) })
	})
	problems, err := promlint.New(bytes.NewReader(body)).Lint()
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range problems {
		t.Errorf("promlint: %s: %s", p.Metric, p.Text)
	}
	cancel()
	<-done
}

// TestSyncFailureMetrics: a sync that fails, run by its own process as the
// systemd timer, the CronJob and compose run it, shows on a replica of the
// store — file or PostgreSQL — with its reason class and the count of
// failures in a row, and whether the version served is behind the upstream's;
// a sync that ends well clears the count.
func TestSyncFailureMetrics(t *testing.T) {
	t.Parallel()
	for _, kind := range []string{"file", "postgres"} {
		t.Run(kind, func(t *testing.T) {
			t.Parallel()
			data := t.TempDir()
			if kind == "postgres" {
				data = storetest.PostgresSchema(t, "syncfail")
			}
			vs := standInVersions(t)
			up := upstreamtest.New(vs...)
			hs := httptest.NewServer(up)
			defer hs.Close()
			sync := func(want int, reason string) {
				t.Helper()
				var out, errOut strings.Builder
				args := []string{"sync", "--once", "--from", hs.URL, "--data", data, "--retries=-1", "--contact", "https://example.org/ops"}
				if got := run(context.Background(), args, &out, &errOut); got != want || !strings.Contains(errOut.String(), reason) {
					t.Fatalf("refdata %v: exit %d, want %d saying %q\n%s%s", args, got, want, reason, out.String(), errOut.String())
				}
			}
			sync(0, "") // 14 published
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			addr, done := start(t, ctx, "--addr", "127.0.0.1:0", "--log-level", "error", "--data", data, "--poll", "20ms")
			check := apitest.New(t)
			h := apitest.Forward(t, &http.Client{}, "http://"+addr)
			scrape := func() string {
				req := httptest.NewRequest("GET", "/v1/metrics", nil)
				req.Header.Set("User-Agent", "refdata-test/1.0 (+http://localhost)")
				b, _ := io.ReadAll(check.Do(t, h, req).Body)
				return string(b)
			}
			expect := func(what string, want map[string]float64) string {
				t.Helper()
				var body string
				eventually(t, what, func() bool {
					body = scrape()
					for series, v := range want {
						if got, ok := sample(body, series); !ok || got != v {
							return false
						}
					}
					return true
				})
				return body
			}
			expect("the replica serves 14 and its sync state", map[string]float64{
				"refdata_sync_consecutive_failures": 0, "refdata_sync_behind": 0, "refdata_replica_ready": 1,
				`refdata_sync_upstream_version_info{manifest_id="` + vs[0].Name + `",upstream="` + hs.URL + `"}`: 1,
			})

			// The upstream answers 503 to everything: twice.
			up.SetFault(func(w http.ResponseWriter, r *http.Request) bool {
				w.WriteHeader(http.StatusServiceUnavailable)
				return true
			})
			sync(1, "(reason: status)")
			sync(1, "(reason: status)")
			body := expect("two failures of reason status", map[string]float64{
				"refdata_sync_consecutive_failures": 2, "refdata_sync_behind": 0,
			})
			attempt, _ := sample(body, "refdata_sync_last_attempt_timestamp_seconds")
			success, _ := sample(body, "refdata_sync_last_success_timestamp_seconds")
			failure, ok := sample(body, `refdata_sync_last_failure_timestamp_seconds{reason="status"}`)
			if !ok || failure != attempt || success >= attempt {
				t.Errorf("last attempt %v, success %v, failure of reason status %v (%v): want the failure the last attempt, after the success", attempt, success, failure, ok)
			}

			// The upstream publishes 15 and answers one catalog with an HTML
			// page: a third failure, of reason invalid, and 15 not served.
			up.Publish(1)
			up.SetFault(func(w http.ResponseWriter, r *http.Request) bool {
				if r.URL.Path != "/v1/maps" {
					return false
				}
				w.Header().Set("Content-Type", "text/html")
				_, _ = w.Write([]byte("<html><body>Down for maintenance</body></html>"))
				return true
			})
			sync(1, "answered text/html, not JSON (<html><body>Down for maintenance</body></html>) (reason: invalid)")
			body = expect("a third failure, of reason invalid, behind the upstream", map[string]float64{
				"refdata_sync_consecutive_failures": 3, "refdata_sync_behind": 1,
				`refdata_sync_upstream_version_info{manifest_id="` + vs[1].Name + `",upstream="` + hs.URL + `"}`: 1,
			})
			if _, ok := sample(body, `refdata_sync_last_failure_timestamp_seconds{reason="invalid"}`); !ok {
				t.Errorf("no failure of reason invalid:\n%s", grepLines(body, "refdata_sync_"))
			}

			up.SetFault(nil)
			sync(0, "")
			body = expect("the count cleared and 15 served", map[string]float64{
				"refdata_sync_consecutive_failures": 0, "refdata_sync_behind": 0,
			})
			problems, err := promlint.New(strings.NewReader(body)).Lint()
			if err != nil {
				t.Fatal(err)
			}
			for _, p := range problems {
				t.Errorf("promlint: %s: %s", p.Metric, p.Text)
			}
			cancel()
			<-done
		})
	}
}

// sample is the value of one series (its name and labels as the text format
// writes them) in a scrape.
func sample(body, series string) (float64, bool) {
	for _, l := range strings.Split(body, "\n") {
		if rest, ok := strings.CutPrefix(l, series+" "); ok {
			v, err := strconv.ParseFloat(strings.Fields(rest)[0], 64)
			return v, err == nil
		}
	}
	return 0, false
}

// grepLines is the lines of s that hold sub.
func grepLines(s, sub string) string {
	var out []string
	for _, l := range strings.Split(s, "\n") {
		if strings.Contains(l, sub) {
			out = append(out, l)
		}
	}
	return strings.Join(out, "\n")
}

// TestNothingCreated: a rejected import or a failed sync into a store that
// does not exist yet — a directory, or a database schema without refdata's
// tables — leaves none behind; a store URL of another scheme is a usage error
// that creates nothing either.
func TestNothingCreated(t *testing.T) {
	t.Parallel()
	down := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(http.StatusBadGateway) }))
	defer down.Close()
	emptySnapshot := t.TempDir()
	missing := filepath.Join(t.TempDir(), "store", "here")
	stores := map[string]func() (string, func() bool){
		"file": func() (string, func() bool) {
			return missing, func() bool { _, err := os.Stat(filepath.Dir(missing)); return err == nil }
		},
		"postgres": func() (string, func() bool) {
			u := storetest.PostgresSchema(t, "nothing")
			return u, func() bool {
				st, err := postgres.OpenLazy(context.Background(), u)
				if err != nil {
					t.Fatal(err)
				}
				defer st.Close()
				ok, err := st.Exists()
				if err != nil {
					t.Fatal(err)
				}
				return ok
			}
		},
	}
	for _, kind := range []string{"file", "postgres"} {
		data, exists := stores[kind]()
		for _, tc := range []struct {
			name string
			args []string
			want int
		}{
			{"rejected import", []string{"import", "--data", data, emptySnapshot}, 1},
			{"failed sync", []string{"sync", "--once", "--retries=-1", "--from", down.URL, "--data", data}, 1},
		} {
			var out, errOut strings.Builder
			if got := run(context.Background(), tc.args, &out, &errOut); got != tc.want {
				t.Errorf("%s, %s: exit %d, want %d\n%s%s", kind, tc.name, got, tc.want, out.String(), errOut.String())
			}
			if exists() {
				t.Errorf("%s, %s: left a store behind\n%s", kind, tc.name, errOut.String())
			}
		}
	}
	var out, errOut strings.Builder
	if got := run(context.Background(), []string{"import", "--store", "mysql://x@y/z", emptySnapshot}, &out, &errOut); got != 2 {
		t.Errorf("import --store mysql://…: exit %d, want 2\n%s", got, errOut.String())
	}
	if _, err := os.Stat("mysql:"); err == nil {
		t.Error("import --store mysql://… created a directory mysql:")
	}
}
