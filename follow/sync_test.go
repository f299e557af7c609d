package follow_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/refdata/refdata/blob"
	"github.com/refdata/refdata/catalog"
	"github.com/refdata/refdata/edition"
	"github.com/refdata/refdata/fixtures"
	"github.com/refdata/refdata/follow"
	"github.com/refdata/refdata/pipeline"
	"github.com/refdata/refdata/representation"
	"github.com/refdata/refdata/router/apitest"
	"github.com/refdata/refdata/store"
	"github.com/refdata/refdata/store/storetest"
	"github.com/refdata/refdata/upstream"
	"github.com/refdata/refdata/upstream/upstreamtest"
)

// fixed is the clock of every import and sync here, so the diffs' and
// manifests' times agree between a synced store and an imported one.
var fixed = time.Date(2026, 11, 22, 12, 0, 0, 0, time.UTC)

func now() time.Time { return fixed }

// TestMain runs the tests in a temporary directory of their own, removed at
// exit with what they wrote there (the sample versions of sampleDirs).
func TestMain(m *testing.M) { os.Exit(storetest.RunInTempDir(m)) }

// sampleDirs writes the embedded sample versions (0 the older) once: trimmed
// under -short (fixtures.Write: every file, catalog, locale and kind of
// change, a few items each), whole otherwise (make stress). They are read
// only.
var sampleDirs = sync.OnceValues(func() ([]string, error) {
	root, err := os.MkdirTemp("", "mirror-samples-")
	if err != nil {
		return nil, err
	}
	return fixtures.WriteAll(root, testing.Short())
})

// sampleVersions are the sample versions as a stand-in serves them, read once.
var sampleVersions = sync.OnceValues(func() ([]upstreamtest.Version, error) {
	dirs, err := sampleDirs()
	if err != nil {
		return nil, err
	}
	return upstreamtest.FromSnapshotDirs(dirs)
})

// fixtureStandIn serves the embedded sample versions (14, then 15 after
// Publish(1)) in all 18 locales, with their translations.
func fixtureStandIn(t testing.TB) (*upstreamtest.Server, string) {
	t.Helper()
	vs, err := sampleVersions()
	if err != nil {
		t.Fatal(err)
	}
	up := upstreamtest.New(vs...)
	hs := httptest.NewServer(up)
	t.Cleanup(hs.Close)
	return up, hs.URL
}

type tuning struct {
	timeout    time.Duration
	retries    int
	maxRetryAt time.Duration
	all        string
	syncTime   time.Duration // the whole sync's deadline (0: follow's default)
}

func newFollower(t testing.TB, url string, st store.Backend, tu tuning) *follow.Follower {
	t.Helper()
	if tu.timeout == 0 {
		tu.timeout = 10 * time.Second
	}
	if tu.retries == 0 {
		tu.retries = 2
	}
	if tu.all == "" {
		tu.all = "auto"
	}
	c, err := upstream.New(upstream.Config{
		BaseURL: url, UserAgent: upstream.UserAgent("test", "https://example.org/ops"),
		RequestTimeout: tu.timeout, Retries: tu.retries, Backoff: time.Millisecond, MaxBackoff: 5 * time.Millisecond,
		MaxRetryAfter: tu.maxRetryAt,
	})
	if err != nil {
		t.Fatal(err)
	}
	spool := t.TempDir()
	t.Cleanup(func() { emptySpool(t, spool) })
	f, err := follow.New(follow.Options{Client: c, Store: st, Import: importOptions(), Now: now, LanguageAll: tu.all, Timeout: tu.syncTime, SpoolDir: spool})
	if err != nil {
		t.Fatal(err)
	}
	return f
}

// emptySpool fails unless the syncs left nothing in their spool directory,
// however they ended.
func emptySpool(t testing.TB, dir string) {
	t.Helper()
	if left, err := os.ReadDir(dir); err != nil || len(left) > 0 {
		t.Errorf("the syncs left %v in their spool %s (%v)", left, dir, err)
	}
}

// importOptions are the options of every import here, synced or not: the
// fixed clock, and bodies compressed at apitest.Effort (Fast with -short).
func importOptions() pipeline.Options {
	return pipeline.Options{Now: now, Effort: apitest.Effort()}
}

func openStore(t testing.TB) *store.Store {
	t.Helper()
	st, err := store.Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	return st
}

func mustSync(t testing.TB, f *follow.Follower, want string) *follow.Result {
	t.Helper()
	res, err := f.Sync(context.Background())
	if err != nil {
		var b strings.Builder
		if res != nil && res.Report != nil {
			res.Report.Write(&b)
		}
		t.Fatalf("sync: %v\n%s", err, b.String())
	}
	if res.Outcome != want {
		t.Fatalf("sync outcome %q, want %q", res.Outcome, want)
	}
	return res
}

// loadEdition reads a stored version's edition from its index and segments,
// as a server does.
func loadEdition(t testing.TB, st store.Backend, id string) (*edition.Edition, store.Manifest) {
	t.Helper()
	m, index, err := st.ReadIndex(id, "")
	if err != nil {
		t.Fatalf("read the edition of %s: %v", id, err)
	}
	ed, err := edition.Decode(index, func(sum string, size int64) (*blob.Segment, error) { return st.Segment(sum, size, nil) })
	if err != nil {
		t.Fatalf("decode the edition of %s: %v", id, err)
	}
	if ed.ManifestID != id {
		t.Fatalf("the index of %s holds %s", id, ed.ManifestID)
	}
	return ed, m
}

// sameServed fails unless two stores serve the same bytes: the active
// version's every body in every locale (lists, items, version, string tables)
// in every encoding with the same ETags, the latest diff, and the stored
// files.
func sameServed(t testing.TB, a, b *store.Store, compareFiles bool) {
	t.Helper()
	pa, _, err := a.Active()
	if err != nil {
		t.Fatal(err)
	}
	pb, _, err := b.Active()
	if err != nil {
		t.Fatal(err)
	}
	if pa.ManifestID != pb.ManifestID || pa.Previous != pb.Previous {
		t.Fatalf("active %s (previous %s), want %s (previous %s)", pa.ManifestID, pa.Previous, pb.ManifestID, pb.Previous)
	}
	ea, ma := loadEdition(t, a, pa.ManifestID)
	eb, mb := loadEdition(t, b, pb.ManifestID)
	n := 0
	// This pass names the first differing body and its first differing bytes;
	// it compares the identity ETags (the CRC-64 of the bytes), and
	// SameEdition below compares the bytes of every encoding of these bodies
	// and more: reading them here too inflated every identity twice, a third
	// of the package's CPU time.
	eq := func(what string, x, y *representation.Body) {
		t.Helper()
		n++
		if (x == nil) != (y == nil) || x != nil && (x.ETag() != y.ETag() || x.Len() != y.Len()) {
			t.Fatalf("%s differs:\n%s", what, firstDifference(t, x, y))
		}
	}
	eq("/v1/version", ea.VersionBody(), eb.VersionBody())
	eq("/v1/locres", ea.LocresList(), eb.LocresList())
	for loc := range catalog.Locales {
		eq("/v1/locres/"+catalog.Locales[loc], ea.Locres(loc), eb.Locres(loc))
		for _, c := range catalog.Categories() {
			eq("/v1/"+c.Name()+" "+catalog.Locales[loc], ea.List(c, loc), eb.List(c, loc))
			for _, u := range eb.UUIDs(c) {
				eq("/v1/"+c.Name()+"/"+u.String()+" "+catalog.Locales[loc], ea.Item(c, u, loc), eb.Item(c, u, loc))
			}
		}
	}
	// The same bytes compress to the same encodings: both packs serve the
	// same representations under the same ETags, language=all included.
	apitest.SameEdition(t, eb, ea)
	if pa.Previous != "" {
		da, err := a.ReadDiff(pa.Previous, pa.ManifestID)
		if err != nil {
			t.Fatal(err)
		}
		db, err := b.ReadDiff(pb.Previous, pb.ManifestID)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(da, db) {
			t.Fatalf("/v1/diff/latest differs:\n%s\n%s", da, db)
		}
	}
	if compareFiles && catalog.ContentHash(ma.Files) != catalog.ContentHash(mb.Files) {
		for name, h := range mb.Files {
			if ma.Files[name] != h {
				t.Errorf("stored %s differs", name)
			}
		}
		for name := range ma.Files {
			if _, ok := mb.Files[name]; !ok {
				t.Errorf("stored %s only in the synced store", name)
			}
		}
		t.FailNow()
	}
	if n < 100 {
		t.Fatalf("compared only %d bodies", n)
	}
}

// importFixtures imports the embedded sample versions up to and including
// the i-th (0: 14) into a fresh store.
func importFixtures(t testing.TB, upto int) *store.Store {
	t.Helper()
	st := openStore(t)
	for i := range fixtures.Versions() {
		if i > upto {
			break
		}
		if _, err := pipeline.Import(st, sampleDir(t, i), importOptions()); err != nil {
			t.Fatal(err)
		}
	}
	return st
}

// TestSyncFixtures: syncing the sample versions from a stand-in that serves
// them in 18 locales gives the bodies importing them gives — per locale and with
// language=all — and a second check is one conditional request.
func TestSyncFixtures(t *testing.T) {
	t.Parallel()
	imported14, imported15 := importFixtures(t, 0), importFixtures(t, 1)
	for _, all := range []bool{false, true} {
		name := map[bool]string{false: "per-locale", true: "language=all"}[all]
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			up, url := fixtureStandIn(t)
			up.AdvertiseAll.Store(all)
			st := openStore(t)
			f := newFollower(t, url, st, tuning{})
			res := mustSync(t, f, "published")
			t.Logf("full sync of %s, 18 locales, %s: %d requests, %s", res.ManifestID, name, res.Requests, res.Duration.Round(time.Millisecond))
			// /openapi.json, /v1/version twice (check, re-check), every catalog and the
			// string tables in 18 locales, /v1/weapons/skins (404 here) once.
			wantReq := int64(1 + 2 + (len(catalog.SourceCategories())+1)*18 + 1)
			if all {
				wantReq = int64(1 + 2 + len(catalog.SourceCategories()) + 1 + 18)
			}
			if res.Requests != wantReq {
				t.Errorf("%d requests, want %d", res.Requests, wantReq)
			}
			sameServed(t, st, imported14, false)

			before := up.Requests()
			mustSync(t, f, "unchanged")
			if got := up.Requests() - before; got != 1 {
				t.Errorf("an unchanged upstream took %d requests, want 1 (a 304)", got)
			}
			if all {
				return // the next version is the per-locale path's job
			}
			up.Publish(1)
			mustSync(t, f, "published")
			sameServed(t, st, imported15, false)
		})
	}
}

// TestSyncCaptures: syncing real captures in order from a stand-in reproduces
// byte for byte what importing the same captures serves, stored files included.
// -short takes 08 and 09 (09 has skins that disagree with their weapons, and
// is an incremental sync); the full tier (make stress), or REFDATA_SYNC_FULL=1,
// all 15.
func TestSyncCaptures(t *testing.T) {
	t.Parallel()
	root := fixtures.SharedData(t, "upstream-en-US")
	vs := fromCaptures(t, root)
	if len(vs) == 0 {
		t.Fatalf("no captures in %s", root)
	}
	dirs, _ := filepath.Glob(filepath.Join(root, "[0-9][0-9]_*"))
	first, last := 7, 8
	if full() {
		first, last = 0, len(vs)-1
	}
	up := upstreamtest.New(vs...)
	hs := httptest.NewServer(up)
	defer hs.Close()
	synced, imported := openStore(t), openStore(t)
	f := newFollower(t, hs.URL, synced, tuning{})
	for i := first; i <= last; i++ {
		up.Publish(i)
		res := mustSync(t, f, "published")
		t.Logf("sync of %s: %d requests, %s", vs[i].Name, res.Requests, res.Duration.Round(time.Millisecond))
		if !contains(res.Lacking, "themes") {
			t.Errorf("%s: lacking %v, want themes among them (the captures have no themes)", vs[i].Name, res.Lacking)
		}
		if _, err := pipeline.Import(imported, dirs[i], importOptions()); err != nil {
			t.Fatal(err)
		}
		sameServed(t, synced, imported, true)
	}
}

func contains(xs []string, x string) bool {
	for _, y := range xs {
		if y == x {
			return true
		}
	}
	return false
}

// treeHash is storetest.TreeHash: every file of a store and a hash of it.
var treeHash = storetest.TreeHash

// TestSyncFaults: every fault leaves the store's versions as they were (the
// active version untouched) and is recorded in its sync state with its reason
// class; the next sync, fault gone, publishes and clears the count.
func TestSyncFaults(t *testing.T) {
	t.Parallel()
	onCatalog := func(p string, f func(w http.ResponseWriter, r *http.Request)) func(w http.ResponseWriter, r *http.Request) bool {
		return func(w http.ResponseWriter, r *http.Request) bool {
			if r.URL.Path != "/v1/"+p {
				return false
			}
			f(w, r)
			return true
		}
	}
	body15 := func(up *upstreamtest.Server, p string) []byte {
		return up.Current().Catalogs[p]["en-US"]
	}
	cases := []struct {
		name   string
		tune   tuning
		fault  func(up *upstreamtest.Server) func(w http.ResponseWriter, r *http.Request) bool
		reject bool
		reason string
	}{
		{name: "500s", reason: follow.ReasonStatus, fault: func(*upstreamtest.Server) func(http.ResponseWriter, *http.Request) bool {
			return onCatalog("maps", func(w http.ResponseWriter, r *http.Request) { http.Error(w, "boom", 500) })
		}},
		{name: "429 with a Retry-After past the longest wait", tune: tuning{maxRetryAt: 500 * time.Millisecond}, reason: follow.ReasonStatus,
			fault: func(*upstreamtest.Server) func(http.ResponseWriter, *http.Request) bool {
				return onCatalog("maps", func(w http.ResponseWriter, r *http.Request) {
					w.Header().Set("Retry-After", "3600")
					w.WriteHeader(http.StatusTooManyRequests)
				})
			}},
		{name: "slow answer past the request timeout", tune: tuning{timeout: 100 * time.Millisecond}, reason: follow.ReasonUnreachable,
			fault: func(*upstreamtest.Server) func(http.ResponseWriter, *http.Request) bool {
				return onCatalog("maps", func(w http.ResponseWriter, r *http.Request) {
					select {
					case <-r.Context().Done():
					case <-time.After(5 * time.Second):
					}
				})
			}},
		{name: "sync past its deadline", tune: tuning{syncTime: 300 * time.Millisecond}, reason: follow.ReasonTimeout,
			fault: func(*upstreamtest.Server) func(http.ResponseWriter, *http.Request) bool {
				return onCatalog("maps", func(w http.ResponseWriter, r *http.Request) { <-r.Context().Done() })
			}},
		{name: "truncated body", reason: follow.ReasonUnreachable, fault: func(up *upstreamtest.Server) func(http.ResponseWriter, *http.Request) bool {
			return onCatalog("weapons", func(w http.ResponseWriter, r *http.Request) {
				b := body15(up, "weapons")
				w.Header().Set("Content-Length", "999999")
				_, _ = w.Write(b[:len(b)/2])
			})
		}},
		{name: "an HTML page", reason: follow.ReasonInvalid, fault: func(up *upstreamtest.Server) func(http.ResponseWriter, *http.Request) bool {
			return onCatalog("buddies", func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Content-Type", "text/html")
				_, _ = w.Write([]byte("<!DOCTYPE html><html><title>Maintenance</title></html>"))
			})
		}},
		{name: "invalid JSON", reason: follow.ReasonInvalid, fault: func(up *upstreamtest.Server) func(http.ResponseWriter, *http.Request) bool {
			return onCatalog("buddies", func(w http.ResponseWriter, r *http.Request) {
				_, _ = w.Write([]byte(`{"status":200,"data":[{"uuid":`))
			})
		}},
		{name: "dropped connection", reason: follow.ReasonUnreachable, fault: func(*upstreamtest.Server) func(http.ResponseWriter, *http.Request) bool {
			return onCatalog("seasons", func(w http.ResponseWriter, r *http.Request) {
				conn, _, err := http.NewResponseController(w).Hijack()
				if err == nil {
					conn.Close()
				}
			})
		}},
		{name: "upstream publishing during every fetch", reason: follow.ReasonMoving, fault: func(up *upstreamtest.Server) func(http.ResponseWriter, *http.Request) bool {
			n := 0
			return func(w http.ResponseWriter, r *http.Request) bool {
				if r.URL.Path == "/v1/version" && r.Header.Get("If-None-Match") == "" {
					up.Publish(n % 2) // 14, 15, 14, …: every re-check sees a move
					n++
				}
				return false
			}
		}},
		{name: "emptied catalog (shrink guard)", reject: true, reason: follow.ReasonShrink, fault: func(*upstreamtest.Server) func(http.ResponseWriter, *http.Request) bool {
			return onCatalog("maps", func(w http.ResponseWriter, r *http.Request) {
				_, _ = w.Write([]byte(`{"status":200,"data":[]}`))
			})
		}},
	}
	// One store synced to 14, copied for each case (the stand-in's URL is the
	// same, so its sync state carries over).
	up, url := fixtureStandIn(t)
	template := openStore(t)
	mustSync(t, newFollower(t, url, template, tuning{}), "published")
	for i, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "store")
			if err := os.CopyFS(dir, os.DirFS(template.Dir())); err != nil {
				t.Fatal(err)
			}
			st, err := store.Open(dir)
			if err != nil {
				t.Fatal(err)
			}
			f := newFollower(t, url, st, tc.tune)
			up.SetFault(nil)
			up.Publish(1)
			before := treeHash(t, st.Dir())
			up.SetFault(tc.fault(up))
			res, err := f.Sync(context.Background())
			if err == nil {
				t.Fatalf("sync succeeded (%s) despite the fault", res.Outcome)
			}
			if errors.Is(err, pipeline.ErrRejected) != tc.reject {
				t.Fatalf("rejected: %v, want %v: %v", errors.Is(err, pipeline.ErrRejected), tc.reject, err)
			}
			after := treeHash(t, st.Dir())
			if delete(before, "SYNC.json"); !equalMaps(before, withoutKey(after, "SYNC.json")) {
				t.Fatalf("the store changed under a failed sync: %v", err)
			}
			t.Logf("failed as it should: %v", err)
			if res.Reason != tc.reason {
				t.Errorf("the result's reason %q, want %q", res.Reason, tc.reason)
			}
			s := readState(t, st)
			if s.Outcome != "failed" || s.Failures != 1 || s.LastFailure == nil || s.LastFailure.Reason != tc.reason ||
				s.LastFailure.Error != err.Error() || !s.FailedAt[tc.reason].Equal(fixed) || !s.AttemptedAt.Equal(fixed) {
				t.Fatalf("the sync state records %+v (last failure %+v), want a failure of reason %s", s, s.LastFailure, tc.reason)
			}
			if tc.name == "an HTML page" && !strings.Contains(err.Error(), "answered text/html, not JSON") {
				t.Errorf("an HTML answer is not named as one: %v", err)
			}
			if raceOn && i > 0 && !tc.reject {
				// The next sync is an import, several times slower under the
				// race detector, and the same after any failed fetch: it runs
				// after the first fault and a rejection (make test, after each).
				return
			}
			up.SetFault(nil)
			up.Publish(1)
			// The next sync, with the default tuning (a slow machine or -race may
			// need more than a fault case's 100 ms per request).
			res = mustSync(t, newFollower(t, url, st, tuning{}), "published")
			if res.ManifestID != up.Current().Name {
				t.Fatalf("published %s, want %s", res.ManifestID, up.Current().Name)
			}
			if s := readState(t, st); s.Failures != 0 || s.Outcome != "published" || s.LastFailure.Reason != tc.reason || s.UpstreamManifestID != res.ManifestID {
				t.Fatalf("after a sync that published, the state is %+v", s)
			}
		})
	}
}

// TestSyncRestartsOnceWhenPublishedMidFetch: a version published while a
// fetch runs is noticed on the re-check; the sync starts over and publishes it.
func TestSyncRestartsOnceWhenPublishedMidFetch(t *testing.T) {
	t.Parallel()
	up, url := fixtureStandIn(t)
	st := openStore(t)
	f := newFollower(t, url, st, tuning{})
	published := false
	up.SetFault(func(w http.ResponseWriter, r *http.Request) bool {
		if r.URL.Path == "/v1/maps" && !published {
			published = true
			up.Publish(1)
		}
		return false
	})
	res := mustSync(t, f, "published")
	if res.Restarts != 1 || res.ManifestID != up.Current().Name {
		t.Fatalf("restarts %d, published %s; want 1 and %s", res.Restarts, res.ManifestID, up.Current().Name)
	}
}

// TestSyncContentChangeAndRollback: new content under the same manifestId is
// re-published while that version is active, and held once an operator has
// rolled back to another one.
func TestSyncContentChangeAndRollback(t *testing.T) {
	t.Parallel()
	up, url := fixtureStandIn(t)
	st := openStore(t)
	c, _ := upstream.New(upstream.Config{BaseURL: url, Backoff: time.Millisecond})
	f, err := follow.New(follow.Options{Client: c, Store: st, ContentCheck: time.Nanosecond, LanguageAll: "never",
		Import: pipeline.Options{Effort: apitest.Effort()}})
	if err != nil {
		t.Fatal(err)
	}
	mustSync(t, f, "published")
	up.Publish(1)
	mustSync(t, f, "published")
	mustSync(t, f, "unchanged") // the content check fetched everything: same hash

	// The upstream renames one map in de-DE, manifestId unchanged.
	v := up.Current()
	de := v.Catalogs["maps"]["de-DE"]
	changed := bytes.Replace(de, []byte(`"displayName":"`), []byte(`"displayName":"Neu `), 1)
	if bytes.Equal(changed, de) {
		t.Fatal("no displayName to change")
	}
	up.SetFault(func(w http.ResponseWriter, r *http.Request) bool {
		if r.URL.Path == "/v1/maps" && r.URL.Query().Get("language") == "de-DE" {
			_, _ = w.Write(changed)
			return true
		}
		return false
	})
	res := mustSync(t, f, "published")
	if res.Report == nil || !strings.Contains(strings.Join(res.Report.Notes, "\n"), "--force") {
		t.Fatalf("want a forced re-publish, notes %v", res.Report.Notes)
	}
	ed, _ := loadEdition(t, st, v.Name)
	loc, _ := catalog.ParseLocale("de-DE")
	if !bytes.Contains(apitest.JSON(t, ed.List(catalog.Maps, loc)), []byte(`"Neu `)) {
		t.Fatal("the re-published version lacks the new de-DE name")
	}

	// Roll back to 14 (refdata activate); content changes again under 15:
	// held, 14 stays active.
	up.Publish(0)
	id14 := up.Current().Name
	up.Publish(1)
	if _, err := pipeline.Activate(context.Background(), st, id14, fixed); err != nil {
		t.Fatal(err)
	}
	up.SetFault(nil)
	mustSync(t, f, "held")
	if p, _, _ := st.Active(); p.ManifestID != id14 {
		t.Fatalf("active %s after a held sync, want the rollback target %s", p.ManifestID, id14)
	}
}

// readState is the sync state st holds.
func readState(t testing.TB, st store.Backend) *follow.State {
	t.Helper()
	s, err := follow.ReadState(st)
	if err != nil || s == nil {
		t.Fatalf("sync state %+v, %v", s, err)
	}
	return s
}

func withoutKey(m map[string]string, k string) map[string]string {
	delete(m, k)
	return m
}

func equalMaps(a, b map[string]string) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if b[k] != v {
			return false
		}
	}
	return true
}

func firstDifference(t testing.TB, x, y *representation.Body) string {
	t.Helper()
	if x == nil || y == nil {
		return "one is missing"
	}
	a, b := apitest.JSON(t, x), apitest.JSON(t, y)
	for i := range a {
		if i >= len(b) || a[i] != b[i] {
			return "synced:   …" + string(a[max(0, i-80):min(len(a), i+80)]) + "\nimported: …" + string(b[max(0, i-80):min(len(b), i+80)])
		}
	}
	return "the imported body is longer"
}

// full: every capture rather than a few (make stress, or REFDATA_SYNC_FULL=1
// with -short).
func full() bool { return !testing.Short() || os.Getenv("REFDATA_SYNC_FULL") != "" }

// sampleDir is the directory of sample version i (sampleDirs).
func sampleDir(t testing.TB, i int) string {
	t.Helper()
	dirs, err := sampleDirs()
	if err != nil {
		t.Fatal(err)
	}
	return dirs[i]
}

// TestSyncLackingCatalogs: the catalogs an upstream does not serve are said to
// be empty on the first sync (no version to carry them over from), and
// carried over from the active version afterwards; never both.
func TestSyncLackingCatalogs(t *testing.T) {
	t.Parallel()
	up, url := fixtureStandIn(t)
	up.SetFault(func(w http.ResponseWriter, r *http.Request) bool {
		if r.URL.Path != "/v1/themes" {
			return false
		}
		http.NotFound(w, r)
		return true
	})
	st := openStore(t)
	c, err := upstream.New(upstream.Config{BaseURL: url, Backoff: time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	var log strings.Builder
	f, err := follow.New(follow.Options{Client: c, Store: st, Import: importOptions(), Now: now, LanguageAll: "never",
		Logger: slog.New(slog.NewTextHandler(&log, nil))})
	if err != nil {
		t.Fatal(err)
	}
	says := []string{"no version was active to carry them over from: they are empty", "they are carried over"}
	for i, want := range says {
		up.Publish(i)
		log.Reset()
		res := mustSync(t, f, "published")
		if !slices.Contains(res.Lacking, "themes") {
			t.Fatalf("lacking %v, want themes", res.Lacking)
		}
		if !strings.Contains(log.String(), want) || strings.Contains(log.String(), says[1-i]) {
			t.Errorf("sync %d logs:\n%s\nwant it to say %q and not %q", i, log.String(), want, says[1-i])
		}
	}
}

// TestSyncSpools (issue 61): a fetch writes the upstream's answers to a
// directory of its own under Options.SpoolDir and turns them into a snapshot
// there, in the snapshot layout, whose content hash is the one the state
// records; the directory is gone once the sync is done.
func TestSyncSpools(t *testing.T) {
	t.Parallel()
	for _, all := range []bool{false, true} {
		t.Run(fmt.Sprintf("language=all %v", all), func(t *testing.T) {
			t.Parallel()
			up, url := fixtureStandIn(t)
			up.AdvertiseAll.Store(all)
			spool := t.TempDir()
			var seen []string
			var hashes map[string]string
			checks := 0
			up.SetFault(func(w http.ResponseWriter, r *http.Request) bool {
				if r.URL.Path != "/v1/version" {
					return false
				}
				if checks++; checks == 2 { // the re-check, after the fetch
					dirs, _ := filepath.Glob(filepath.Join(spool, "refdata-sync-*"))
					for _, d := range dirs {
						_ = filepath.WalkDir(d, func(p string, e fs.DirEntry, err error) error {
							if err == nil && !e.IsDir() {
								rel, _ := filepath.Rel(d, p)
								seen = append(seen, filepath.ToSlash(rel))
							}
							return err
						})
						hashes, _ = catalog.FileHashes(os.DirFS(filepath.Join(d, "snapshot")), ".")
					}
				}
				return false
			})
			st := openStore(t)
			c := newClient(t, url, 0)
			f, err := follow.New(follow.Options{Client: c, Store: st, Import: importOptions(), Now: now, SpoolDir: spool})
			if err != nil {
				t.Fatal(err)
			}
			mustSync(t, f, "published")
			for _, want := range []string{"snapshot/version.json", "snapshot/en-US/weapons.json", "snapshot/de-DE/weapons.json", "snapshot/locres/ja-JP.json"} {
				if !slices.Contains(seen, want) {
					t.Errorf("the spool held %v after the fetch, without %s", seen, want)
				}
			}
			for _, p := range seen {
				if !strings.HasPrefix(p, "snapshot/") {
					t.Errorf("after the fetch the spool still holds the answer %s: each is removed once its snapshot file is written", p)
				}
			}
			if s := readState(t, st); s.ContentHash != catalog.ContentHash(hashes) {
				t.Errorf("the state's content hash %s is not the spooled snapshot's %s", s.ContentHash, catalog.ContentHash(hashes))
			}
			emptySpool(t, spool)
		})
	}
}
