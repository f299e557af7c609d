package main

import (
	"cmp"
	"context"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/refdata/refdata/fixtures"
	"github.com/refdata/refdata/router/apitest"
)

// proxyRoutes are the catalog routes a client of the proxy reads together, by
// their pinned URLs (/v1/versions/{manifestId}/<route>).
var proxyRoutes = []string{"weapons/skins?language=ja-JP", "agents?isPlayableCharacter=true", "maps", "buddies?language=all", "contenttiers"}

// proxyEncodings are the Accept-Encoding headers the clients send: the proxy
// reduces each to identity, gzip or br.
var proxyEncodings = []string{"", "identity", "gzip", "br", "gzip, deflate, br", "br;q=0, gzip", "gzip;q=0.5, br;q=1.0"}

// TestCachingProxy runs each configuration of deploy/proxy (tools/proxy.sh) in
// front of two replicas of one file store, through ten publishes (an import,
// then activations back and forth between the sample versions) while clients
// read through it, and checks: every answer is a success that openapi.yaml
// describes; a client that reads /v1/version, or a current route's
// Content-Location, and then the pinned URLs of that version gets that version
// in every body; /v1/version through the proxy names a new version within the
// max-age it is sent with plus a second of the publish; and each pinned URL
// reaches a replica at most once per encoding (counted by a reverse proxy of
// the test's own in front of each replica). Without -short only; an engine not
// installed skips, or fails when REFDATA_REQUIRE_PROXY=1 (make test-proxy).
func TestCachingProxy(t *testing.T) {
	if testing.Short() {
		t.Skip("nginx and Varnish through ten publishes under load: make test-proxy")
	}
	dirs := [2]string{}
	for i := range dirs {
		nn, _, _ := strings.Cut(filepath.Base(fixtures.Versions()[i]), "_")
		dirs[i] = filepath.Join(t.TempDir(), "v"+nn)
		if err := fixtures.Write(dirs[i], nn, true); err != nil {
			t.Fatal(err)
		}
	}
	for _, engine := range []string{"nginx", "varnish"} {
		t.Run(engine, func(t *testing.T) { proxyUnderPublishes(t, engine, dirs) })
	}
}

func proxyUnderPublishes(t *testing.T, engine string, dirs [2]string) {
	script := filepath.Join("..", "..", "tools", "proxy.sh")
	if err := exec.Command(script, "installed", engine).Run(); err != nil {
		if os.Getenv("REFDATA_REQUIRE_PROXY") == "1" {
			t.Fatalf("%s is not installed (tools/proxy.sh install) and REFDATA_REQUIRE_PROXY=1", engine)
		}
		t.Skipf("%s is not installed: tools/proxy.sh install", engine)
	}
	ctx, cancel := context.WithCancel(context.Background())
	data := t.TempDir()
	refdata := func(args ...string) {
		t.Helper()
		var out, errOut strings.Builder
		if code := run(ctx, args, &out, &errOut); code != 0 {
			t.Fatalf("refdata %q: exit %d\n%s%s", args, code, out.String(), errOut.String())
		}
	}
	refdata("import", "--data", data, dirs[0])
	ids := [2]string{manifestOf(t, fixtures.Versions()[0]), manifestOf(t, fixtures.Versions()[1])}

	check := apitest.New(t)
	client := &http.Client{
		Transport:     &http.Transport{DisableCompression: true, MaxIdleConnsPerHost: 16},
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
		Timeout:       30 * time.Second,
	}
	// Two replicas of the store, each behind a reverse proxy that counts the
	// answers leaving it by target and Content-Encoding.
	var hits sync.Map // "target coding" → *atomic.Int64
	var ports, addrs [2]string
	var exits []<-chan int
	t.Cleanup(func() {
		cancel()
		for _, done := range exits {
			<-done
		}
	})
	for i := range ports {
		addr, done := start(t, ctx, "--addr", "127.0.0.1:0", "--data", data, "--log-level", "warn")
		exits = append(exits, done)
		addrs[i] = addr
		// Ready before the proxy starts: nginx would take a replica's 503 while
		// it loads for a failure, and have none left for a few seconds.
		direct := apitest.Forward(t, client, "http://"+addr)
		eventually(t, "replica ready", func() bool {
			return check.Do(t, direct, httptest.NewRequest("GET", "/readyz", nil)).StatusCode == http.StatusOK
		})
		rp := httputil.NewSingleHostReverseProxy(&url.URL{Scheme: "http", Host: addr})
		rp.Transport = &http.Transport{DisableCompression: true}
		rp.FlushInterval = -1
		rp.ModifyResponse = func(res *http.Response) error {
			n, _ := hits.LoadOrStore(res.Request.URL.RequestURI()+" "+cmp.Or(res.Header.Get("Content-Encoding"), "identity"), new(atomic.Int64))
			n.(*atomic.Int64).Add(1)
			return nil
		}
		front := httptest.NewServer(rp)
		t.Cleanup(front.Close)
		ports[i] = front.URL[strings.LastIndex(front.URL, ":")+1:]
	}

	port := freePort(t)
	out, err := exec.Command(script, "start", engine, port, ports[0], ports[1]).Output()
	if err != nil {
		t.Fatalf("tools/proxy.sh start %s: %v\n%s", engine, err, stderrOf(err))
	}
	dir := strings.TrimSpace(string(out))
	t.Cleanup(func() {
		if t.Failed() {
			for _, name := range []string{"logs/error.log", "varnishd.log"} {
				if b, err := os.ReadFile(filepath.Join(dir, name)); err == nil && len(b) > 0 {
					t.Logf("%s %s:\n%s", engine, name, tail(b, 4096))
				}
			}
		}
		if out, err := exec.Command(script, "stop", dir).CombinedOutput(); err != nil {
			t.Errorf("tools/proxy.sh stop: %v\n%s", err, out)
		}
	})

	h := apitest.Forward(t, client, "http://127.0.0.1:"+port)
	// complain reports the first 20 failures of the clients, who may repeat one
	// many times a second.
	var failures atomic.Int64
	complain := func(format string, args ...any) {
		t.Helper()
		if failures.Add(1) <= 20 {
			t.Errorf(engine+": "+format, args...)
		}
	}
	// get reads target through the proxy, checked against openapi.yaml; any
	// answer but 200 is a failure.
	get := func(target, encoding string, header ...string) *http.Response {
		req := httptest.NewRequest("GET", target, nil)
		req.Header.Set("User-Agent", "refdata-proxy-test/1.0 (+http://localhost)")
		if encoding != "" {
			req.Header.Set("Accept-Encoding", encoding)
		}
		for i := 0; i+1 < len(header); i += 2 {
			req.Header.Set(header[i], header[i+1])
		}
		res := check.Do(t, h, req)
		if res.StatusCode != http.StatusOK {
			complain("GET %s (Accept-Encoding %q): %d", target, encoding, res.StatusCode)
		}
		return res
	}
	active := func(encoding string) (manifestID string, maxAge time.Duration) {
		res := get("/v1/version", encoding)
		return res.Header.Get("X-Data-Version"), maxAgeOf(res.Header.Get("Cache-Control"))
	}
	eventually(t, "/readyz through the proxy answers 200", func() bool {
		return check.Do(t, h, httptest.NewRequest("GET", "/readyz", nil)).StatusCode == http.StatusOK
	})

	// The clients: each starts from /v1/version or from a current route's
	// Content-Location, then reads the pinned URLs of the version it learnt.
	stop := make(chan struct{})
	var wg sync.WaitGroup
	var reads atomic.Int64
	for c := range 6 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			rng := rand.New(rand.NewPCG(uint64(c), 1))
			for {
				select {
				case <-stop:
					return
				default:
				}
				encoding := proxyEncodings[rng.IntN(len(proxyEncodings))]
				var id string
				if c%2 == 0 {
					id, _ = active(encoding)
				} else {
					route := proxyRoutes[rng.IntN(len(proxyRoutes))]
					res := get("/v1/"+route, encoding)
					id = res.Header.Get("X-Data-Version")
					if want := "/v1/versions/" + id + "/" + route; res.StatusCode == 200 && res.Header.Get("Content-Location") != want {
						complain("GET /v1/%s: Content-Location %q, X-Data-Version %s: want %s", route, res.Header.Get("Content-Location"), id, want)
					}
				}
				for _, route := range proxyRoutes {
					res := get("/v1/versions/"+id+"/"+route, encoding)
					reads.Add(1)
					if got := res.Header.Get("X-Data-Version"); res.StatusCode == 200 && got != id {
						complain("a client pinned to %s read /v1/versions/%s/%s as version %s", id, id, route, got)
					}
				}
			}
		}()
	}

	// Ten publishes: 15 imported, then activations 14, 15, 14, … Each must show
	// through the proxy within the max-age /v1/version is sent with plus 1 s,
	// three answers in a row (the proxy spreads them over both replicas).
	_, maxAge := active("")
	for i := range 10 {
		want := ids[(i+1)%2]
		var pushed func()
		if i == 2 {
			held := func() int { return heldOn(t, check, client, addrs[:]) }
			pushed = pushThrough(t, engine, check, "http://127.0.0.1:"+port, get, held, want)
		}
		if i == 0 {
			refdata("import", "--data", data, dirs[1])
		} else {
			refdata("activate", "--data", data, want)
		}
		deadline := time.Now().Add(maxAge + time.Second)
		for inARow := 0; inARow < 3; {
			id, age := active(proxyEncodings[inARow%len(proxyEncodings)])
			maxAge = age
			if id != want {
				inARow = 0
			} else {
				inARow++
			}
			if inARow < 3 && time.Now().After(deadline) {
				t.Errorf("%s: publish %d: /v1/version through the proxy still names %s, not %s, %s after the publish (max-age %s + 1 s)",
					engine, i+1, id, want, time.Since(deadline.Add(-maxAge-time.Second)).Round(time.Millisecond), maxAge)
				break
			}
		}
		if pushed != nil {
			pushed()
		}
		time.Sleep(500 * time.Millisecond) // the clients read the new version a while
	}
	close(stop)
	wg.Wait()

	if reads.Load() < 100 {
		t.Errorf("%s: only %d pinned reads during the publishes", engine, reads.Load())
	}
	// Each pinned URL reached a replica at most once per encoding.
	pinned := 0
	hits.Range(func(k, v any) bool {
		key := k.(string)
		if !strings.HasPrefix(key, "/v1/versions/") {
			return true
		}
		pinned++
		if n := v.(*atomic.Int64).Load(); n > 1 {
			complain("%q reached the replicas %d times, want at most once", key, n)
		}
		return true
	})
	if pinned < len(proxyRoutes)*len(ids) {
		t.Errorf("%s: only %d pinned URL and encoding pairs reached the replicas, want at least %d", engine, pinned, len(proxyRoutes)*len(ids))
	}
	t.Logf("%s: %d pinned reads by 6 clients through 10 publishes; %d pinned URL and encoding pairs fetched from the replicas",
		engine, reads.Load(), pinned)
}

// pushThrough opens /v1/version/stream and holds /v1/version?wait= (with the
// ETag of the answer it has) through the proxy, before the publish that makes
// want active; the function it returns, called once want is active, checks
// that the held request was answered after the publish with want, and that
// the stream sent want's event within 10 s (a proxy that buffered the stream
// would hold it for the 25 s of a keep-alive comment). A build without change
// push (the stream is 404) checks neither, and says so. held is how many
// requests the replicas hold.
func pushThrough(t *testing.T, engine string, check *apitest.Checker, base string, get func(target, encoding string, header ...string) *http.Response, held func() int, want string) func() {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	req := httptest.NewRequest("GET", "/v1/version/stream", nil)
	req.Header.Set("User-Agent", "refdata-proxy-test/1.0 (+http://localhost)")
	sreq, _ := http.NewRequestWithContext(ctx, "GET", base+req.URL.Path, nil)
	sreq.Header = req.Header.Clone()
	res, err := (&http.Client{Transport: &http.Transport{DisableCompression: true}}).Do(sreq)
	if err != nil {
		cancel()
		t.Fatalf("%s: GET /v1/version/stream: %v", engine, err)
	}
	if res.StatusCode == http.StatusNotFound {
		res.Body.Close()
		cancel()
		t.Logf("%s: /v1/version/stream is 404, this build has no change push: ?wait= and the stream through the proxy not checked", engine)
		return nil
	}
	stream := apitest.NewStream(res)
	current := get("/v1/version", "")
	if ev, err := stream.Next(); err != nil || ev["id"] != current.Header.Get("X-Data-Version") {
		t.Errorf("%s: the stream's first event %v (%v), want the active version %s's", engine, ev, err, current.Header.Get("X-Data-Version"))
	}
	type answer struct {
		res *http.Response
		at  time.Time
	}
	answered := make(chan answer, 1)
	before := held() // the stream
	go func() {
		res := get("/v1/version?wait=120s", "", "If-None-Match", current.Header.Get("ETag"))
		answered <- answer{res, time.Now()}
	}()
	eventually(t, "the wait reaches a replica through the proxy and is held there", func() bool { return held() > before })
	published := time.Now()
	return func() {
		t.Helper()
		defer cancel()
		if a := <-answered; a.res.Header.Get("X-Data-Version") != want || a.at.Before(published) {
			t.Errorf("%s: /v1/version?wait= held over the publish of %s: %d from %s, %s after the publish: want it held, then 200 from %s",
				engine, want, a.res.StatusCode, a.res.Header.Get("X-Data-Version"), a.at.Sub(published).Round(time.Millisecond), want)
		}
		late := time.AfterFunc(10*time.Second, cancel)
		defer late.Stop()
		for {
			ev, err := stream.Next()
			if err != nil {
				t.Errorf("%s: the stream through the proxy sent no event for %s within 10 s of it being active: %v", engine, want, err)
				return
			}
			if ev["id"] == want {
				break
			}
		}
		res.Body.Close()
		check.Check(t, req, res, stream.Raw)
	}
}

// maxAgeOf is the max-age of a Cache-Control value: 0 without one (no-cache).
func maxAgeOf(cc string) time.Duration {
	for _, d := range strings.Split(cc, ",") {
		if v, ok := strings.CutPrefix(strings.TrimSpace(d), "max-age="); ok {
			if n, err := strconv.Atoi(v); err == nil {
				return time.Duration(n) * time.Second
			}
		}
	}
	return 0
}

func freePort(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return fmt.Sprint(ln.Addr().(*net.TCPAddr).Port)
}

func stderrOf(err error) string {
	if ee, ok := err.(*exec.ExitError); ok {
		return string(ee.Stderr)
	}
	return ""
}

func tail(b []byte, n int) []byte {
	if len(b) > n {
		return b[len(b)-n:]
	}
	return b
}

// heldOn is the sum of refdata_held_requests over the replicas at addrs.
func heldOn(t *testing.T, check *apitest.Checker, client *http.Client, addrs []string) int {
	t.Helper()
	n := 0
	for _, addr := range addrs {
		req := httptest.NewRequest("GET", "/v1/metrics", nil)
		req.Header.Set("User-Agent", "refdata-proxy-test/1.0 (+http://localhost)")
		b, _ := io.ReadAll(check.Do(t, apitest.Forward(t, client, "http://"+addr), req).Body)
		for line := range strings.Lines(string(b)) {
			var v float64
			if _, err := fmt.Sscanf(line, "refdata_held_requests %g", &v); err == nil {
				n += int(v)
			}
		}
	}
	return n
}
