package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"path/filepath"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/refdata/refdata/follow"
	"github.com/refdata/refdata/handler"
	"github.com/refdata/refdata/media"
	"github.com/refdata/refdata/replica"
	"github.com/refdata/refdata/router"
	"github.com/refdata/refdata/router/apitest"
	"github.com/refdata/refdata/store"
	"github.com/refdata/refdata/upstream"
	"github.com/refdata/refdata/upstream/upstreamtest"
)

// TestSyncMediaCommand: sync --media --public-media-url as main wires it,
// against a stand-in whose catalogs also name issue 60's hostile URLs. The
// mirror lands in DATA/media; a missing file and every hostile URL are
// reported with their reasons and skipped, the internal server is never
// reached; the served bodies point to the public URL for the files mirrored,
// and a server over the store answers /media/{sha256} with them.
func TestSyncMediaCommand(t *testing.T) {
	t.Parallel()
	vs := standInVersions(t)
	up := upstreamtest.New(vs...)
	var agents []string
	urls, err := media.URLs(fstest.MapFS{"en-US/agents.json": {Data: vs[0].Catalogs["agents"]["en-US"]}}, "")
	if err != nil {
		t.Fatal(err)
	}
	for _, u := range urls {
		agents = append(agents, upstreamtest.MediaPath(u))
	}
	nHostile := len(upstreamtest.HostileKinds)
	if len(agents) < nHostile+2 {
		t.Fatalf("only %d agent media URLs", len(agents))
	}
	first, hostile, second := agents[0], agents[1:1+nHostile], agents[1+nHostile]
	internal := upstreamtest.NewInternal()
	defer internal.Close()
	kinds := map[string]upstreamtest.MediaKind{first: upstreamtest.MediaMissing}
	for i, h := range upstreamtest.HostileKinds {
		kinds[hostile[i]] = h.Kind
	}
	up.Media = &upstreamtest.Media{Kinds: kinds, Internal: internal.Addr}
	hs := httptest.NewServer(up)
	defer hs.Close()
	data := t.TempDir()
	var out, errOut strings.Builder
	args := []string{"sync", "--from", hs.URL, "--data", data, "--once", "--retries", "1", "--media", "--public-media-url", "https://follow.example/"}
	if code := run(context.Background(), args, &out, &errOut); code != 0 {
		t.Fatalf("refdata %v: exit %d\n%s%s", args, code, out.String(), errOut.String())
	}
	report := out.String()
	host := hs.Listener.Addr().String()
	if !strings.Contains(report, "9 skipped (refused 6, type 2, status 1)") || !strings.Contains(report, "media skipped: "+hs.URL+first+": status 404\n") ||
		!strings.Contains(report, "media host "+host+": refused 3, type 2, status 1\n") {
		t.Fatalf("sync --media did not report the missing file and the hostile ones by class:\n%s", report)
	}
	for i, h := range upstreamtest.HostileKinds {
		u, _ := url.Parse(up.Media.URL(host, hostile[i]))
		if line := "media skipped: " + u.Redacted() + ": "; !strings.Contains(report, line) || !strings.Contains(report[strings.Index(report, line):], h.Says) {
			t.Errorf("the report lacks %q with its reason %q", line, h.Says)
		}
	}
	if strings.Contains(report, "user:pw@") {
		t.Errorf("the report shows a URL's password:\n%s", report)
	}
	if n := internal.Hits(); n != 0 {
		t.Errorf("the internal server was reached %d times", n)
	}
	lib, err := media.OpenDir(filepath.Join(data, "media"))
	if err != nil || lib.Len() == 0 {
		t.Fatalf("no media in DATA/media (%v)", err)
	}
	st, _ := store.Open(data)
	logger := slog.New(slog.DiscardHandler)
	repo, err := replica.Open(st, logger, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	router, err := router.New(&handler.Server{Repo: repo, Media: lib}, logger, router.NewHTTPMetrics(prometheus.NewRegistry()))
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
	for i := range hostile {
		if f, ok := lib.Lookup(up.Media.URL(host, hostile[i])); ok {
			t.Errorf("%v's URL is in the mirror: %+v", upstreamtest.HostileKinds[i].Kind, f)
		}
	}
	agentsJSON, _ := io.ReadAll(get("/v1/agents").Body)
	f, ok := lib.Lookup(hs.URL + second)
	if !ok || !bytes.Contains(agentsJSON, []byte(`"https://follow.example`+f.Path()+`"`)) || !bytes.Contains(agentsJSON, []byte(`"`+hs.URL+first+`"`)) {
		t.Fatalf("/v1/agents: want %s at the public media URL and the missing %s at the origin", second, first)
	}
	res := get(f.Path())
	body, _ := io.ReadAll(res.Body)
	if res.StatusCode != http.StatusOK || !bytes.Equal(body, upstreamtest.PNG(second)) || res.Header.Get("Content-Type") != "image/png" {
		t.Fatalf("GET %s: %d %s, want the origin's PNG", f.Path(), res.StatusCode, res.Header.Get("Content-Type"))
	}
	if res := get(f.Path(), "If-None-Match", res.Header.Get("ETag")); res.StatusCode != http.StatusNotModified {
		t.Fatalf("GET %s with its ETag: %d, want 304", f.Path(), res.StatusCode)
	}
}

// TestWriteMedia: sync's report of a media pass counts the URLs not mirrored
// by class, then by host (saying why a host was not tried), and lists the
// first 20 URLs one by one with how many more, but those of a host that was
// down: a host that does not resolve is one line however many URLs it has.
func TestWriteMedia(t *testing.T) {
	t.Parallel()
	down := &upstream.HostDownError{Host: "cdn.example.invalid", Failures: 3, Last: errors.New("lookup cdn.example.invalid: no such host")}
	many := func(n int, host, class, reason string) []follow.MediaSkip {
		var out []follow.MediaSkip
		for i := range n {
			out = append(out, follow.MediaSkip{URL: fmt.Sprintf("https://%s/%04d.png", host, i), Class: class, Reason: reason})
		}
		return out
	}
	for _, tc := range []struct {
		name       string
		res        follow.MediaResult
		want, lack []string
	}{
		{name: "a host down", res: follow.MediaResult{URLs: 6300, Known: 20, Fetched: 4,
			Skipped:  append(many(6271, "cdn.example.invalid", follow.MediaUnreachable, down.Error()), many(25, "user:pw@media.example", follow.MediaStatus, "status 404")...),
			Deferred: many(3, "media.example", follow.MediaStatus, "status 404"),
			Down:     []*upstream.HostDownError{down}},
			want: []string{
				"media: 6300 URLs, 20 already mirrored, 4 fetched, 6296 skipped (status 25, unreachable 6271), 3 deferred (failed for good before: tried again after a backoff)\n",
				"media host cdn.example.invalid: unreachable 6271; not tried after 3 failed connections: lookup cdn.example.invalid: no such host\n",
				"media host media.example: status 25, deferred 3\n",
				"media skipped: https://user:xxxxx@media.example/0019.png: status 404\n",
				"media skipped: … and 5 more\n",
			},
			lack: []string{"0020.png", "user:pw@", "media dropped", "media skipped: https://cdn.example.invalid"}},
		{name: "a few", res: follow.MediaResult{URLs: 10, Fetched: 8, Skipped: many(2, "media.example", follow.MediaType, "declared image/png but the bytes are HTML")},
			want: []string{"media: 10 URLs, 0 already mirrored, 8 fetched, 2 skipped (type 2)\n", "media host media.example: type 2\n",
				"media skipped: https://media.example/0001.png: declared image/png but the bytes are HTML\n"},
			lack: []string{"more", "deferred"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var b strings.Builder
			writeMedia(&b, &tc.res)
			out := b.String()
			for _, w := range tc.want {
				if !strings.Contains(out, w) {
					t.Errorf("the report lacks %q:\n%s", w, out)
				}
			}
			for _, l := range tc.lack {
				if strings.Contains(out, l) {
					t.Errorf("the report says %q:\n%s", l, out)
				}
			}
			if n := strings.Count(out, "\n"); n > 25 {
				t.Errorf("%d lines", n)
			}
		})
	}
}
