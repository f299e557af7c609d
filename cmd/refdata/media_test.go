package main

import (
	"bytes"
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/refdata/refdata/api"
	"github.com/refdata/refdata/api/apitest"
	"github.com/refdata/refdata/impl"
	"github.com/refdata/refdata/media"
	"github.com/refdata/refdata/replica"
	"github.com/refdata/refdata/store"
	"github.com/refdata/refdata/upstream/upstreamtest"
)

// TestSyncMediaCommand: sync --media --public-media-url as main wires it. The
// mirror lands in DATA/media, a missing file is reported and skipped, the
// served bodies point to the public URL for the files mirrored, and a server
// over the store answers /media/{sha256} with them.
func TestSyncMediaCommand(t *testing.T) {
	t.Parallel()
	vs := standInVersions(t)
	up := upstreamtest.New(vs...)
	var first string
	for _, u := range media.URLs(map[string][]byte{"en-US/agents.json": vs[0].Catalogs["agents"]["en-US"]}, "") {
		first = upstreamtest.MediaPath(u)
		break
	}
	up.Media = &upstreamtest.Media{Kinds: map[string]upstreamtest.MediaKind{first: upstreamtest.MediaMissing}}
	hs := httptest.NewServer(up)
	defer hs.Close()
	data := t.TempDir()
	var out, errOut strings.Builder
	args := []string{"sync", "--from", hs.URL, "--data", data, "--once", "--retries", "1", "--media", "--public-media-url", "https://mirror.example/"}
	if code := run(context.Background(), args, &out, &errOut); code != 0 {
		t.Fatalf("refdata %v: exit %d\n%s%s", args, code, out.String(), errOut.String())
	}
	if !strings.Contains(out.String(), "1 skipped") || !strings.Contains(out.String(), "media skipped: "+hs.URL+first+": status 404") {
		t.Fatalf("sync --media did not report the missing file:\n%s", out.String())
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
	router, err := api.New(&impl.Server{Repo: repo, Media: lib}, logger, api.NewHTTPMetrics(prometheus.NewRegistry()))
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
	agents, _ := io.ReadAll(get("/v1/agents").Body)
	second := ""
	for _, u := range media.URLs(map[string][]byte{"en-US/agents.json": vs[0].Catalogs["agents"]["en-US"]}, "") {
		if p := upstreamtest.MediaPath(u); p != first {
			second = p
			break
		}
	}
	f, ok := lib.Lookup(hs.URL + second)
	if !ok || !bytes.Contains(agents, []byte(`"https://mirror.example`+f.Path()+`"`)) || !bytes.Contains(agents, []byte(`"`+hs.URL+first+`"`)) {
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
