package edge

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"path"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
	"weak"

	"github.com/go-chi/chi/v5"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/valyala/fasthttp"

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

// sample is what these tests serve: the two embedded versions, the newest with
// every body compressed at apitest.Effort() as a server has it, the one before
// it uncompressed (retained, and swapped in by TestMemoFollowsActiveEdition),
// and a repository that serves the newest and retains the other. Under -short
// both are trimmed (fixtures.Small): these tests hold the memo to the router's
// protocol, which the size of the bodies does not change (the full run has them
// full-size).
type sample struct {
	older, newest *edition.Edition
	repo          *edition.Static
}

var samples = sync.OnceValues(func() (*sample, error) {
	vs := fixtures.Versions()
	if len(vs) < 2 {
		return nil, fmt.Errorf("want two sample versions, have %d", len(vs))
	}
	render := func(v string) (*catalog.Rendered, error) {
		if testing.Short() {
			nn, _, _ := strings.Cut(path.Base(v), "_")
			return fixtures.Small(nn)
		}
		return fixtures.Load(v)
	}
	old, err := render(vs[len(vs)-2])
	if err != nil {
		return nil, err
	}
	cur, err := render(vs[len(vs)-1])
	if err != nil {
		return nil, err
	}
	s := &sample{older: edition.New(old)}
	if s.newest, err = edition.Build(cur, edition.Options{Effort: apitest.Effort()}); err != nil {
		return nil, err
	}
	version := func(ed *edition.Edition) edition.StaticVersion {
		at, _ := time.Parse(time.RFC3339, ed.Version.BuildDate)
		return edition.StaticVersion{Edition: ed, Published: at}
	}
	if s.repo, err = edition.NewStatic(version(s.newest), version(s.older)); err != nil {
		return nil, err
	}
	return s, nil
})

func loadSample(t testing.TB) *sample {
	t.Helper()
	s, err := samples()
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// newest is the served sample version, compressed.
func newest(t testing.TB) *edition.Edition { return loadSample(t).newest }

// swappable is a Repository whose active edition a test changes.
type swappable struct {
	ed atomic.Pointer[edition.Edition]
}

func (s *swappable) Active() *edition.Edition { return s.ed.Load() }
func (s *swappable) LatestDiff() (*representation.Body, error) {
	return nil, catalog.Errorf(catalog.ENOTFOUND, "no diff")
}
func (s *swappable) Diff(string, string) (*representation.Body, error) {
	return nil, catalog.Errorf(catalog.ENOTFOUND, "no diff")
}
func (s *swappable) Versions() *edition.VersionList { return nil }
func (s *swappable) RetainedEdition(string) (*edition.Edition, error) {
	return nil, catalog.Errorf(catalog.ENOTFOUND, "not retained")
}

func testRouter(t testing.TB, repo edition.Repository) http.Handler {
	t.Helper()
	lib, err := media.OpenDir(t.TempDir())
	if err == nil {
		_, err = lib.Put("https://media.example/icon.png", "image/png", []byte(mediaBytes))
	}
	if err != nil {
		t.Fatal(err)
	}
	h, err := router.New(&handler.Server{Repo: repo, Media: lib}, slog.New(slog.DiscardHandler), router.NewHTTPMetrics(prometheus.NewRegistry()))
	if err != nil {
		t.Fatal(err)
	}
	return h
}

// mediaBytes is the one file every test router's media mirror holds.
const mediaBytes = "\x89PNG\r\n\x1a\nnot a real image, but bytes"

// harness is an edge server on a loopback port, a client for it, and the
// checker every answer the client gets goes through.
type harness struct {
	es     *Server
	addr   string
	client *http.Client
	c      *apitest.Checker
}

func start(t testing.TB, cfg Config, opts ...func(*Server)) *harness {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	h := &harness{es: New(cfg), addr: ln.Addr().String(), c: apitest.New(t)}
	for _, o := range opts {
		o(h.es)
	}
	go func() { _ = h.es.Serve(ln) }()
	h.client = &http.Client{Transport: &http.Transport{DisableCompression: true}}
	t.Cleanup(func() {
		// The client leaves first: a keep-alive connection still open when
		// shutdown begins is given the drain grace (a second) to send a last
		// request (shutdown_test.go), and every test would wait it out.
		h.client.CloseIdleConnections()
		_ = h.es.Shutdown(context.Background())
	})
	return h
}

// response is what a client sees, with the Date header left out.
type response struct {
	status int
	header http.Header
	body   []byte
}

// do sends req to the server and validates its answer against openapi.yaml;
// the spec itself (/openapi.json, /openapi.yaml) is no operation of it, and
// only forwarded.
func (h *harness) do(t testing.TB, req *http.Request) response {
	t.Helper()
	var res *http.Response
	if fwd := apitest.Forward(t, h.client, "http://"+h.addr); req.URL.Path == "/openapi.json" || req.URL.Path == "/openapi.yaml" {
		rec := httptest.NewRecorder()
		fwd.ServeHTTP(rec, req)
		res = rec.Result()
	} else {
		res = h.c.Do(t, fwd, req)
	}
	body, err := io.ReadAll(res.Body)
	if err != nil {
		t.Fatal(err)
	}
	res.Header.Del("Date")
	return response{res.StatusCode, res.Header, body}
}

// check validates an answer read off a raw connection against openapi.yaml,
// as harness.do validates the client's.
func check(t testing.TB, c *apitest.Checker, req *http.Request, res response) {
	t.Helper()
	c.Do(t, http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		maps.Copy(w.Header(), res.header)
		w.WriteHeader(res.status)
		_, _ = w.Write(res.body)
	}), req)
}

// direct is the router's answer, with the Content-Length net/http would add on the
// wire to a body whose handler did not set one.
func direct(h http.Handler, req *http.Request) response {
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	if rec.Header().Get("Content-Length") == "" && req.Method != http.MethodHead && rec.Code != http.StatusNoContent && rec.Code != http.StatusNotModified {
		rec.Header().Set("Content-Length", strconv.Itoa(rec.Body.Len()))
	}
	return response{rec.Code, rec.Header(), rec.Body.Bytes()}
}

// settle waits until every open connection waits for its next request: its
// goroutine is done with its last answer and keeps nothing of it on its stack.
func (h *harness) settle(t testing.TB) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(time.Millisecond) {
		open := 0
		h.es.conns.Range(func(any, any) bool { open++; return true })
		if h.es.waitingReads() == open {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d of %d connections still answering after 10 s", open-h.es.waitingReads(), open)
		}
	}
}

// waitingReads counts the open connections whose server goroutine is blocked
// reading the next request.
func (s *Server) waitingReads() int {
	n := 0
	s.conns.Range(func(k, _ any) bool {
		if k.(*drainConn).reading.Load() > 0 {
			n++
		}
		return true
	})
	return n
}

func (h *harness) memoized(target string) bool { return memoized(h.es, target) }

func memoized(s *Server, target string) bool {
	m := s.memo.Load()
	m.mu.RLock()
	defer m.mu.RUnlock()
	return m.entries[target] != nil
}

func (h *harness) memoSize() int {
	m := h.es.memo.Load()
	m.mu.RLock()
	defer m.mu.RUnlock()
	return len(m.entries)
}

func request(method, target string, header ...string) *http.Request {
	req := httptest.NewRequest(method, target, nil)
	req.Header.Set("User-Agent", ua)
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	return req
}

func same(t *testing.T, what string, got, want response) {
	t.Helper()
	if got.status != want.status {
		t.Errorf("%s: status %d, the router says %d", what, got.status, want.status)
	}
	if !bytes.Equal(got.body, want.body) {
		t.Errorf("%s: %d-byte body, the router sends %d bytes", what, len(got.body), len(want.body))
	}
	for _, k := range union(got.header, want.header) {
		if g, w := strings.Join(got.header.Values(k), ", "), strings.Join(want.header.Values(k), ", "); g != w {
			t.Errorf("%s: %s %q, the router says %q", what, k, g, w)
		}
	}
}

func union(a, b http.Header) []string {
	seen := map[string]bool{}
	var keys []string
	for _, h := range []http.Header{a, b} {
		for k := range h {
			if k = http.CanonicalHeaderKey(k); !seen[k] {
				seen[k] = true
				keys = append(keys, k)
			}
		}
	}
	return keys
}

// targets are the request targets the edge serves: every GET path of the spec but
// the diffs, metrics, exports, the version stream and the recolored logos (never an
// edition's body; the router tests cover them), with the first UUID of its catalog and the two sample
// versions (a pinned route names the active one), with and without a language.
// memo tells whether the memo keeps the
// target: it keeps only bodies an edition owns (handler describes only those), so the pages, /v1/versions and the probes always take
// the router; so do the bulk files (router.EdgeMayAnswer).
func targets(t *testing.T, ed, older *edition.Edition) (out []string, memo map[string]bool) {
	doc, err := catalog.Spec()
	if err != nil {
		t.Fatal(err)
	}
	memo = map[string]bool{}
	for _, path := range doc.Paths.InMatchingOrder() {
		if strings.HasPrefix(path, "/v1/diff") || path == "/v1/metrics" || strings.HasPrefix(path, "/v1/export") || path == "/v1/version/stream" || strings.HasSuffix(path, "/{uuid}/image") {
			continue
		}
		op := doc.Paths.Find(path).Get
		p := strings.Replace(path, "{locale}", "de-DE", 1)
		p = strings.Replace(p, "{from}", older.ManifestID, 1)
		p = strings.Replace(p, "{to}", ed.ManifestID, 1)
		p = strings.Replace(p, "{manifestId}", ed.ManifestID, 1) // pinned: the active version's are memoized
		// The catalog pages: one catalog whose name has a '/'.
		if strings.HasPrefix(p, "/browse/") {
			p = strings.Replace(p, "{catalog}", "weapons-skins", 1)
			p = strings.Replace(p, "{uuid}", ed.UUIDs(catalog.WeaponSkins)[0].String(), 1)
		}
		sum := sha256.Sum256([]byte(mediaBytes))
		p = strings.Replace(p, "{sha256}", hex.EncodeToString(sum[:]), 1)
		if strings.Contains(p, "{uuid}") {
			name, _, _ := strings.Cut(strings.TrimPrefix(strings.TrimPrefix(path, handler.PinnedPrefix), "/v1"), "/{uuid}")
			name = name[1:]
			c, ok := catalog.CategoryNamed(name)
			if !ok {
				t.Fatalf("%s: no catalog %s", path, name)
			}
			p = strings.Replace(p, "{uuid}", ed.UUIDs(c)[0].String(), 1)
		}
		kept := !slices.Contains(op.Tags, "pages") && !slices.Contains(op.Tags, "media") && !slices.Contains(op.Tags, "bulk") && path != "/v1/versions" && path != "/healthz" && path != "/readyz"
		out = append(out, p)
		memo[p] = kept
		if op.Parameters.GetByInAndName("query", "language") != nil {
			out = append(out, p+"?language=JA-jp")
			memo[p+"?language=JA-jp"] = kept
		}
	}
	return out, memo
}

// everyTarget serves the newest sample version with the one before it retained,
// and lists its targets as targets does.
func everyTarget(t *testing.T) (ed *edition.Edition, r http.Handler, all []string, memo map[string]bool) {
	s := loadSample(t)
	all, memo = targets(t, s.newest, s.older)
	return s.newest, testRouter(t, s.repo), all, memo
}

// TestMemoMatchesRouter holds the memo to the router: for every target and every
// way of asking (encodings, conditional, HEAD), the answer from the memo is the
// router's, byte for byte and header for header (Date aside), and the spec's.
func TestMemoMatchesRouter(t *testing.T) {
	t.Parallel()
	ed, r, all, memo := everyTarget(t)
	// Lists of the short test's data are a few KiB: sent from the spill file
	// at this size, as the full data's big lists are at the default.
	h := start(t, Config{Router: r, Active: func() *edition.Edition { return ed }, SendfileMin: 2 << 10})
	sent := map[string]int{} // Content-Encoding → answers with a body in it
	for _, target := range all {
		etag := direct(r, request("GET", target)).header.Get("ETag")
		gzETag := direct(r, request("GET", target, "Accept-Encoding", "gzip")).header.Get("ETag")
		for _, tc := range []struct {
			method string
			header []string
		}{
			{"GET", nil},
			{"GET", []string{"Accept-Encoding", "gzip"}},
			{"GET", []string{"Accept-Encoding", "br"}},
			{"GET", []string{"Accept-Encoding", "gzip;q=0.5, br;q=0.1"}},
			{"GET", []string{"Accept-Encoding", "br;q=0, gzip;q=0"}},
			{"GET", []string{"If-None-Match", etag}},
			{"GET", []string{"If-None-Match", `"other", W/` + gzETag, "Accept-Encoding", "gzip"}},
			{"GET", []string{"If-None-Match", gzETag}},
			{"GET", []string{"Origin", "https://app.example"}},
			{"HEAD", nil},
			{"HEAD", []string{"Accept-Encoding", "br"}},
		} {
			what := fmt.Sprintf("%s %s %q", tc.method, target, tc.header)
			want := direct(r, request(tc.method, target, tc.header...))
			refused := want.status == http.StatusNotAcceptable && !memo[target] // a bulk file takes neither
			if want.status != http.StatusOK && want.status != http.StatusNotModified && !refused {
				t.Fatalf("%s: the router answers %d", what, want.status)
			}
			if tc.method == "GET" && want.status == http.StatusOK && memo[target] {
				sent[want.header.Get("Content-Encoding")]++
			}
			for _, via := range []string{"routed", "memo"} {
				// A body of SendfileMin or more that the memo answers leaves
				// by sendfile, from the spill file (the router's, from an
				// edition in memory, is written as it is); a HEAD sends none.
				spilled := h.memoized(target) && tc.method == "GET" && want.status == http.StatusOK && len(want.body) >= h.es.cfg.SendfileMin
				before := h.es.sendfiles.Load()
				same(t, what+" ("+via+")", h.do(t, request(tc.method, target, tc.header...)), want)
				if got := h.es.sendfiles.Load() - before; got != int64(b2i(canSendfile && spilled)) {
					t.Errorf("%s (%s): %d bodies sent by sendfile, want %d", what, via, got, b2i(canSendfile && spilled))
				}
				if via == "routed" && h.memoized(target) != memo[target] {
					t.Fatalf("%s: in the memo = %v, want %v", what, h.memoized(target), memo[target])
				}
			}
		}
	}
	// The memo's negotiation was put to the test: its targets were sent in
	// every encoding.
	for _, enc := range []string{"", "gzip", "br"} {
		if sent[enc] == 0 {
			t.Errorf("no memoized target was answered with Content-Encoding %q: %v", enc, sent)
		}
	}
	// The big bodies among them left by sendfile from the spill file.
	m := h.es.memo.Load()
	m.spill.mu.Lock()
	spilled := len(m.spill.at)
	m.spill.mu.Unlock()
	if canSendfile && spilled == 0 {
		t.Errorf("no answer of %d bytes or more was sent from the spill file", h.es.cfg.SendfileMin)
	}
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

// TestDescriptionsNameTheirRoute: the handler's description of every answer the
// memo keeps names the route chi matched, so the memo's answers are counted under
// the same route label as the router's; and the answers it does not keep are not
// described, but a bulk file's, whose body the edge sends itself (by sendfile).
func TestDescriptionsNameTheirRoute(t *testing.T) {
	t.Parallel()
	ed, r, all, memo := everyTarget(t)
	c := apitest.New(t)
	for _, target := range all {
		var d handler.Description
		rctx := chi.NewRouteContext()
		ctx := context.WithValue(context.WithValue(context.Background(), handler.DescribeKey, &d), chi.RouteCtxKey, rctx)
		res := c.Do(t, r, request("GET", target).WithContext(ctx))
		if res.StatusCode != http.StatusOK {
			t.Fatalf("%s: %d", target, res.StatusCode)
		}
		path, _, _ := strings.Cut(target, "?")
		want := memo[target] || strings.HasSuffix(path, "/bulk") // the edge sends a bulk file's body, not keeping it
		if described := d.Body != nil; described != want {
			t.Fatalf("%s: described = %v, want %v", target, described, want)
		}
		if d.Body == nil {
			continue
		}
		if d.Route.Label != rctx.RoutePattern() || d.Edition != ed || d.Route.Cache != res.Header.Get("Cache-Control") {
			t.Errorf("%s: described route %q (cache %q) of %v; chi matched %q, the answer says %q", target, d.Route.Label, d.Route.Cache, d.Edition == ed, rctx.RoutePattern(), res.Header.Get("Cache-Control"))
		}
	}
}

// TestMemoFollowsActiveEdition swaps the active edition under concurrent readers:
// every answer must be the body of the version its X-Data-Version names, and after
// a swap the new version's.
func TestMemoFollowsActiveEdition(t *testing.T) {
	t.Parallel()
	s := loadSample(t)
	eds := []*edition.Edition{s.older, s.newest}
	repo := &swappable{}
	repo.ed.Store(eds[0])
	h := start(t, Config{Router: testRouter(t, repo), Active: repo.Active})
	byID := map[string]*edition.Edition{}
	for _, ed := range eds {
		byID[ed.ManifestID] = ed
	}
	if len(byID) != 2 {
		t.Fatal("the two sample versions have one manifest ID: a swap would not show")
	}
	const target = "/v1/currencies?language=de-DE"
	de, _ := catalog.ParseLocale("de-DE")
	// check returns the version an answer names, "" (with the error reported)
	// when the answer is not that version's body; it runs on the readers'
	// goroutines too, so it does not stop the test.
	check := func(t *testing.T, res response) string {
		ed := byID[res.header.Get("X-Data-Version")]
		if res.status != http.StatusOK || ed == nil {
			t.Errorf("status %d, X-Data-Version %q", res.status, res.header.Get("X-Data-Version"))
			return ""
		}
		want, err := ed.List(catalog.Currencies, de).JSON()
		if err != nil || !bytes.Equal(res.body, want) {
			t.Errorf("the body is not %s's (%v)", ed.ManifestID, err)
			return ""
		}
		return ed.ManifestID
	}
	for i := 0; i < 6; i++ {
		ed := eds[i%2]
		repo.ed.Store(ed)
		for j := 0; j < 3; j++ {
			if got := check(t, h.do(t, request("GET", target))); got != ed.ManifestID {
				t.Fatalf("after the swap to %s, request %d answered from %q", ed.ManifestID, j, got)
			}
		}
	}

	var wg sync.WaitGroup
	var stop atomic.Bool
	for range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for !stop.Load() && check(t, h.do(t, request("GET", target))) != "" {
			}
		}()
	}
	for i := 0; i < 200 && !t.Failed(); i++ {
		repo.ed.Store(eds[i%2])
		check(t, h.do(t, request("GET", target)))
	}
	stop.Store(true)
	wg.Wait()
}

// TestActiveChangedLetsThePreviousEditionGo: once told of a swap, the edge holds
// nothing of the edition served before it, so the swap's collection frees it
// without waiting for a request.
func TestActiveChangedLetsThePreviousEditionGo(t *testing.T) {
	t.Parallel()
	for _, tell := range []bool{false, true} {
		t.Run(fmt.Sprintf("told=%v", tell), func(t *testing.T) {
			t.Parallel()
			// This test's own edition: nothing else holds it.
			old, err := func() (*edition.Edition, error) {
				files, err := fixtures.Files(fixtures.Versions()[0], true)
				if err != nil {
					return nil, err
				}
				r, err := catalog.RenderFiles(files)
				if err != nil {
					return nil, err
				}
				return edition.New(r), nil
			}()
			if err != nil {
				t.Fatal(err)
			}
			repo := &swappable{}
			repo.ed.Store(old)
			// The answer's body passes through its connection, which stays
			// open between requests and must not keep it either.
			h := start(t, Config{Router: testRouter(t, repo), Active: repo.Active})
			for range 2 {
				if res := h.do(t, request("GET", "/v1/version")); res.status != http.StatusOK {
					t.Fatalf("status %d", res.status)
				}
			}
			if !h.memoized("/v1/version") {
				t.Fatal("the memo holds no answer of the old edition: the test proves nothing")
			}
			gone := weak.Make(old)
			sent := weak.Make(&apitest.JSON(t, h.es.memo.Load().entries["/v1/version"].res.Body)[0])
			h.settle(t) // the client has the answer; the server may still be returning from its write
			old = nil
			repo.ed.Store(newest(t))
			if tell {
				h.es.ActiveChanged()
			}
			runtime.GC()
			switch held := gone.Value() != nil; {
			case tell && held:
				t.Error("after ActiveChanged the previous edition is still reachable")
			case tell && sent.Value() != nil:
				t.Error("after ActiveChanged the previous edition's body sent on a connection still open is reachable")
			case !tell && !held:
				// The control: the memo is what holds it, so the case above can fail.
				t.Error("the memo does not hold the previous edition even untold: this test cannot see it held")
			}
		})
	}
}

// TestMemoHoldsOnlyPlainTargets: the router answers everything; the memo keeps
// targets whose query is empty or the language alone, up to its limit.
func TestMemoHoldsOnlyPlainTargets(t *testing.T) {
	t.Parallel()
	repo := edition.Serve(newest(t))
	r := testRouter(t, repo)
	h := start(t, Config{Router: r, Active: repo.Active, MemoLimit: 4})
	for _, tc := range []struct {
		target string
		memo   bool
	}{
		{"/v1/weapons", true},
		{"/v1/weapons?language=de-de", true},
		{"/v1/weapons?x=1", false},
		{"/v1/weapons?language=de-DE&x=1", false},
		{"/v1/weapons?language=xx-XX", false},
		{"/v1/weapons/00000000-0000-0000-0000-000000000000", false},
		{"/v1/diff/latest", false},
		{"/openapi.json", false},
		{"/changes", false},
		{"/", false},
		{"/v1/version", true},
		{"/v1/currencies", true},
		{"/v1/maps", false}, // over the limit of 4
		{"/v1/maps?language=fr-FR", false},
	} {
		want := direct(r, request("GET", tc.target))
		for i := 0; i < 2; i++ {
			same(t, tc.target, h.do(t, request("GET", tc.target)), want)
		}
		if got := h.memoized(tc.target); got != tc.memo {
			t.Errorf("%s: memoized %v, want %v", tc.target, got, tc.memo)
		}
	}
	if n := h.memoSize(); n != 4 {
		t.Errorf("memo holds %d targets, want its limit of 4", n)
	}
}

// lines sets a header as several header lines.
func lines(req *http.Request, key string, values ...string) *http.Request {
	req.Header[key] = values
	return req
}

// TestMemoKeepsTheRules: a memoized target still needs a User-Agent, and other
// methods still get the router's 405.
func TestMemoKeepsTheRules(t *testing.T) {
	t.Parallel()
	repo := edition.Serve(newest(t))
	r := testRouter(t, repo)
	h := start(t, Config{Router: r, Active: repo.Active})
	const target = "/v1/currencies"
	h.do(t, request("GET", target))
	if !h.memoized(target) {
		t.Fatal("not memoized")
	}
	for _, req := range []*http.Request{
		func() *http.Request { r := request("GET", target); r.Header.Del("User-Agent"); return r }(),
		request("GET", target, "User-Agent", "   "),
		request("POST", target),
		request("DELETE", target),
		request("OPTIONS", target, "Origin", "https://app.example", "Access-Control-Request-Method", "GET"),
		lines(request("GET", target), "Accept-Encoding", "br;q=0", "gzip"),
		lines(request("GET", target), "Accept-Encoding", "identity", "identity", "identity", "identity", "gzip"),
		lines(request("GET", target, "Accept-Encoding", "gzip"), "If-None-Match", `"a"`, `"b"`, `"c"`, `"d"`, "*"),
	} {
		same(t, fmt.Sprint(req.Method, " ", req.Header), h.do(t, req), direct(r, req))
	}
}

// TestUnreadableRequests: what fasthttp cannot read gets the error envelope.
func TestUnreadableRequests(t *testing.T) {
	t.Parallel()
	repo := edition.Serve(newest(t))
	h := start(t, Config{Router: testRouter(t, repo), Active: repo.Active})
	for _, tc := range []struct {
		name, raw string
		status    int
	}{
		{"garbage", "NOT HTTP\r\n\r\n", 400},
		{"relative target", "GET v1/version HTTP/1.1\r\nHost: x\r\nUser-Agent: a\r\n\r\n", 400},
		{"bad port", "GET http://a:b/v1/version HTTP/1.1\r\nHost: x\r\nUser-Agent: a\r\n\r\n", 400},
		{"huge header", "GET /v1/version HTTP/1.1\r\nHost: x\r\nUser-Agent: a\r\nX-Big: " + strings.Repeat("a", 20<<10) + "\r\n\r\n", 431},
		{"body", "GET /v1/version HTTP/1.1\r\nHost: x\r\nUser-Agent: a\r\nContent-Length: 100000\r\n\r\n" + strings.Repeat("a", 100000), 413},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			conn, err := net.Dial("tcp", h.addr)
			if err != nil {
				t.Fatal(err)
			}
			defer conn.Close()
			go func() { _, _ = io.WriteString(conn, tc.raw) }()
			res, err := http.ReadResponse(bufio.NewReader(conn), nil)
			if err != nil {
				t.Fatal(err)
			}
			body, err := io.ReadAll(res.Body)
			res.Body.Close()
			if err != nil {
				t.Fatal(err)
			}
			// No route of the spec takes these: the answer is the Error schema.
			h.c.CheckError(t, &http.Request{Method: "GET", URL: &url.URL{Path: "/v1/version"}}, res, body)
			var e struct {
				Status int    `json:"status"`
				Error  string `json:"error"`
			}
			if err := json.Unmarshal(body, &e); err != nil {
				t.Fatalf("status %d, body not the error envelope: %v", res.StatusCode, err)
			}
			if res.StatusCode != tc.status || e.Status != tc.status || e.Error == "" || res.Header.Get("Content-Type") != "application/json" {
				t.Errorf("status %d, envelope %+v, Content-Type %q; want %d", res.StatusCode, e, res.Header.Get("Content-Type"), tc.status)
			}
			// The parser's own words (which quote the request back) stay in the log.
			if strings.Contains(e.Error, "fasthttp") || strings.Contains(e.Error, "buffer") || strings.Contains(e.Error, "\r\n") {
				t.Errorf("the parser's error reached the client: %q", e.Error)
			}
		})
	}
}

// TestPanicLeavesServerUp: a panic that escapes the router becomes a 500 in the
// envelope, and the server answers the next request.
func TestPanicLeavesServerUp(t *testing.T) {
	t.Parallel()
	repo := edition.Serve(newest(t))
	r := testRouter(t, repo)
	h := start(t, Config{Router: http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		if req.Header.Get("X-Boom") != "" {
			panic(http.ErrAbortHandler) // the one panic the router's recoverer passes on
		}
		r.ServeHTTP(w, req)
	}), Active: repo.Active})
	// A route of the spec, whose 500 is the InternalError response.
	res := h.do(t, request("GET", "/v1/version", "X-Boom", "1"))
	if res.status != http.StatusInternalServerError || !bytes.Contains(res.body, []byte(`"status":500`)) || res.header.Get("X-Request-Id") == "" {
		t.Errorf("panic: %d, X-Request-Id %q, %s", res.status, res.header.Get("X-Request-Id"), res.body)
	}
	if res := h.do(t, request("GET", "/v1/version")); res.status != http.StatusOK {
		t.Errorf("after a panic: %d", res.status)
	}
}

// memoCtx is a request the memo answers, driven without a connection.
func memoCtx(t testing.TB, s *Server, target string, header ...string) *fasthttp.RequestCtx {
	var req fasthttp.Request
	req.SetRequestURI(target)
	req.Header.Set("User-Agent", ua)
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	ctx := &fasthttp.RequestCtx{}
	ctx.Init(&req, nil, nil)
	s.handle(ctx) // routed, and remembered
	if code := ctx.Response.StatusCode(); code != http.StatusOK && code != http.StatusNotModified {
		t.Fatalf("%s: %d", target, ctx.Response.StatusCode())
	}
	if !memoized(s, target) {
		t.Fatalf("%s is not in the memo", target)
	}
	return ctx
}

// answered is the response a RequestCtx holds.
func answered(ctx *fasthttp.RequestCtx) response {
	h := http.Header{}
	for k, v := range ctx.Response.Header.All() {
		h.Add(string(k), string(v))
	}
	return response{ctx.Response.StatusCode(), h, bytes.Clone(ctx.Response.Body())}
}

func memoServer(t testing.TB) *Server {
	repo := edition.Serve(newest(t))
	return New(Config{Router: testRouter(t, repo), Active: repo.Active, Metrics: router.NewHTTPMetrics(prometheus.NewRegistry())})
}

// hot lists the request paths the benchmarks and the allocation test use: a
// list, a skin (the one the benchmarks have always used, when the edition has
// it; the trimmed sample of -short may not), and a 304.
func hot(ed *edition.Edition) []struct {
	name, target string
	header       []string
} {
	skin := "d67b929f-4431-61c0-286e-3ebf3d11c4af"
	if u, ok := catalog.ParseUUID(skin); !ok || ed.Item(catalog.WeaponSkins, u, catalog.DefaultLocale) == nil {
		skin = ed.UUIDs(catalog.WeaponSkins)[0].String()
	}
	return []struct {
		name, target string
		header       []string
	}{
		{"list", "/v1/currencies", nil},
		{"uuid", "/v1/weapons/skins/" + skin, []string{"Accept-Encoding", "gzip, br"}},
		{"304", "/v1/weapons", []string{"If-None-Match", `"nope", *`}},
	}
}

// TestMemoDoesNotAllocate: answering from the memo allocates nothing, metrics
// included. Not parallel: testing.AllocsPerRun counts every goroutine's
// allocations.
func TestMemoDoesNotAllocate(t *testing.T) {
	s := memoServer(t)
	c := apitest.New(t)
	for _, tc := range hot(newest(t)) {
		ctx := memoCtx(t, s, tc.target, tc.header...)
		if n := testing.AllocsPerRun(100, func() {
			ctx.Response.Reset()
			s.handle(ctx)
		}); n != 0 {
			t.Errorf("%s: %.1f allocations per request", tc.name, n)
		}
		// What it answered so is the spec's.
		check(t, c, request("GET", tc.target, tc.header...), answered(ctx))
	}
}

func BenchmarkMemo(b *testing.B) {
	s := memoServer(b)
	for _, tc := range hot(newest(b)) {
		b.Run(tc.name, func(b *testing.B) {
			ctx := memoCtx(b, s, tc.target, tc.header...)
			b.ReportAllocs()
			for b.Loop() {
				ctx.Response.Reset()
				s.handle(ctx)
			}
		})
	}
}

// lockedBuffer is a log destination the server's goroutines write and the test reads.
type lockedBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *lockedBuffer) records(t *testing.T) []map[string]any {
	t.Helper()
	b.mu.Lock()
	defer b.mu.Unlock()
	var out []map[string]any
	for _, line := range bytes.Split(bytes.TrimSpace(b.buf.Bytes()), []byte("\n")) {
		var r map[string]any
		if err := json.Unmarshal(line, &r); err != nil {
			t.Fatalf("log line %q: %v", line, err)
		}
		out = append(out, r)
	}
	return out
}

// TestEdgeLogsLikeTheRouter: what the edge answers itself is logged as the router
// logs it (router.Record) — a rejection at Info (route "unmatched"), a memo answer
// at Debug (memo true).
func TestEdgeLogsLikeTheRouter(t *testing.T) {
	t.Parallel()
	repo := edition.Serve(newest(t))
	var logs lockedBuffer
	logger := slog.New(slog.NewJSONHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	h := start(t, Config{Router: testRouter(t, repo), Active: repo.Active, Logger: logger})
	for range 2 { // the first is routed and remembered, the second answered from the memo
		if res := h.do(t, request("GET", "/v1/version")); res.status != http.StatusOK {
			t.Fatalf("/v1/version: %d", res.status)
		}
	}
	if !h.memoized("/v1/version") {
		t.Fatal("/v1/version not memoized")
	}
	if res := h.do(t, request("DELETE", "/v1/version")); res.status != http.StatusMethodNotAllowed {
		t.Fatalf("DELETE: %d", res.status)
	}
	var memo, reject bool
	for _, r := range logs.records(t) {
		if r["msg"] != "request" {
			continue
		}
		switch {
		case r["memo"] == true:
			memo = r["level"] == "DEBUG" && r["method"] == "GET" && r["path"] == "/v1/version" &&
				r["status"] == float64(200) && r["route"] != "" && r["user_agent"] == ua
		case r["route"] == "unmatched":
			reject = r["level"] == "INFO" && r["method"] == "DELETE" && r["path"] == "/v1/version" &&
				r["status"] == float64(405) && r["user_agent"] == ua
		}
	}
	if !memo || !reject {
		t.Errorf("memo answer logged: %v, rejection logged: %v; the log:\n%s", memo, reject, logs.buf.String())
	}
}

// TestRoutedRequestsOwnTheirStrings: the strings of a request the router sees
// stay as they were after its answer, when the connection's next request (of
// the same length, so it lands on the same bytes of fasthttp's buffer) has
// others. The changelog pages keep two IDs from the path as a cache key; while
// they viewed the buffer, the key became the next request's IDs.
func TestRoutedRequestsOwnTheirStrings(t *testing.T) {
	t.Parallel()
	repo := edition.Serve(newest(t))
	r := testRouter(t, repo)
	type seen struct{ method, uri, path, host, probe, key string }
	var kept []seen
	var mu sync.Mutex
	h := start(t, Config{Router: http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		mu.Lock()
		for k := range req.Header {
			if strings.EqualFold(k, "X-Probe") {
				kept = append(kept, seen{req.Method, req.RequestURI, req.URL.Path, req.Host, req.Header.Get("X-Probe"), k})
			}
		}
		mu.Unlock()
		r.ServeHTTP(w, req)
	}), Active: repo.Active})
	first := request("GET", "/changes/0123456789ABCDEF/FEDCBA9876543210", "X-Probe", "first-value")
	want := direct(r, request("GET", "/changes/0123456789ABCDEF/FEDCBA9876543210"))
	if res := h.do(t, first); res.status != want.status {
		t.Fatalf("first: %d, the router answers %d", res.status, want.status)
	}
	if res := h.do(t, request("GET", "/changes/AAAAAAAAAAAAAAAA/BBBBBBBBBBBBBBBB", "X-Probe", "other-value")); res.status != want.status {
		t.Fatalf("second: %d, the router answers %d", res.status, want.status)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(kept) != 2 {
		t.Fatalf("the router saw %d requests with the probe, want 2", len(kept))
	}
	wantFirst := seen{"GET", "/changes/0123456789ABCDEF/FEDCBA9876543210", "/changes/0123456789ABCDEF/FEDCBA9876543210", kept[1].host, "first-value", "X-Probe"}
	if kept[0] != wantFirst {
		t.Errorf("the first request's strings after the second:\n got %+v\nwant %+v", kept[0], wantFirst)
	}
}

// TestPipelinedAnswersKeepTheirOrder: requests pipelined on one connection get
// their answers in order and whole, answers from the memo and from the router
// alike, when fasthttp has not flushed the answers before them yet (it flushes
// only when no request is waiting).
func TestPipelinedAnswersKeepTheirOrder(t *testing.T) {
	t.Parallel()
	repo := edition.Serve(newest(t))
	r := testRouter(t, repo)
	const small, large, routed = "/v1/version", "/v1/weapons", "/v1/versions"
	h := start(t, Config{Router: r, Active: repo.Active})
	etag := direct(r, request("GET", large)).header.Get("ETag")
	reqs := []*http.Request{
		request("GET", small),
		request("GET", large, "Accept-Encoding", "gzip"),
		request("GET", small),
		request("GET", routed),
		request("GET", small),
		request("GET", large),
		request("HEAD", large),
		request("GET", large, "If-None-Match", etag),
		request("GET", large, "Accept-Encoding", "br"),
		request("GET", routed, "Accept-Encoding", "gzip"),
		request("GET", small),
	}
	for _, target := range []string{small, large} {
		h.do(t, request("GET", target)) // into the memo
		if !h.memoized(target) {
			t.Fatalf("%s is not in the memo", target)
		}
	}
	conn, err := net.Dial("tcp", h.addr)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	var raw bytes.Buffer
	for _, req := range reqs {
		if err := req.Write(&raw); err != nil {
			t.Fatal(err)
		}
	}
	go func() { _, _ = conn.Write(raw.Bytes()) }()
	br := bufio.NewReader(conn)
	for i, req := range reqs {
		what := fmt.Sprintf("answer %d (%s %s %q)", i, req.Method, req.URL, req.Header.Get("Accept-Encoding"))
		got := readAnswer(t, br, req, what)
		check(t, h.c, req, got)
		same(t, what, got, direct(r, req))
	}
	if h.memoized(routed) {
		t.Errorf("%s went into the memo: the pipeline had no answer from the router", routed)
	}
}

// readAnswer reads the answer to req from br, its body whole, as a response
// (without the Date header).
func readAnswer(t *testing.T, br *bufio.Reader, req *http.Request, what string) response {
	t.Helper()
	res, err := http.ReadResponse(br, req)
	if err != nil {
		t.Fatalf("%s: %v", what, err)
	}
	body, err := io.ReadAll(res.Body)
	res.Body.Close()
	if err != nil {
		t.Fatalf("%s: %v", what, err)
	}
	res.Header.Del("Date")
	return response{res.StatusCode, res.Header, body}
}
