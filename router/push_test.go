package router_test

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/refdata/refdata/edge"
	"github.com/refdata/refdata/edition"
	"github.com/refdata/refdata/gen"
	"github.com/refdata/refdata/handler"
	"github.com/refdata/refdata/router"
	"github.com/refdata/refdata/router/apitest"
)

// swapping is a Static whose versions a test replaces, telling its OnSwap
// functions as a store's replica does.
type swapping struct {
	*edition.Static
	mu  sync.Mutex
	fns []func()
}

func (s *swapping) OnSwap(f func()) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.fns = append(s.fns, f)
}

// activate serves eds[0], retaining the rest.
func (s *swapping) activate(t *testing.T, eds ...*edition.Edition) {
	t.Helper()
	var vs []edition.StaticVersion
	for _, ed := range eds {
		vs = append(vs, edition.StaticVersion{Edition: ed})
	}
	if err := s.Static.Set(true, vs...); err != nil {
		t.Fatal(err)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, f := range s.fns {
		f()
	}
}

// pushed is a server of the older sample version that a test activates others
// on: behind the edge on a real listener, or net/http's server.
type pushed struct {
	repo     *swapping
	srv      *handler.Server
	es       *edge.Server // nil behind net/http
	base     string
	old, new *edition.Edition
	check    *apitest.Checker
	h        http.Handler // apitest.Forward to base
}

func newPushed(t *testing.T, maxWaiters int, viaEdge bool, opts ...func(*handler.Server)) *pushed {
	t.Helper()
	st := served(t)
	older, err := st.RetainedEdition(previous(t, st))
	if err != nil {
		t.Fatal(err)
	}
	p := &pushed{repo: &swapping{Static: &edition.Static{}}, old: older, new: st.Active(), check: apitest.New(t)}
	p.repo.activate(t, older)
	p.srv = &handler.Server{Repo: p.repo, MaxWaiters: maxWaiters}
	for _, o := range opts {
		o(p.srv)
	}
	router, err := router.New(p.srv, slog.New(slog.DiscardHandler), nil)
	if err != nil {
		t.Fatal(err)
	}
	if viaEdge {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		p.es = edge.New(edge.Config{Router: router, Active: p.repo.Active, Hold: p.srv.HoldForChange})
		go func() { _ = p.es.Serve(ln) }()
		t.Cleanup(func() { _ = p.es.Shutdown(context.Background()) })
		p.base = "http://" + ln.Addr().String()
	} else {
		hs := httptest.NewServer(router)
		t.Cleanup(hs.Close)
		p.base = hs.URL
	}
	client := &http.Client{Transport: &http.Transport{DisableCompression: true}}
	// Run before the server's shutdown: an idle keep-alive connection would
	// hold the edge's for its drain grace.
	t.Cleanup(client.CloseIdleConnections)
	p.h = apitest.Forward(t, client, p.base)
	return p
}

func (p *pushed) do(t *testing.T, target string, header ...string) *http.Response {
	t.Helper()
	return p.check.Do(t, p.h, get(target, header...))
}

// async does a request in the background; its answer arrives on the channel.
func (p *pushed) async(t *testing.T, target string, header ...string) <-chan *http.Response {
	ch := make(chan *http.Response, 1)
	go func() { ch <- p.do(t, target, header...) }()
	return ch
}

// heldAt returns once the server holds n requests.
func (p *pushed) heldAt(t *testing.T, n int) {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	for p.srv.Held() != n {
		if time.Now().After(deadline) {
			t.Fatalf("the server holds %d requests, want %d", p.srv.Held(), n)
		}
		time.Sleep(time.Millisecond)
	}
}

// stream opens /v1/version/stream; the test reads it and calls done.
func (p *pushed) stream(t *testing.T, header ...string) (s *apitest.Stream, done func()) {
	t.Helper()
	req := get("/v1/version/stream", header...)
	out, _ := http.NewRequest(http.MethodGet, p.base+req.URL.RequestURI(), nil)
	out.Header = req.Header.Clone()
	res, err := http.DefaultClient.Do(out)
	if err != nil {
		t.Fatal(err)
	}
	s = apitest.NewStream(res)
	return s, func() {
		_ = res.Body.Close()
		p.check.Check(t, req, res, s.Raw)
	}
}

// TestWaitForVersion: /v1/version?wait= with the ETag of the active version
// is held until another is active; without If-None-Match, with a stale ETag or
// wait=0 it answers at once; a short wait ends in 304; bad waits are 400.
func TestWaitForVersion(t *testing.T) {
	t.Parallel()
	for _, viaEdge := range []bool{true, false} {
		t.Run(map[bool]string{true: "edge", false: "net/http"}[viaEdge], func(t *testing.T) {
			t.Parallel()
			p := newPushed(t, 0, viaEdge)
			etag := p.do(t, "/v1/version").Header.Get("ETag")
			for _, tc := range []struct {
				target, inm string
				want        int
				says        string // of a 400: the limit
			}{
				{"/v1/version?wait=60s", "", 200, ""},
				{"/v1/version?wait=60", `"stale"`, 200, ""},
				{"/v1/version?wait=0", etag, 304, ""},
				{"/v1/version?wait=10ms", etag, 304, ""},
				{"/v1/version?wait=abc", etag, 400, "120s"},
				{"/v1/version?wait=121s", etag, 400, "120s"},
				{"/v1/version?wait=-1s", etag, 400, "120s"},
				{"/v1/version?wait=99999999999", etag, 400, "120s"},
				// A duration Go reads, longer than openapi.yaml's 32 characters.
				{"/v1/version?wait=" + strings.Repeat("0", 31) + "1s", etag, 400, "at most 32"},
			} {
				res := p.do(t, tc.target, "If-None-Match", tc.inm)
				if res.StatusCode != tc.want {
					t.Errorf("%s If-None-Match %q: %d, want %d", tc.target, tc.inm, res.StatusCode, tc.want)
				}
				if b, _ := io.ReadAll(res.Body); !strings.Contains(string(b), tc.says) {
					t.Errorf("%s: %s does not name the limit (%s)", tc.target, b, tc.says)
				}
			}
			held := p.async(t, "/v1/version?wait=120s", "If-None-Match", etag)
			p.heldAt(t, 1)
			p.repo.activate(t, p.new, p.old)
			res := <-held
			if res.StatusCode != http.StatusOK || res.Header.Get("X-Data-Version") != p.new.ManifestID || res.Header.Get("ETag") == etag {
				t.Errorf("held until an activation: %d from %s, want 200 from %s", res.StatusCode, res.Header.Get("X-Data-Version"), p.new.ManifestID)
			}
		})
	}
}

// TestWaitWithoutVersion: while no version is loaded (a replica starting, an
// empty store) a wait for a change is not held and never fails: 503 with
// Retry-After like every route that needs a version, whatever If-None-Match
// the client sends (the ETag it knew from another replica, or any).
func TestWaitWithoutVersion(t *testing.T) {
	t.Parallel()
	repo := edition.Serve(edition.None())
	srv := &handler.Server{Repo: repo}
	router, err := router.New(srv, slog.New(slog.DiscardHandler), nil)
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	es := edge.New(edge.Config{Router: router, Active: repo.Active, Hold: srv.HoldForChange})
	go func() { _ = es.Serve(ln) }()
	client := &http.Client{Transport: &http.Transport{DisableCompression: true}}
	t.Cleanup(func() {
		client.CloseIdleConnections()
		_ = es.Shutdown(context.Background())
	})
	check := apitest.New(t)
	for _, via := range []struct {
		name string
		h    http.Handler
	}{
		{"edge", apitest.Forward(t, client, "http://"+ln.Addr().String())},
		{"net/http", router},
	} {
		for _, tc := range []struct{ target, inm string }{
			{"/v1/version?wait=60", ""},
			{"/v1/version?wait=60", `"stale"`},
			{"/v1/version?wait=60", "*"},
			{"/v1/version?wait=1s", `W/"stale", "other"`},
			{"/v1/version/stream", ""},
		} {
			res := check.Do(t, via.h, get(tc.target, "If-None-Match", tc.inm))
			if res.StatusCode != http.StatusServiceUnavailable || res.Header.Get("Retry-After") == "" {
				t.Errorf("%s: %s If-None-Match %q with no version: %d, Retry-After %q; want 503 with Retry-After", via.name, tc.target, tc.inm, res.StatusCode, res.Header.Get("Retry-After"))
			}
		}
	}
	if n := srv.Held(); n != 0 {
		t.Errorf("%d requests still held", n)
	}
}

// TestWaitersBounded: past MaxWaiters a wait or a stream is 503 with
// Retry-After; the edge's shutdown answers held waits 304 and ends streams at
// once, without waiting for them.
func TestWaitersBounded(t *testing.T) {
	t.Parallel()
	p := newPushed(t, 2, true)
	etag := p.do(t, "/v1/version").Header.Get("ETag")
	held := p.async(t, "/v1/version?wait=120s", "If-None-Match", etag)
	s, done := p.stream(t)
	if _, err := s.Next(); err != nil {
		t.Fatal(err)
	}
	p.heldAt(t, 2)
	for _, target := range []string{"/v1/version?wait=120s", "/v1/version/stream"} {
		res := p.do(t, target, "If-None-Match", etag)
		if res.StatusCode != http.StatusServiceUnavailable || res.Header.Get("Retry-After") == "" {
			t.Errorf("%s past the limit: %d, Retry-After %q; want 503 with Retry-After", target, res.StatusCode, res.Header.Get("Retry-After"))
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := p.es.Shutdown(ctx); err != nil {
		t.Errorf("shutdown with held requests: %v", err)
	}
	if res := <-held; res.StatusCode != http.StatusNotModified {
		t.Errorf("a wait held at shutdown: %d, want 304", res.StatusCode)
	}
	if _, err := s.Next(); !errors.Is(err, io.EOF) {
		t.Errorf("a stream at shutdown: %v, want its end", err)
	}
	done()
}

// TestVersionStream: the first event is the active version's, one follows
// each activation with the diff's summary, and Last-Event-ID resumes: no
// event for the version it names when active, the active one's at once when
// it names another.
func TestVersionStream(t *testing.T) {
	t.Parallel()
	for _, viaEdge := range []bool{true, false} {
		t.Run(map[bool]string{true: "edge", false: "net/http"}[viaEdge], func(t *testing.T) {
			t.Parallel()
			p := newPushed(t, 0, viaEdge)
			next := func(s *apitest.Stream, want string) gen.VersionEvent {
				t.Helper()
				ev, err := s.Next()
				var v gen.VersionEvent
				if err == nil {
					err = json.Unmarshal([]byte(ev["data"]), &v)
				}
				if err != nil || ev["id"] != want || v.ManifestId != want {
					t.Fatalf("event %v (%v), want one of %s", ev, err, want)
				}
				return v
			}
			s, done := p.stream(t)
			if v := next(s, p.old.ManifestID); v.Diff != nil {
				t.Errorf("the first version's event has a diff: %+v", v.Diff)
			}
			p.repo.activate(t, p.new, p.old)
			v := next(s, p.new.ManifestID)
			if v.Diff == nil || v.Diff.FromVersion != p.old.ManifestID || v.Diff.Summary.TotalAdded+v.Diff.Summary.TotalChanged == 0 || len(v.Diff.Categories) == 0 {
				t.Errorf("the event of an activation: %+v, want the diff from %s", v.Diff, p.old.ManifestID)
			}
			done()

			resumed, done := p.stream(t, "Last-Event-ID", p.new.ManifestID)
			p.heldAt(t, 1)
			p.repo.activate(t, p.old, p.new) // back: the first event resumed gets
			next(resumed, p.old.ManifestID)
			done()
			behind, done := p.stream(t, "Last-Event-ID", p.new.ManifestID)
			next(behind, p.old.ManifestID)
			done()
			// Longer than openapi.yaml's 64 characters: ignored, as if not sent
			// (not checked against the spec, which refuses the request).
			req, _ := http.NewRequest(http.MethodGet, p.base+"/v1/version/stream", nil)
			req.Header.Set("User-Agent", ua)
			req.Header.Set("Last-Event-ID", strings.Repeat(p.old.ManifestID, 5))
			res, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			if res.StatusCode != http.StatusOK {
				t.Errorf("a Last-Event-ID of 80 characters: %d, want 200", res.StatusCode)
			}
			next(apitest.NewStream(res), p.old.ManifestID)
			res.Body.Close()

			head := get("/v1/version/stream")
			head.Method = http.MethodHead
			if res := p.check.Do(t, p.h, head); res.StatusCode != http.StatusOK || res.Header.Get("Content-Type") != "text/event-stream" {
				t.Errorf("HEAD: %d %q", res.StatusCode, res.Header.Get("Content-Type"))
			}
		})
	}
}

// stacks names the two servers a pushed test runs on.
var stacks = map[bool]string{true: "edge", false: "net/http"}

// TestGoneClientsFreeSlots: 500 clients send a wait with the active version's
// ETag (and 20 open a stream) and close their connections at once: every slot
// is freed as they leave, not when the waits run out; the edge, which holds
// waits on its connections' goroutines, and net/http, which notices by its
// background read, alike.
func TestGoneClientsFreeSlots(t *testing.T) {
	t.Parallel()
	for viaEdge, name := range stacks {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			const waits, streams = 500, 20
			p := newPushed(t, 1000, viaEdge, func(s *handler.Server) { s.MaxHeldPerClient = 1000; s.StreamFor = time.Hour })
			etag := p.do(t, "/v1/version").Header.Get("ETag")
			addr := strings.TrimPrefix(p.base, "http://")
			conns := make([]net.Conn, 0, waits+streams)
			t.Cleanup(func() {
				for _, c := range conns {
					c.Close()
				}
			})
			for i := range waits + streams {
				c, err := net.Dial("tcp", addr)
				if err != nil {
					t.Fatal(err)
				}
				conns = append(conns, c)
				target := "/v1/version?wait=120s"
				if i >= waits {
					target = "/v1/version/stream"
				}
				if _, err := io.WriteString(c, "GET "+target+" HTTP/1.1\r\nHost: x\r\nUser-Agent: "+ua+"\r\nIf-None-Match: "+etag+"\r\n\r\n"); err != nil {
					t.Fatal(err)
				}
			}
			p.heldAt(t, waits+streams)
			for _, c := range conns {
				c.Close()
			}
			// heldAt gives up after a minute, long before the 120 s waits (and
			// the hour's streams) end by themselves: only the clients' leaving
			// frees the slots in time.
			p.heldAt(t, 0)
		})
	}
}

// TestPipelinedWaitHeld: a client that sends another request behind a held
// wait has not left (the edge's watch reads nothing): the wait is answered at
// the activation, then the request behind it.
func TestPipelinedWaitHeld(t *testing.T) {
	t.Parallel()
	for viaEdge, name := range stacks {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			p := newPushed(t, 0, viaEdge)
			etag := p.do(t, "/v1/version").Header.Get("ETag")
			c, err := net.Dial("tcp", strings.TrimPrefix(p.base, "http://"))
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			head := "Host: x\r\nUser-Agent: " + ua + "\r\n"
			if _, err := io.WriteString(c, "GET /v1/version?wait=120s HTTP/1.1\r\n"+head+"If-None-Match: "+etag+"\r\n\r\nGET /v1/version HTTP/1.1\r\n"+head+"\r\n"); err != nil {
				t.Fatal(err)
			}
			p.heldAt(t, 1)
			p.repo.activate(t, p.new, p.old)
			br := bufio.NewReader(c)
			for i, target := range []string{"/v1/version?wait=120s", "/v1/version"} {
				res, err := http.ReadResponse(br, nil)
				if err != nil {
					t.Fatalf("answer %d: %v", i+1, err)
				}
				body, _ := io.ReadAll(res.Body)
				res.Body.Close()
				p.check.Check(t, get(target), res, body)
				if res.StatusCode != http.StatusOK || res.Header.Get("X-Data-Version") != p.new.ManifestID {
					t.Errorf("%s: %d from %s, want 200 from %s", target, res.StatusCode, res.Header.Get("X-Data-Version"), p.new.ManifestID)
				}
			}
		})
	}
}

// TestHeldPerClient: past MaxHeldPerClient one client's wait or stream is 429
// with Retry-After, while the server holds fewer than MaxWaiters; once one of
// its requests ends, it may hold another.
func TestHeldPerClient(t *testing.T) {
	t.Parallel()
	for viaEdge, name := range stacks {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			p := newPushed(t, 100, viaEdge, func(s *handler.Server) { s.MaxHeldPerClient = 2 })
			etag := p.do(t, "/v1/version").Header.Get("ETag")
			held := p.async(t, "/v1/version?wait=120s", "If-None-Match", etag)
			s, done := p.stream(t)
			if _, err := s.Next(); err != nil {
				t.Fatal(err)
			}
			p.heldAt(t, 2)
			for _, target := range []string{"/v1/version?wait=120s", "/v1/version/stream"} {
				res := p.do(t, target, "If-None-Match", etag)
				if b, _ := io.ReadAll(res.Body); res.StatusCode != http.StatusTooManyRequests || res.Header.Get("Retry-After") == "" || !strings.Contains(string(b), "one client") {
					t.Errorf("%s past the client's limit: %d, Retry-After %q, %s; want 429 with Retry-After", target, res.StatusCode, res.Header.Get("Retry-After"), b)
				}
			}
			done()
			p.heldAt(t, 1)
			again := p.async(t, "/v1/version?wait=120s", "If-None-Match", etag)
			p.heldAt(t, 2)
			p.repo.activate(t, p.new, p.old)
			for _, ch := range []<-chan *http.Response{held, again} {
				if res := <-ch; res.StatusCode != http.StatusOK {
					t.Errorf("a wait within the limit: %d at the activation, want 200", res.StatusCode)
				}
			}
		})
	}
}
