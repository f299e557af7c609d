package upstream_test

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/refdata/refdata/upstream"
)

func client(t *testing.T, url string, cfg upstream.Config) *upstream.Client {
	t.Helper()
	cfg.BaseURL = url
	if cfg.Backoff == 0 {
		cfg.Backoff, cfg.MaxBackoff = time.Millisecond, 2*time.Millisecond
	}
	c, err := upstream.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// TestClient: what is retried, what is final, what is refused, and what the
// upstream is told about us.
func TestClient(t *testing.T) {
	const ok = `{"status":200,"data":[{"uuid":"a"}]}`
	cases := []struct {
		name     string
		cfg      upstream.Config
		answers  []func(w http.ResponseWriter) // one per attempt; the last repeats
		wantErr  string
		wantReqs int64
	}{
		{name: "a 503 then an answer", wantReqs: 2, answers: []func(http.ResponseWriter){
			func(w http.ResponseWriter) { w.WriteHeader(503) },
			func(w http.ResponseWriter) { _, _ = w.Write([]byte(ok)) },
		}},
		{name: "a 429 with Retry-After: 1 is waited out", wantReqs: 2, answers: []func(http.ResponseWriter){
			func(w http.ResponseWriter) { w.Header().Set("Retry-After", "1"); w.WriteHeader(429) },
			func(w http.ResponseWriter) { _, _ = w.Write([]byte(ok)) },
		}},
		{name: "a Retry-After past the longest wait ends it", cfg: upstream.Config{MaxRetryAfter: time.Second}, wantReqs: 1,
			wantErr: "Retry-After", answers: []func(http.ResponseWriter){
				func(w http.ResponseWriter) { w.Header().Set("Retry-After", "120"); w.WriteHeader(429) },
			}},
		{name: "persistent 500s give up after the retries", cfg: upstream.Config{Retries: 2}, wantReqs: 3,
			wantErr: "status 500", answers: []func(http.ResponseWriter){
				func(w http.ResponseWriter) { w.WriteHeader(500) },
			}},
		{name: "invalid JSON is retried", wantReqs: 2, answers: []func(http.ResponseWriter){
			func(w http.ResponseWriter) { _, _ = w.Write([]byte(`{"status":200,"data":[`)) },
			func(w http.ResponseWriter) { _, _ = w.Write([]byte(ok)) },
		}},
		{name: "a body over the limit is refused at once", cfg: upstream.Config{MaxBodyBytes: 16}, wantReqs: 1,
			wantErr: "over the limit", answers: []func(http.ResponseWriter){
				func(w http.ResponseWriter) { _, _ = w.Write([]byte(ok)) },
			}},
		{name: "404 is final: the upstream lacks it", wantReqs: 1, wantErr: "does not serve it", answers: []func(http.ResponseWriter){
			func(w http.ResponseWriter) { w.WriteHeader(404) },
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var n atomic.Int64
			hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if ua := r.UserAgent(); !strings.HasPrefix(ua, "refdata/test (+https://example.org/ops)") {
					t.Errorf("User-Agent %q", ua)
				}
				if got := r.URL.Query().Get("language"); got != "de-DE" {
					t.Errorf("language=%q, want de-DE as given", got)
				}
				i := int(n.Add(1)) - 1
				tc.answers[min(i, len(tc.answers)-1)](w)
			}))
			defer hs.Close()
			tc.cfg.UserAgent = upstream.UserAgent("test", "https://example.org/ops")
			c := client(t, hs.URL, tc.cfg)
			b, err := c.Catalog(context.Background(), "maps", "de-DE")
			switch {
			case tc.wantErr == "" && err != nil:
				t.Fatalf("error %v", err)
			case tc.wantErr == "" && string(b) != ok:
				t.Fatalf("body %q", b)
			case tc.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tc.wantErr)):
				t.Fatalf("error %v, want one saying %q", err, tc.wantErr)
			}
			if tc.name == "404 is final: the upstream lacks it" && !errors.Is(err, upstream.ErrNoCatalog) {
				t.Fatalf("404 is not ErrNoCatalog: %v", err)
			}
			if n.Load() != tc.wantReqs || c.Requests() != tc.wantReqs {
				t.Fatalf("%d requests (client counted %d), want %d", n.Load(), c.Requests(), tc.wantReqs)
			}
		})
	}
}

// TestPickLocale: language=all texts become one locale's, falling back to en-US.
func TestPickLocale(t *testing.T) {
	locales := []string{"de-DE", "en-US"}
	in := map[string]any{"uuid": "a", "displayName": map[string]any{"en-US": "Map", "de-DE": "Karte"},
		"tiers": []any{map[string]any{"name": map[string]any{"en-US": "Iron"}}}}
	got := upstream.PickLocale(in, "de-DE", locales).(map[string]any)
	if got["displayName"] != "Karte" || got["tiers"].([]any)[0].(map[string]any)["name"] != "Iron" || got["uuid"] != "a" {
		t.Fatalf("%v", got)
	}
}

// TestTransportErrorSaysEachThingOnce: an answer that does not come names the
// request once (net/http's own error repeats it) and says why once.
func TestTransportErrorSaysEachThingOnce(t *testing.T) {
	t.Parallel()
	hang := func(w http.ResponseWriter, r *http.Request) { <-r.Context().Done() }
	cases := []struct {
		name    string
		handler http.HandlerFunc // nil: the server is closed before the request
		why     string
	}{
		{name: "a refused connection", why: "refused"},
		{name: "no answer within the request timeout", handler: hang, why: "request timeout"},
		{name: "a body not finished within the request timeout", why: "request timeout", handler: func(w http.ResponseWriter, r *http.Request) {
			w.WriteHeader(http.StatusOK)
			http.NewResponseController(w).Flush()
			hang(w, r)
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			hs := httptest.NewServer(cmp.Or[http.Handler](tc.handler, http.NotFoundHandler()))
			url := hs.URL
			if tc.handler == nil {
				hs.Close()
			} else {
				defer hs.Close()
			}
			_, err := client(t, url, upstream.Config{Retries: -1, RequestTimeout: 50 * time.Millisecond}).Catalog(context.Background(), "maps", "de-DE")
			if err == nil || strings.Count(err.Error(), url) != 1 || strings.Count(err.Error(), tc.why) != 1 {
				t.Fatalf("error %v, want one naming %s once and saying %q once", err, url, tc.why)
			}
		})
	}
}

// TestGetURLPolicy: what a catalog may make GetURL fetch. The allowed host's
// files and redirects within it are fetched; another port on the same
// address, a user:password@, redirects off the host (to that port, to the
// cloud metadata address), and a sixth redirect are refused — never retried,
// nothing reaching the internal server, no Authorization sent. The catalog
// client follows no redirect off its host either.
func TestGetURLPolicy(t *testing.T) {
	t.Parallel()
	var internalHits atomic.Int64
	internal := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		internalHits.Add(1)
		w.Header().Set("Content-Type", "image/png")
		_, _ = w.Write([]byte("TOP-SECRET"))
	}))
	defer internal.Close()
	var authorized atomic.Int64
	mux := http.NewServeMux()
	mux.HandleFunc("/ok.png", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "image/png")
		_, _ = w.Write([]byte("\x89PNG\r\n\x1a\n"))
	})
	redirect := func(to func(r *http.Request) string) http.HandlerFunc {
		return func(w http.ResponseWriter, r *http.Request) { http.Redirect(w, r, to(r), http.StatusFound) }
	}
	mux.Handle("/to-ok", redirect(func(*http.Request) string { return "/ok.png" }))
	mux.Handle("/to-internal", redirect(func(*http.Request) string { return internal.URL + "/secret" }))
	mux.Handle("/to-metadata", redirect(func(*http.Request) string { return "http://169.254.169.254/latest/meta-data/" }))
	mux.Handle("/to-userinfo", redirect(func(r *http.Request) string { return "http://user:pw@" + r.Host + "/ok.png" }))
	mux.Handle("/v1/maps", redirect(func(*http.Request) string { return internal.URL + "/v1/maps" }))
	var loops atomic.Int64
	mux.Handle("/loop/", redirect(func(r *http.Request) string { loops.Add(1); return r.URL.Path + "x" }))
	allowed := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != "" {
			authorized.Add(1)
		}
		mux.ServeHTTP(w, r)
	}))
	defer allowed.Close()
	host := strings.TrimPrefix(allowed.URL, "http://")

	for _, tc := range []struct{ url, want string }{
		{allowed.URL + "/ok.png", ""},
		{allowed.URL + "/to-ok", ""},
		{internal.URL + "/secret", "port " + internal.URL[strings.LastIndex(internal.URL, ":")+1:] + " of 127.0.0.1 is not an allowed one"},
		{"http://user:pw@" + host + "/ok.png", "the URL carries a user name or password"},
		{"http://169.254.169.254/latest/meta-data/", "host 169.254.169.254 is not a media host"},
		{allowed.URL + "/to-internal", "redirect to " + internal.URL + "/secret: port"},
		{allowed.URL + "/to-metadata", "redirect to http://169.254.169.254/latest/meta-data/: host 169.254.169.254 is not a media host"},
		{allowed.URL + "/to-userinfo", "redirect to http://user:xxxxx@" + host + "/ok.png: the URL carries"},
		{allowed.URL + "/loop/", "more than 5 redirects"},
	} {
		c := client(t, allowed.URL, upstream.Config{Retries: 3})
		res, err := c.GetURL(context.Background(), tc.url, nil, nil)
		var re *upstream.RefusedError
		switch {
		case tc.want == "" && (err != nil || res.Status != http.StatusOK):
			t.Errorf("GET %s: %v, want it fetched", tc.url, err)
		case tc.want != "" && (!errors.As(err, &re) || !strings.Contains(err.Error(), tc.want)):
			t.Errorf("GET %s: %v, want a refusal saying %q", tc.url, err, tc.want)
		case tc.want != "" && c.Requests() > 1:
			t.Errorf("GET %s: %d attempts; a refusal is not retried", tc.url, c.Requests())
		}
	}
	if n := loops.Load(); n != upstream.MaxRedirects+1 {
		t.Errorf("the redirect loop was followed %d times, want the %d allowed and one refused", n, upstream.MaxRedirects)
	}

	c := client(t, allowed.URL, upstream.Config{Retries: 3})
	if _, err := c.Catalog(context.Background(), "maps", "de-DE"); err == nil || !strings.Contains(err.Error(), "off the upstream's host") || c.Requests() != 1 {
		t.Errorf("a catalog redirected to another port: %v after %d attempts, want one refused attempt", err, c.Requests())
	}
	if internalHits.Load() != 0 || authorized.Load() != 0 {
		t.Errorf("the internal server had %d requests, the allowed one %d with Authorization; want none", internalHits.Load(), authorized.Load())
	}
}

// TestHostBreaker: a host that does not resolve, and one where nothing
// listens, are down after three failed connections: the URLs fetched after
// that make no request, and the retries of the one in progress stop. A host
// that answers, even with 500s, is never down.
func TestHostBreaker(t *testing.T) {
	t.Parallel()
	failing := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(500) }))
	t.Cleanup(failing.Close)
	closed := httptest.NewServer(http.NotFoundHandler())
	closedAddr := closed.Listener.Addr().String()
	closed.Close()
	for _, tc := range []struct {
		name, host string
		wantReqs   int64 // of 5 URLs, each with 4 retries
		wantDown   string
	}{
		{"no such name", "media.refdata-test.invalid", 3, "no such host"},
		{"connection refused", closedAddr, 3, "connection refused"},
		{"500s", failing.Listener.Addr().String(), 5 * 5, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			c := client(t, "https://upstream.example", upstream.Config{Retries: 4, MediaHosts: []string{tc.host}})
			var told []*upstream.HostDownError
			b := upstream.NewHostBreaker(3, func(e *upstream.HostDownError) { told = append(told, e) })
			for i := range 5 {
				_, err := c.GetURL(context.Background(), fmt.Sprintf("http://%s/%d.png", tc.host, i), nil, b)
				var down *upstream.HostDownError
				switch {
				case err == nil:
					t.Fatalf("URL %d: no error", i)
				case tc.wantDown == "" && errors.As(err, &down):
					t.Fatalf("URL %d: %v; a host that answers is not down", i, err)
				case tc.wantDown != "" && (!errors.As(err, &down) || !strings.Contains(err.Error(), tc.wantDown) || !strings.Contains(err.Error(), "after 3 failed connections")):
					t.Fatalf("URL %d: %v, want the host down saying %q", i, err, tc.wantDown)
				}
			}
			if c.Requests() != tc.wantReqs {
				t.Errorf("%d attempts, want %d", c.Requests(), tc.wantReqs)
			}
			if tc.wantDown != "" && (len(told) != 1 || len(b.Down()) != 1 || told[0].Failures != 3) {
				t.Errorf("told %v, down %v; want the host once, after 3 failures", told, b.Down())
			}
			if tc.wantDown == "" && (len(told) != 0 || len(b.Down()) != 0) {
				t.Errorf("told %v, down %v; want none", told, b.Down())
			}
		})
	}
}
