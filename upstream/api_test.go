package upstream_test

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/refdata/refdata/upstream"
)

// TestNotJSON: an upstream answering an HTML page where JSON was asked for (a
// proxy's error page, a portal) is reported as HTML, not by the first JSON
// syntax error in it; other bad bodies keep their own reason.
func TestNotJSON(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, contentType, body, want string
		html                          bool
	}{
		{"an HTML error page", "text/html; charset=utf-8", "<!DOCTYPE html>\n<html><head><title>502 Bad Gateway</title></head></html>", "answered text/html, not JSON (<!DOCTYPE html>", true},
		{"an HTML page sent as JSON", "application/json", "  <html><body>Sign in</body></html>", "answered text/html, not JSON", true},
		{"broken JSON", "application/json", `{"status":200,"data":[`, "JSON ends early", false},
		{"a wrong envelope", "application/json", `{"status":200,"data":{}}`, "data is not a JSON array", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Content-Type", tc.contentType)
				_, _ = w.Write([]byte(tc.body))
			}))
			defer hs.Close()
			c := client(t, hs.URL, upstream.Config{Retries: -1})
			_, err := c.Catalog(context.Background(), "maps", "en-US")
			if err == nil || !strings.Contains(err.Error(), tc.want) || errors.Is(err, upstream.ErrHTML) != tc.html {
				t.Errorf("error %v, want one saying %q (HTML: %v)", err, tc.want, tc.html)
			}
			if _, err := c.Version(context.Background(), ""); errors.Is(err, upstream.ErrHTML) != tc.html {
				t.Errorf("/v1/version: error %v, want HTML: %v", err, tc.html)
			}
		})
	}
}
