package replica_test

import (
	"bytes"
	"context"
	"log/slog"
	"net"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/refdata/refdata/edge"
	"github.com/refdata/refdata/edition"
	"github.com/refdata/refdata/handler"
	"github.com/refdata/refdata/replica"
	"github.com/refdata/refdata/router/apitest"
	"github.com/refdata/refdata/store"
)

// TestPinnedReads: version 14 is imported into a file store and served by a
// replica; its current routes are read (through the router and the edge, in
// every encoding). Then 15 is imported and activated, and 14's pinned URLs
// (each answer's Content-Location) answer the same bytes and ETags, immutable,
// 304 on the ETag; a replica reads 14's index once for concurrent requests (kept).
func TestPinnedReads(t *testing.T) {
	t.Parallel()
	e := newEnv(t, 1)
	es := edge.New(edge.Config{Router: e.h, Active: e.repo.Active})
	e.repo.OnSwap(es.ActiveChanged)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go func() { _ = es.Serve(ln) }()
	t.Cleanup(func() { _ = es.Shutdown(context.Background()) })
	client := &http.Client{Transport: &http.Transport{DisableCompression: true}}
	vias := map[string]http.Handler{"router": e.h, "edge": apitest.Forward(t, client, "http://"+ln.Addr().String())}

	type answer struct {
		body           []byte
		etag, location string
	}
	targets := []string{"/v1/weapons/skins?language=ja-JP", "/v1/agents?isPlayableCharacter=true", "/v1/weapons/" + vandal + "?language=all", "/v1/locres/de-DE"}
	encodings := []string{"", "gzip", "br"}
	was := map[string]answer{}
	for via, h := range vias {
		for _, target := range targets {
			for _, enc := range encodings {
				for range 2 { // the edge answers the second from its memo
					res, b := do(t, e.check, h, target, "Accept-Encoding", enc)
					if res.StatusCode != http.StatusOK || res.Header.Get("X-Data-Version") != id14 {
						t.Fatalf("%s %s: %d from %s", via, target, res.StatusCode, res.Header.Get("X-Data-Version"))
					}
					was[target+" "+enc] = answer{b, res.Header.Get("ETag"), res.Header.Get("Content-Location")}
				}
			}
		}
	}
	e.importDir(t, fixtureDir(t, "15"))
	if swapped, err := e.repo.Reload(); !swapped || err != nil || e.repo.Active().ManifestID != id15 {
		t.Fatalf("Reload = %v, %v", swapped, err)
	}
	for via, h := range vias {
		for _, target := range targets {
			for _, enc := range encodings {
				a := was[target+" "+enc]
				if want := "/v1/versions/" + id14 + strings.TrimPrefix(target, "/v1"); a.location != want {
					t.Errorf("%s: Content-Location %q, want %q", target, a.location, want)
				}
				for range 2 {
					res, b := do(t, e.check, h, a.location, "Accept-Encoding", enc)
					if res.StatusCode != http.StatusOK || !bytes.Equal(b, a.body) || res.Header.Get("ETag") != a.etag || res.Header.Get("Cache-Control") != handler.CacheImmutable || res.Header.Get("X-Data-Version") != id14 {
						t.Errorf("%s %s (%q): %d, %d bytes, ETag %s, %q from %s; served %d bytes, ETag %s while active",
							via, a.location, enc, res.StatusCode, len(b), res.Header.Get("ETag"), res.Header.Get("Cache-Control"), res.Header.Get("X-Data-Version"), len(a.body), a.etag)
					}
				}
				if res, _ := do(t, e.check, h, a.location, "Accept-Encoding", enc, "If-None-Match", a.etag); res.StatusCode != http.StatusNotModified {
					t.Errorf("%s %s (%q) If-None-Match: %d, want 304", via, a.location, enc, res.StatusCode)
				}
				if res, _ := do(t, e.check, h, target, "Accept-Encoding", enc); res.Header.Get("X-Data-Version") != id15 {
					t.Errorf("%s %s now: from %s, want %s", via, target, res.Header.Get("X-Data-Version"), id15)
				}
			}
		}
		res, b := do(t, e.check, h, "/v1/versions/0123456789ABCDEF/weapons")
		if res.StatusCode != http.StatusNotFound || !bytes.Contains(b, []byte("/v1/versions")) {
			t.Errorf("%s: a version never stored: %d %s, want 404 naming /v1/versions", via, res.StatusCode, b)
		}
	}
	// A replica started now reads 14's index once for concurrent requests, and
	// keeps it.
	e.open(t, nil)
	eds := make([]*edition.Edition, 8)
	var wg sync.WaitGroup
	for i := range eds {
		wg.Go(func() {
			ed, err := e.repo.RetainedEdition(strings.ToLower(id14))
			if err != nil {
				t.Error(err)
			}
			eds[i] = ed
		})
	}
	wg.Wait()
	if again, _ := e.repo.RetainedEdition(id14); again == nil || again.ManifestID != id14 || slices.ContainsFunc(eds, func(ed *edition.Edition) bool { return ed != again }) {
		t.Error("14's edition was read more than once: not kept")
	}
}

// countingStore counts the edition indexes read from the store it wraps.
type countingStore struct {
	store.Backend
	mu    sync.Mutex
	reads map[string]int
}

func (c *countingStore) ReadIndex(id, manifestSHA string) (store.Manifest, []byte, error) {
	c.mu.Lock()
	c.reads[id]++
	c.mu.Unlock()
	return c.Backend.ReadIndex(id, manifestSHA)
}

// TestPinnedLoadsOnce: concurrent reads of a version that is not active read
// its index once between them, and reads going round the versions that are not
// active read each once (kept), however often they go round.
func TestPinnedLoadsOnce(t *testing.T) {
	t.Parallel()
	e := newEnv(t, 3)
	cs := &countingStore{Backend: e.st, reads: map[string]int{}}
	repo, err := replica.Open(cs, slog.New(slog.DiscardHandler), nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	active := repo.Active().ManifestID
	others := []string{id14, id15}
	if active != id3 {
		t.Fatalf("serving %s, want %s with %v retained", active, id3, others)
	}
	clear(cs.reads) // what Open read
	var wg sync.WaitGroup
	for i := range 16 {
		wg.Go(func() {
			id := others[0]
			if i%2 == 1 {
				id = strings.ToLower(id)
			}
			if ed, err := repo.RetainedEdition(id); err != nil || ed.ManifestID != others[0] {
				t.Errorf("RetainedEdition(%s) = %v, %v", id, ed, err)
			}
		})
	}
	wg.Wait()
	if n := cs.reads[others[0]]; n != 1 {
		t.Errorf("16 concurrent reads of %s read its pack %d times, want once", others[0], n)
	}
	for range 10 {
		for _, id := range append(others, active) {
			if ed, err := repo.RetainedEdition(id); err != nil || ed.ManifestID != id {
				t.Fatalf("RetainedEdition(%s) = %v, %v", id, ed, err)
			}
		}
	}
	for _, id := range others {
		if cs.reads[id] != 1 {
			t.Errorf("going round %v ten times read %s's pack %d times, want once", others, id, cs.reads[id])
		}
	}
	if cs.reads[active] != 0 {
		t.Errorf("the active version's pack was read %d times for pinned reads, want none", cs.reads[active])
	}
}
