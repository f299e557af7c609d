package main

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/refdata/refdata/fixtures"
	"github.com/refdata/refdata/gen"
	"github.com/refdata/refdata/router/apitest"
	"github.com/refdata/refdata/store/storetest"
)

// TestServePush: serve over a file store and over PostgreSQL, with a wait held
// on the version served and a stream open; an import answers the wait with
// the new version and sends its event, with the diff's summary; when serve
// ends, a held wait is answered 304 and the stream ends.
func TestServePush(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name  string
		store func(t *testing.T) []string
	}{
		{"directory", func(t *testing.T) []string { return []string{"--data", filepath.Join(t.TempDir(), "store")} }},
		{"postgres", func(t *testing.T) []string { return []string{"--store", storetest.PostgresSchema(t, "push")} }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			store := tc.store(t)
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			var out syncBuffer
			importSample := func(i int) {
				if code := run(ctx, append(append([]string{"import"}, store...), sampleDir(t, i)), &out, &out); code != 0 {
					t.Fatalf("import: exit %d\n%s", code, out.String())
				}
			}
			importSample(0)
			addr, done := start(t, ctx, append([]string{"--addr", "127.0.0.1:0", "--log-level", "warn", "--max-waiters", "5"}, store...)...)
			check := apitest.New(t)
			h := apitest.Forward(t, &http.Client{}, "http://"+addr)
			get := func(target string, header ...string) *http.Response {
				req := httptest.NewRequest("GET", target, nil)
				req.Header.Set("User-Agent", "refdata-test/1.0 (+http://localhost)")
				for i := 0; i+1 < len(header); i += 2 {
					req.Header.Set(header[i], header[i+1])
				}
				return check.Do(t, h, req)
			}
			held := func(etag string) <-chan *http.Response {
				ch := make(chan *http.Response, 1)
				go func() { ch <- get("/v1/version?wait=120s", "If-None-Match", etag) }()
				return ch
			}
			heldAt := func(n string) {
				eventually(t, n+" requests held", func() bool {
					b, _ := io.ReadAll(get("/v1/metrics").Body)
					return strings.Contains(string(b), "\nrefdata_held_requests "+n+"\n")
				})
			}
			id14, id15 := manifestOf(t, fixtures.Versions()[0]), manifestOf(t, fixtures.Versions()[1])
			eventually(t, "ready", func() bool { return get("/readyz").StatusCode == http.StatusOK })
			first := get("/v1/version")
			if first.Header.Get("X-Data-Version") != id14 {
				t.Fatalf("serving %s, want %s", first.Header.Get("X-Data-Version"), id14)
			}

			req := httptest.NewRequest("GET", "/v1/version/stream", nil)
			req.Header.Set("User-Agent", "refdata-test/1.0 (+http://localhost)")
			sreq, _ := http.NewRequest("GET", "http://"+addr+"/v1/version/stream", nil)
			sreq.Header = req.Header.Clone()
			res, err := http.DefaultClient.Do(sreq)
			if err != nil {
				t.Fatal(err)
			}
			stream := apitest.NewStream(res)
			event := func(want string) *gen.VersionEventDiff {
				t.Helper()
				ev, err := stream.Next()
				var v gen.VersionEvent
				if err == nil {
					err = json.Unmarshal([]byte(ev["data"]), &v)
				}
				if err != nil || ev["id"] != want {
					t.Fatalf("event %v (%v), want %s's", ev, err, want)
				}
				return v.Diff
			}
			event(id14)
			wait := held(first.Header.Get("ETag"))
			heldAt("2")

			importSample(1)
			if res := <-wait; res.StatusCode != http.StatusOK || res.Header.Get("X-Data-Version") != id15 {
				t.Errorf("the wait held over the import: %d from %s, want 200 from %s", res.StatusCode, res.Header.Get("X-Data-Version"), id15)
			}
			if d := event(id15); d == nil || d.FromVersion != id14 || d.Summary.TotalAdded+d.Summary.TotalChanged == 0 {
				t.Errorf("the import's event: diff %+v, want the changes from %s", d, id14)
			}
			wait = held(get("/v1/version").Header.Get("ETag"))
			heldAt("2")
			if b, _ := io.ReadAll(get("/v1/metrics").Body); !strings.Contains(string(b), `route="/v1/version?wait"`) {
				t.Error("no request series for the held waits")
			}

			cancel()
			if res := <-wait; res.StatusCode != http.StatusNotModified {
				t.Errorf("a wait held when serve ends: %d, want 304", res.StatusCode)
			}
			if _, err := stream.Next(); !errors.Is(err, io.EOF) && !errors.Is(err, io.ErrUnexpectedEOF) {
				t.Errorf("the stream when serve ends: %v, want its end", err)
			}
			_ = res.Body.Close()
			check.Check(t, req, res, stream.Raw)
			select {
			case code := <-done:
				if code != 0 {
					t.Errorf("serve: exit %d", code)
				}
			case <-time.After(20 * time.Second):
				t.Fatal("serve did not return after its context ended")
			}
		})
	}
}
