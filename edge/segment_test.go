package edge

import (
	"bytes"
	"compress/gzip"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/refdata/refdata/blob"
	"github.com/refdata/refdata/catalog"
	"github.com/refdata/refdata/fixtures"
	"github.com/refdata/refdata/handler"
	"github.com/refdata/refdata/pipeline"
	"github.com/refdata/refdata/replica"
	"github.com/refdata/refdata/representation"
	"github.com/refdata/refdata/router"
	"github.com/refdata/refdata/router/apitest"
	"github.com/refdata/refdata/store"
)

// storeBacked serves the sample version 15 (trimmed under -short) as a
// replica of a file store does: its bodies read from the store's segment
// files. It returns the repository, the store's directory and the router
// over it, which logs to logs. Under -short its gzips are Huffman-only, so
// the trimmed sample has lists big enough to leave by sendfile.
func storeBacked(t *testing.T, logs *lockedBuffer) (*replica.Repository, string, http.Handler) {
	t.Helper()
	src, dir := filepath.Join(t.TempDir(), "v15"), filepath.Join(t.TempDir(), "store")
	if err := fixtures.Write(src, "15", testing.Short()); err != nil {
		t.Fatal(err)
	}
	st, err := store.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	effort := apitest.Effort()
	if testing.Short() {
		effort.Gzip = gzip.HuffmanOnly
	}
	if _, err := pipeline.Import(st, src, pipeline.Options{Effort: effort, Bulk: true}); err != nil {
		t.Fatal(err)
	}
	logger := slog.New(slog.NewJSONHandler(logs, nil))
	repo, err := replica.Open(st, logger, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	r, err := router.New(&handler.Server{Repo: repo, Logger: logger}, logger, router.NewHTTPMetrics(prometheus.NewRegistry()))
	if err != nil {
		t.Fatal(err)
	}
	return repo, dir, r
}

// stored is where a representation's bytes are in its store: the segment
// file, offset and length; the test fails when they are not in one.
func stored(t *testing.T, dir string, enc *representation.Encoded) (path string, off int64, n int) {
	t.Helper()
	src := enc.Source()
	if src.Seg == nil || src.Seg.InMemory() {
		t.Fatalf("a %d-byte representation not stored in a segment file", enc.Len())
	}
	return blob.Path(filepath.Join(dir, "segments"), src.Seg.Sum), src.Off, src.Len
}

// readAt is n bytes of the file at path from off.
func readAt(t *testing.T, path string, off int64, n int) []byte {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	b := make([]byte, n)
	if _, err := f.ReadAt(b, off); err != nil {
		t.Fatal(err)
	}
	return b
}

// damage inverts 64 bytes in the middle of the blob at off in the segment
// file at path, in place: what a failing disk or a stray write does under a
// running replica, which has the file open.
func damage(t *testing.T, path string, off int64, n int) {
	t.Helper()
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	at, k := off+int64(n/2), min(64, n/2)
	b := make([]byte, k)
	if _, err := f.ReadAt(b, at); err != nil {
		t.Fatal(err)
	}
	for i := range b {
		b[i] = ^b[i]
	}
	if _, err := f.WriteAt(b, at); err != nil {
		t.Fatal(err)
	}
}

// TestSendfileFromSegment: a big stored body starts at a page boundary in its
// segment (blob.AlignFrom) and leaves by sendfile, byte for byte what the
// import stored, from the router and from the memo alike: the router's
// straight from the segment file that stores it, checked once and never read
// into memory; the memo's from there too (the replica's cache does not grow,
// the memo's spill file holds nothing), unless the machine's pages are bigger
// than blob.PageAlign: then from a copy at a page boundary in the spill file.
func TestSendfileFromSegment(t *testing.T) {
	t.Parallel()
	repo, dir, r := storeBacked(t, new(lockedBuffer))
	h := start(t, Config{Router: r, Active: repo.Active})
	const target = "/v1/weapons?language=all"
	gz := repo.Active().List(catalog.Weapons, catalog.AllLocales).Gzip()
	if gz == nil || gz.Len() < DefaultSendfileMin {
		t.Fatalf("the weapons in every language have no gzip of %d bytes or more: nothing to send by sendfile", DefaultSendfileMin)
	}
	path, off, n := stored(t, dir, gz)
	if off%blob.PageAlign != 0 {
		t.Errorf("a blob of %d bytes at %d in its segment: not at a page boundary", n, off)
	}
	want := readAt(t, path, off, n)
	cached := repo.Cache().Bytes()
	for _, via := range []string{"router", "memo"} {
		before := h.es.sendfiles.Load()
		res := h.do(t, request("GET", target, "Accept-Encoding", "gzip"))
		if got := h.es.sendfiles.Load() - before; got != int64(b2i(canSendfile)) {
			t.Errorf("%s: %d bodies sent by sendfile, want %d", via, got, b2i(canSendfile))
		}
		if res.status != http.StatusOK || res.header.Get("Content-Encoding") != "gzip" || res.header.Get("ETag") != gz.ETag() || !bytes.Equal(res.body, want) {
			t.Fatalf("%s: %d, %q, ETag %s, %d bytes; want 200, the stored gzip of %d bytes, ETag %s", via, res.status, res.header.Get("Content-Encoding"), res.header.Get("ETag"), len(res.body), len(want), gz.ETag())
		}
		if via == "router" && !h.memoized(target) {
			t.Fatal("not memoized: the second answer would not come from the memo")
		}
	}
	if !canSendfile {
		return // written from memory off Linux: the bytes were the point
	}
	m := h.es.memo.Load()
	m.spill.mu.Lock()
	spilled := len(m.spill.at)
	at, placed := m.spill.at[gz]
	m.spill.mu.Unlock()
	if off%pageSize == 0 {
		if got := repo.Cache().Bytes(); got != cached {
			t.Errorf("the cache went from %d to %d bytes: the body was read into memory, not sent from its file", cached, got)
		}
		if spilled != 0 {
			t.Errorf("%d bodies copied to the spill file; a stored body at a page boundary is sent from its segment", spilled)
		}
		return
	}
	if !placed || at%pageSize != 0 || spilled != 1 {
		t.Errorf("a body at %d in its segment (mid-page): placed in the spill file %v, at %d, %d bodies there; want it alone, at a page boundary", off, placed, at, spilled)
	}
}

// TestDamagedSegment: a stored blob damaged on disk after the replica
// opened its segment (and before any request read it) is answered 500 with
// a request id, in the error envelope, naming nothing internal, and the
// cause is logged under that id — never the damaged bytes; by sendfile from
// the edge, from the edge's memo, and from the plain net/http router; and so
// is the identity decompressed from the damaged gzip. The brotli beside it,
// undamaged, is still served.
func TestDamagedSegment(t *testing.T) {
	t.Parallel()
	logs := new(lockedBuffer)
	repo, dir, r := storeBacked(t, logs)
	h := start(t, Config{Router: r, Active: repo.Active, Logger: slog.New(slog.NewJSONHandler(logs, nil))})
	target, body := bigList(t, repo)
	path, off, n := stored(t, dir, body.Gzip())
	damage(t, path, off, n)
	sum := body.Gzip().Source().Seg.Sum
	c := apitest.New(t)
	viaRouter := func(t *testing.T, req *http.Request) response {
		res := c.Do(t, r, req)
		var b bytes.Buffer
		if _, err := b.ReadFrom(res.Body); err != nil {
			t.Fatal(err)
		}
		return response{res.StatusCode, res.Header, b.Bytes()}
	}
	viaEdge := func(t *testing.T, req *http.Request) response { return h.do(t, req) }
	for _, tc := range []struct {
		name     string
		encoding string
		status   int
	}{
		{"gzip damaged", "gzip", http.StatusInternalServerError},
		{"identity decompressed from the damaged gzip", "", http.StatusInternalServerError},
		{"brotli intact", "br", http.StatusOK},
	} {
		for _, via := range []struct {
			name string
			do   func(*testing.T, *http.Request) response
		}{{"edge", viaEdge}, {"edge again (memo)", viaEdge}, {"router", viaRouter}} {
			what := tc.name + " via " + via.name
			res := via.do(t, request("GET", target, "Accept-Encoding", tc.encoding))
			if res.status != tc.status {
				t.Errorf("%s: %d, want %d", what, res.status, tc.status)
				continue
			}
			if tc.status == http.StatusOK {
				if res.header.Get("Content-Encoding") != tc.encoding || res.header.Get("ETag") != body.Brotli().ETag() {
					t.Errorf("%s: Content-Encoding %q, ETag %s; want the stored brotli's %s", what, res.header.Get("Content-Encoding"), res.header.Get("ETag"), body.Brotli().ETag())
				}
				continue
			}
			internalError(t, what, res, logs, sum, dir, "checksum")
		}
	}
}

// TestDamagedAfterSent: a big body sent by sendfile from its segment, checked
// before its first answer, is checked again once its file is written to
// behind the store's back (cut short, or a byte changed): then a 500, never
// a 200 with the damaged bytes.
func TestDamagedAfterSent(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name   string
		damage func(t *testing.T, path string, off int64, n int)
		cause  string // in the log
	}{
		{"a byte changed", damage, "checksum"},
		{"cut short", func(t *testing.T, path string, off int64, n int) {
			if err := os.Truncate(path, off+int64(n)/2); err != nil {
				t.Fatal(err)
			}
		}, "cut short"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			logs := new(lockedBuffer)
			repo, dir, r := storeBacked(t, logs)
			h := start(t, Config{Router: r, Active: repo.Active, Logger: slog.New(slog.NewJSONHandler(logs, nil))})
			target, body := bigList(t, repo)
			sent := h.es.sendfiles.Load()
			if res := h.do(t, request("GET", target, "Accept-Encoding", "gzip")); res.status != http.StatusOK || canSendfile && h.es.sendfiles.Load() == sent {
				t.Fatalf("before the damage: %d, sent by sendfile: %v", res.status, h.es.sendfiles.Load() > sent)
			}
			path, off, n := stored(t, dir, body.Gzip())
			tc.damage(t, path, off, n)
			// The write moved the file's modification time; make sure of it
			// where the clock is coarser than this test is quick.
			later := time.Now().Add(time.Hour)
			if err := os.Chtimes(path, later, later); err != nil {
				t.Fatal(err)
			}
			for _, again := range []string{"next", "after that"} {
				res := h.do(t, request("GET", target, "Accept-Encoding", "gzip"))
				internalError(t, tc.name+", the "+again+" answer", res, logs, body.Gzip().Source().Seg.Sum, dir, tc.cause)
			}
		})
	}
}

// bigList is a list in every language whose gzip leaves by sendfile, with a
// brotli too (the trimmed sample's lists and the full one's differ), and its
// URL.
func bigList(t *testing.T, repo *replica.Repository) (string, *representation.Body) {
	t.Helper()
	for _, c := range []catalog.Category{catalog.Maps, catalog.Agents, catalog.WeaponSkins, catalog.Buddies, catalog.PlayerCards} {
		b := repo.Active().List(c, catalog.AllLocales)
		if b.Gzip() != nil && b.Gzip().Len() >= DefaultSendfileMin && b.Brotli() != nil {
			return "/v1/" + c.Name() + "?language=all", b
		}
	}
	t.Fatalf("no list in every language has a gzip of %d bytes or more, and a brotli", DefaultSendfileMin)
	return "", nil
}

// internalError fails t unless res is a 500 in the error envelope that
// names its request id (also in X-Request-Id), no encoding and nothing of
// the store, and the log has the cause under that id.
func internalError(t *testing.T, what string, res response, logs *lockedBuffer, sum, dir, cause string) {
	t.Helper()
	id := res.header.Get("X-Request-Id")
	var env struct {
		Status int    `json:"status"`
		Error  string `json:"error"`
	}
	if err := json.Unmarshal(res.body, &env); err != nil || env.Status != http.StatusInternalServerError || id == "" || !strings.Contains(env.Error, id) {
		t.Errorf("%s: X-Request-Id %q, body %.300s (%v); want the envelope naming the request id", what, id, res.body, err)
	}
	if ce := res.header.Get("Content-Encoding"); ce != "" {
		t.Errorf("%s: Content-Encoding %q on the error", what, ce)
	}
	for _, internal := range []string{"segment", "checksum", "corrupt", sum[:12], dir} {
		if strings.Contains(strings.ToLower(string(res.body)), internal) {
			t.Errorf("%s: the answer names %q: %s", what, internal, res.body)
		}
	}
	logged := false
	for _, rec := range logs.records(t) {
		if rec["request_id"] == id && strings.Contains(fmt.Sprint(rec["err"]), cause) {
			logged = true
		}
	}
	if !logged {
		t.Errorf("%s: no log record of request %s with its cause", what, id)
	}
}
