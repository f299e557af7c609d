package main

import (
	"context"
	"encoding/json"
	"io"
	"io/fs"
	"net/http"
	"net/http/httptest"
	"path"
	"strings"
	"testing"
	"time"

	"github.com/refdata/refdata/api/apitest"
	"github.com/refdata/refdata/envelope"
	"github.com/refdata/refdata/fixtures"
	"github.com/refdata/refdata/gen"
)

// TestServe runs `serve` on the embedded sample data as main wires it — edge server,
// router, metrics — checks its answers against the spec over a real connection,
// that requests answered from the edge's memo are counted like routed ones, that
// it becomes ready once the older sample version is loaded and then serves the
// diff, and that it stops cleanly when its context ends.
func TestServe(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	ready := make(chan string, 1)
	done := make(chan error, 1)
	go func() {
		done <- serve(ctx, []string{"--addr", "127.0.0.1:0", "--log-level", "warn"}, process{stderr: io.Discard, ready: ready, sampleEffort: apitest.Effort()})
	}()
	var addr string
	select {
	case addr = <-ready:
	case err := <-done:
		t.Fatalf("serve: %v", err)
	}

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
	// versions, under /v1/diff/latest and by name, and the pages over it. The
	// newest is served at once; the older one follows, and the server is not
	// ready until it is there.
	waitReady(t, get)
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
	} {
		if !strings.Contains(string(body), want) {
			t.Errorf("metrics lack %s", want)
		}
	}

	cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("serve after its context ended: %v", err)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("serve did not return after its context ended")
	}
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

// TestRun: the commands' exit codes and usage, and the flags of the deleted
// build and compression children refused.
func TestRun(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		args []string
		want int
		out  string // in stdout or stderr
	}{
		{nil, 2, "usage:"},
		{[]string{"help"}, 0, "refdata serve"},
		{[]string{"nonsense"}, 2, `unknown command "nonsense"`},
		{[]string{"serve", "--procs", "-1"}, 1, "flag provided but not defined: -procs"},
		{[]string{"serve", "--build-child=false"}, 1, "flag provided but not defined: -build-child"},
		{[]string{"serve", "--compress-child=false"}, 1, "flag provided but not defined: -compress-child"},
		{[]string{"serve", "--data", "", "--store", "", "--watch", "inbox"}, 1, "--watch needs --data"},
		{[]string{"import", "--brotli=false", "dir"}, 1, "flag provided but not defined: -brotli"},
		{[]string{"sync", "--from", "http://127.0.0.1:1", "--part=false"}, 1, "flag provided but not defined: -part"},
		{[]string{"activate", "--data", "nowhere", "not-an-id"}, 1, "MANIFEST_ID"},
	} {
		var out strings.Builder
		if got := run(context.Background(), tc.args, &out, &out); got != tc.want || !strings.Contains(out.String(), tc.out) {
			t.Errorf("refdata %q: exit %d, want %d, with %q in:\n%s", tc.args, got, tc.want, tc.out, out.String())
		}
	}
}
