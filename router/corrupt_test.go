package router_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

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

// TestCorruptStoredBody: a replica serving a file store whose stored bodies
// were damaged on disk after it opened them answers each request for one
// 500 in the error envelope, with a request id (X-Request-Id, in the
// message and in the log beside the cause) and no internal text, and
// nothing of the damaged bytes: a list's gzip and brotli, an identity
// decompressed from its damaged gzip, an identity stored as it is, a
// retained version's body on its pinned route, a string table. A HEAD, or
// a 304, needs no bytes and answers as usual; what is not damaged is served.
// The replica reads through no cache, so every answer reads its blob.
func TestCorruptStoredBody(t *testing.T) {
	t.Parallel()
	src := t.TempDir()
	dir := filepath.Join(t.TempDir(), "store")
	st, err := store.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, nn := range []string{"14", "15"} {
		if err := fixtures.Write(filepath.Join(src, nn), nn, testing.Short()); err != nil {
			t.Fatal(err)
		}
		if _, err := pipeline.Import(st, filepath.Join(src, nn), pipeline.Options{Effort: apitest.Effort()}); err != nil {
			t.Fatal(err)
		}
	}
	logs := &syncLog{}
	logger := slog.New(slog.NewJSONHandler(logs, nil))
	repo, err := replica.Open(st, logger, nil, nil, replica.WithCache(blob.NewCache(0)))
	if err != nil {
		t.Fatal(err)
	}
	h, err := router.New(&handler.Server{Repo: repo, Logger: logger}, logger, router.NewHTTPMetrics(prometheus.NewRegistry()))
	if err != nil {
		t.Fatal(err)
	}
	cur := repo.Active()
	vs := repo.Versions().Versions
	if len(vs) != 2 || vs[0].ManifestId != cur.ManifestID {
		t.Fatalf("versions %+v, want 15 active and 14 retained", vs)
	}
	old, err := repo.RetainedEdition(vs[1].ManifestId)
	if err != nil {
		t.Fatal(err)
	}
	de, _ := catalog.ParseLocale("de-DE")
	storedItem, storedBody := storedIdentityItem(t, cur)
	pinned := "/v1/versions/" + old.ManifestID + "/weapons/skins"
	type blobAt struct {
		seg *blob.Segment
		off int64
	}
	damaged := map[blobAt]bool{}
	for _, tc := range []struct {
		name, target, encoding string
		body                   *representation.Body
		damaged                bool // else a control
		fromGzip               bool // the answer is the identity decompressed from the gzip
	}{
		{"list, gzip", "/v1/weapons?language=all", "gzip", cur.List(catalog.Weapons, catalog.AllLocales), true, false},
		{"list, brotli", "/v1/maps", "br", cur.List(catalog.Maps, catalog.DefaultLocale), true, false},
		{"identity from a damaged gzip", "/v1/agents", "", cur.List(catalog.Agents, catalog.DefaultLocale), true, true},
		{"identity stored", storedItem, "", storedBody, true, false},
		{"pinned, a retained version", pinned, "gzip", old.List(catalog.WeaponSkins, catalog.DefaultLocale), true, false},
		{"string table", "/v1/locres/de-DE", "br", cur.Locres(de), true, false},
		{"undamaged list", "/v1/weapons", "gzip", cur.List(catalog.Weapons, catalog.DefaultLocale), false, false},
		{"undamaged item", "/v1/weapons/" + cur.UUIDs(catalog.Weapons)[0].String(), "br", cur.Item(catalog.Weapons, cur.UUIDs(catalog.Weapons)[0], catalog.DefaultLocale), false, false},
	} {
		served := tc.body.Pick([]string{tc.encoding})
		blobOf := served
		if tc.fromGzip {
			if served != &tc.body.Encoded || served.Source().Seg != nil || tc.body.Gzip() == nil {
				t.Fatalf("%s: the answer is not an identity kept as its gzip", tc.name)
			}
			blobOf = tc.body.Gzip()
		}
		at := blobAt{blobOf.Source().Seg, blobOf.Source().Off}
		if tc.damaged {
			damage(t, dir, blobOf)
			damaged[at] = true
		} else if damaged[at] {
			t.Fatalf("%s: its blob is one a case above damaged", tc.name)
		}
		t.Run(tc.name, func(t *testing.T) {
			check := apitest.New(t)
			res := check.Do(t, h, get(tc.target, "Accept-Encoding", tc.encoding))
			body, _ := io.ReadAll(res.Body)
			if !tc.damaged {
				if res.StatusCode != http.StatusOK || res.Header.Get("ETag") != served.ETag() {
					t.Errorf("%d, ETag %s %.300s; want 200, %s", res.StatusCode, res.Header.Get("ETag"), body, served.ETag())
				}
				return
			}
			if res.StatusCode != http.StatusInternalServerError {
				t.Fatalf("%d %.300s, want 500", res.StatusCode, body)
			}
			id := res.Header.Get("X-Request-Id")
			var env struct {
				Status int    `json:"status"`
				Error  string `json:"error"`
			}
			if err := json.Unmarshal(body, &env); err != nil || env.Status != 500 || id == "" || !strings.Contains(env.Error, id) {
				t.Errorf("X-Request-Id %q, body %.300s (%v); want the envelope naming the request id", id, body, err)
			}
			for _, internal := range []string{"segment", "checksum", "corrupt", "gzip:", blobOf.Source().Seg.Sum[:12], dir} {
				if strings.Contains(strings.ToLower(string(body)), internal) {
					t.Errorf("the answer names %q: %s", internal, body)
				}
			}
			if ce := res.Header.Get("Content-Encoding"); ce != "" {
				t.Errorf("Content-Encoding %q on the error", ce)
			}
			if !logs.has(id, "checksum") {
				t.Errorf("no log record of request %s with its cause", id)
			}
			// No bytes needed: HEAD and a 304 answer from the index.
			if res := check.Do(t, h, get(tc.target, "Accept-Encoding", tc.encoding, "If-None-Match", served.ETag())); res.StatusCode != http.StatusNotModified {
				t.Errorf("If-None-Match %s: %d, want 304", served.ETag(), res.StatusCode)
			}
			req := get(tc.target, "Accept-Encoding", tc.encoding)
			req.Method = http.MethodHead
			if res := check.Do(t, h, req); res.StatusCode != http.StatusOK || res.Header.Get("ETag") != served.ETag() {
				t.Errorf("HEAD: %d, ETag %s; want 200, %s", res.StatusCode, res.Header.Get("ETag"), served.ETag())
			}
		})
	}
}

// storedIdentityItem is the target of an item whose body is stored as it is
// (too small to compress), and that body.
func storedIdentityItem(t *testing.T, ed interface {
	UUIDs(catalog.Category) []catalog.UUID
	Item(catalog.Category, catalog.UUID, int) *representation.Body
}) (string, *representation.Body) {
	t.Helper()
	for _, c := range []catalog.Category{catalog.Currencies, catalog.Weapons, catalog.Buddies, catalog.Sprays, catalog.PlayerTitles} {
		for _, u := range ed.UUIDs(c) {
			b := ed.Item(c, u, catalog.DefaultLocale)
			if b.Gzip() == nil && b.Source().Seg != nil {
				return fmt.Sprintf("/v1/%s/%s", c.Name(), u), b
			}
		}
	}
	t.Fatal("no item is stored uncompressed")
	return "", nil
}

// damage inverts bytes in the middle of enc's blob in its segment file, in
// place, under the running replica.
func damage(t *testing.T, dir string, enc *representation.Encoded) {
	t.Helper()
	src := enc.Source()
	if src.Seg == nil || src.Seg.InMemory() {
		t.Fatalf("a %d-byte representation is not stored in a segment file", enc.Len())
	}
	f, err := os.OpenFile(blob.Path(filepath.Join(dir, "segments"), src.Seg.Sum), os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	b := make([]byte, min(16, src.Len))
	at := src.Off + int64(src.Len-len(b))/2
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

// syncLog is a JSON log the handlers write and the test reads.
type syncLog struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (l *syncLog) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.Write(p)
}

// has says whether a record of request id has an error saying what.
func (l *syncLog) has(id, what string) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, line := range bytes.Split(l.buf.Bytes(), []byte("\n")) {
		var rec struct {
			RequestID string `json:"request_id"`
			Err       string `json:"err"`
		}
		if json.Unmarshal(line, &rec) == nil && rec.RequestID == id && strings.Contains(rec.Err, what) {
			return true
		}
	}
	return false
}
