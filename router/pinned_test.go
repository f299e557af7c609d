package router_test

import (
	"bytes"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/go-chi/chi/v5"

	"github.com/refdata/refdata/catalog"
	"github.com/refdata/refdata/edition"
	"github.com/refdata/refdata/handler"
	"github.com/refdata/refdata/router"
	"github.com/refdata/refdata/router/apitest"
)

// pinnedTargets are read as the current routes while a version is active, then
// through their pinned URLs once it is not: lists, a filter, language=all, an
// item and the string tables.
func pinnedTargets(ed *edition.Edition) []string {
	return []string{
		"/v1/weapons/skins?language=ja-JP",
		"/v1/weapons",
		"/v1/agents?isPlayableCharacter=TRUE&language=all",
		"/v1/buddies?language=de-de",
		"/v1/weapons/" + strings.ToUpper(ed.UUIDs(catalog.Weapons)[0].String()) + "?language=fr-FR",
		"/v1/locres",
		"/v1/locres/ja-jp",
	}
}

// answer is what a test keeps of a response to compare it with another.
type answer struct {
	status        int
	body          []byte
	etag, version string
	location      string
}

func read(t *testing.T, check *apitest.Checker, h http.Handler, target string, header ...string) answer {
	t.Helper()
	res := check.Do(t, h, get(target, header...))
	b, _ := io.ReadAll(res.Body)
	return answer{res.StatusCode, b, res.Header.Get("ETag"), res.Header.Get("X-Data-Version"), res.Header.Get("Content-Location")}
}

// TestPinnedReads: the older sample version's current routes, read while it is
// the one served, are the same bytes and ETags in every encoding as its pinned
// URLs (the Content-Location of each answer, and the same in lower case) once
// the newer version is served; those are immutable and 304 on their ETag. A
// version not retained is a 404 naming /v1/versions, a manifest ID that is
// not one a 400. Through the router and the edge.
func TestPinnedReads(t *testing.T) {
	t.Parallel()
	viaBoth(t, pinnedReads)
}

func pinnedReads(t *testing.T, build func(edition.Repository, http.Handler, ...func(*handler.Server)) http.Handler) {
	full := served(t)
	older, err := full.RetainedEdition(previous(t, full))
	if err != nil {
		t.Fatal(err)
	}
	check := apitest.New(t)
	then, now := build(edition.Serve(older), nil), build(full, nil)
	for _, target := range pinnedTargets(older) {
		for _, enc := range []string{"", "gzip", "br"} {
			was := read(t, check, then, target, "Accept-Encoding", enc)
			pinnedURL := "/v1/versions/" + older.ManifestID + strings.TrimPrefix(target, "/v1")
			if was.status != http.StatusOK || was.location != pinnedURL {
				t.Fatalf("%s (%q) while active: %d, Content-Location %q; want 200, %s", target, enc, was.status, was.location, pinnedURL)
			}
			for _, url := range []string{was.location, strings.Replace(was.location, older.ManifestID, strings.ToLower(older.ManifestID), 1)} {
				res := check.Do(t, now, get(url, "Accept-Encoding", enc))
				b, _ := io.ReadAll(res.Body)
				if res.StatusCode != http.StatusOK || !bytes.Equal(b, was.body) || res.Header.Get("ETag") != was.etag {
					t.Errorf("%s (%q): %d, %d bytes with ETag %s; served %d bytes with ETag %s while active", url, enc, res.StatusCode, len(b), res.Header.Get("ETag"), len(was.body), was.etag)
				}
				if res.Header.Get("Cache-Control") != handler.CacheImmutable || res.Header.Get("X-Data-Version") != older.ManifestID || res.Header.Get("Content-Location") != pinnedURL {
					t.Errorf("%s: Cache-Control %q, X-Data-Version %q, Content-Location %q", url, res.Header.Get("Cache-Control"), res.Header.Get("X-Data-Version"), res.Header.Get("Content-Location"))
				}
				if res := check.Do(t, now, get(url, "Accept-Encoding", enc, "If-None-Match", was.etag)); res.StatusCode != http.StatusNotModified || res.Header.Get("Cache-Control") != handler.CacheImmutable {
					t.Errorf("%s (%q) If-None-Match: %d, %q; want 304, immutable", url, enc, res.StatusCode, res.Header.Get("Cache-Control"))
				}
			}
			// The current route now serves the newer version, and names its
			// pinned URL, which serves the same bytes.
			cur := read(t, check, now, target, "Accept-Encoding", enc)
			if pinned := read(t, check, now, cur.location, "Accept-Encoding", enc); cur.version != full.Active().ManifestID || !bytes.Equal(pinned.body, cur.body) || pinned.etag != cur.etag {
				t.Errorf("%s (%q) now: version %s, Content-Location %s; its pinned URL serves other bytes", target, enc, cur.version, cur.location)
			}
		}
	}
	for _, tc := range []struct {
		target string
		status int
	}{
		{"/v1/versions/0000000000000000/weapons/skins?language=ja-JP", http.StatusNotFound},
		{"/v1/versions/0000000000000000/locres", http.StatusNotFound},
		{"/v1/versions/latest/weapons", http.StatusBadRequest},
		{"/v1/versions/" + older.ManifestID + "0/weapons", http.StatusBadRequest},
	} {
		if got := read(t, check, now, tc.target); got.status != tc.status || !bytes.Contains(got.body, []byte("/v1/versions")) {
			t.Errorf("%s: %d %s, want %d naming /v1/versions", tc.target, got.status, got.body, tc.status)
		}
	}
	// Not a catalog route under a version: no route.
	for _, target := range []string{"/v1/versions/" + older.ManifestID + "/version", "/v1/versions/" + older.ManifestID + "/diff/latest", "/v1/versions/" + older.ManifestID} {
		if got := read(t, check, now, target); got.status != http.StatusNotFound {
			t.Errorf("%s: %d, want 404", target, got.status)
		}
	}
}

// TestCatalogCache: the current catalog routes' Cache-Control follows the
// server's Fresh (its store's poll), the pinned ones are immutable, the
// change signal is revalidated.
func TestCatalogCache(t *testing.T) {
	t.Parallel()
	full, check := served(t), apitest.New(t)
	pinned := "/v1/versions/" + previous(t, full) + "/weapons"
	for _, tc := range []struct {
		fresh         time.Duration
		target, cache string
	}{
		{0, "/v1/weapons", "public, max-age=1, stale-while-revalidate=1"},
		{time.Second, "/v1/locres", "public, max-age=1, stale-while-revalidate=1"},
		{20 * time.Millisecond, "/v1/weapons?language=ja-JP", "public, max-age=1, stale-while-revalidate=1"},
		{1500 * time.Millisecond, "/v1/weapons", "public, max-age=2, stale-while-revalidate=2"},
		{5 * time.Minute, "/v1/locres/de-DE", "public, max-age=300, stale-while-revalidate=300"},
		{5 * time.Minute, pinned, handler.CacheImmutable},
		{5 * time.Minute, "/v1/version", handler.CacheSignal},
	} {
		h, err := router.New(&handler.Server{Repo: full, Fresh: tc.fresh}, slog.New(slog.DiscardHandler), nil)
		if err != nil {
			t.Fatal(err)
		}
		res := check.Do(t, h, get(tc.target))
		if got := res.Header.Get("Cache-Control"); res.StatusCode != http.StatusOK || got != tc.cache {
			t.Errorf("Fresh %v, %s: %d, Cache-Control %q; want 200, %q", tc.fresh, tc.target, res.StatusCode, got, tc.cache)
		}
	}
}

// TestPinnedRoutesDocumented: the router serves under a version exactly the
// routes openapi.yaml lists there (tag pinned, and the bulk files), each
// pinned one described as its current route is: the same parameters after
// manifestId, the same 200 answer.
func TestPinnedRoutesDocumented(t *testing.T) {
	t.Parallel()
	doc, err := catalog.Spec()
	if err != nil {
		t.Fatal(err)
	}
	routed := map[string]bool{}
	_ = chi.Walk(testRouter(t, served(t), nil).(chi.Routes), func(_, route string, _ http.Handler, _ ...func(http.Handler) http.Handler) error {
		routed[route] = true
		return nil
	})
	documented := 0
	for _, path := range doc.Paths.InMatchingOrder() {
		pinned, ok := handler.PinnedPattern(path)
		if !ok {
			if strings.HasPrefix(path, handler.PinnedPrefix) {
				documented++
				tag := "pinned" // but the bulk files, a version's own
				if path == handler.PinnedPrefix+"/bulk" {
					tag = "bulk"
				}
				if op := doc.Paths.Find(path).Get; len(op.Tags) != 1 || op.Tags[0] != tag || !routed[path] {
					t.Errorf("%s: tags %v, routed %v; want [%s], routed", path, op.Tags, routed[path], tag)
				}
			}
			continue
		}
		cur, pin := doc.Paths.Find(path).Get, doc.Paths.Find(pinned)
		if pin == nil || pin.Get == nil {
			t.Errorf("%s has no pinned twin %s in openapi.yaml", path, pinned)
			continue
		}
		var want []string
		for _, p := range cur.Parameters {
			want = append(want, p.Ref)
		}
		var got []string
		for _, p := range pin.Get.Parameters[1:] {
			got = append(got, p.Ref)
		}
		if pin.Get.Parameters[0].Value.Name != "manifestId" || strings.Join(got, " ") != strings.Join(want, " ") ||
			pin.Get.Responses.Value("200").Ref != cur.Responses.Value("200").Ref || pin.Get.Responses.Value("404") == nil {
			t.Errorf("%s is not described as %s is, after manifestId, with a 404", pinned, path)
		}
	}
	pinnedRoutes := 0
	for route := range routed {
		if strings.HasPrefix(route, handler.PinnedPrefix) {
			pinnedRoutes++
		}
	}
	if documented != pinnedRoutes || documented == 0 {
		t.Errorf("%d pinned paths documented, %d routed", documented, pinnedRoutes)
	}
}
