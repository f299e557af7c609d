package upstream_test

import (
	"context"
	"errors"
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

// TestTransportErrorSaysEachThingOnce: a refused connection names the request
// once (net/http's own error repeats it).
func TestTransportErrorSaysEachThingOnce(t *testing.T) {
	t.Parallel()
	hs := httptest.NewServer(http.NotFoundHandler())
	url := hs.URL
	hs.Close()
	_, err := client(t, url, upstream.Config{Retries: -1}).Catalog(context.Background(), "maps", "de-DE")
	if err == nil || strings.Count(err.Error(), url) != 1 || !strings.Contains(err.Error(), "refused") {
		t.Fatalf("error %v, want one naming %s once and saying why", err, url)
	}
}
