package pages_test

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"os"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"
	"testing/fstest"
	"weak"

	"github.com/refdata/refdata/catalog"
	"github.com/refdata/refdata/fixtures"
	"github.com/refdata/refdata/impl"
	"github.com/refdata/refdata/pages"
	"github.com/refdata/refdata/representation"
)

// snapshot is a minimal version: its record and one theme per name given.
func snapshot(t *testing.T, manifest string, themes map[string]string) *catalog.Edition {
	t.Helper()
	version := map[string]any{"status": 200, "data": map[string]any{
		"manifestId": manifest, "branch": "release-test", "version": "01.00.00." + manifest[:4],
		"buildVersion": "1", "engineVersion": "", "riotClientVersion": "release-test-shipping-1",
		"riotClientBuild": "", "buildDate": "2026-01-01T00:00:00Z",
	}}
	var items []map[string]any
	for uuid, name := range themes {
		items = append(items, map[string]any{"uuid": uuid, "displayName": name, "displayIcon": "https://example.com/" + uuid + ".png", "storeFeaturedImage": nil, "assetPath": "Themes/" + uuid})
	}
	vb, _ := json.Marshal(version)
	tb, _ := json.Marshal(map[string]any{"status": 200, "data": items})
	snap, err := catalog.LoadSnapshot(fstest.MapFS{"version.json": {Data: vb}, "en-US/themes.json": {Data: tb}}, ".")
	if err != nil {
		t.Fatal(err)
	}
	ed, err := catalog.Build(snap)
	if err != nil {
		t.Fatal(err)
	}
	return ed
}

// TestChangesEscapeNames: a name is data, never markup — the template escapes it
// in text and in attributes.
func TestChangesEscapeNames(t *testing.T) {
	const evil = `<script>alert("x")</script><img src=x onerror=alert(1)>`
	old := snapshot(t, "1111111111111111", map[string]string{"aaaaaaaa-0000-0000-0000-000000000001": "Plain"})
	cur := snapshot(t, "2222222222222222", map[string]string{
		"aaaaaaaa-0000-0000-0000-000000000001": "Plain & renamed",
		"aaaaaaaa-0000-0000-0000-000000000002": evil,
	})
	repo, err := impl.NewStatic(cur, old)
	if err != nil {
		t.Fatal(err)
	}
	site, err := pages.New(repo, nil)
	if err != nil {
		t.Fatal(err)
	}
	b, err := site.Changes("", "", catalog.DefaultLocale)
	if err != nil {
		t.Fatal(err)
	}
	page := string(b.JSON)
	for _, bad := range []string{"<script>alert", "<img src=x"} {
		if strings.Contains(page, bad) {
			t.Errorf("the page carries %q unescaped", bad)
		}
	}
	for _, want := range []string{
		"&lt;script&gt;alert(&#34;x&#34;)&lt;/script&gt;", // the added theme, by name
		`<del><span class="visually-hidden">before: </span>Plain</del>`,
		`<ins><span class="visually-hidden">after: </span>Plain &amp; renamed</ins>`,
		`href="/v1/themes/aaaaaaaa-0000-0000-0000-000000000002"`,
		`src="https://example.com/aaaaaaaa-0000-0000-0000-000000000002.png"`,
		"<strong>1</strong> added",
	} {
		if !strings.Contains(page, want) {
			t.Errorf("the page lacks %s", want)
		}
	}
	if b.Lang != "en-US" {
		t.Errorf("Content-Language %q, want en-US", b.Lang)
	}
}

// TestChangesKeptPerPair: a pair is rendered once for all locales; asking again
// returns the same bodies, and each locale names itself.
func TestChangesKeptPerPair(t *testing.T) {
	// Caching, not contents: the trimmed versions (every catalog and locale).
	var eds [2]*catalog.Edition
	for i, nn := range []string{"15", "14"} {
		ed, err := fixtures.Small(nn)
		if err != nil {
			t.Fatal(err)
		}
		eds[i] = ed
	}
	repo, err := impl.NewStatic(eds[0], eds[1:]...)
	if err != nil {
		t.Fatal(err)
	}
	site, err := pages.New(repo, nil)
	if err != nil {
		t.Fatal(err)
	}
	ja, _ := catalog.ParseLocale("ja-JP")
	latest, err := site.Changes("", "", ja)
	if err != nil {
		t.Fatal(err)
	}
	named, err := site.Changes(eds[1].ManifestID, eds[0].ManifestID, ja)
	if err != nil {
		t.Fatal(err)
	}
	if latest != named {
		t.Error("/changes and /changes/{previous}/{active} rendered twice")
	}
	if latest.Lang != "ja-JP" || !bytes.Contains(latest.JSON, []byte(`<option value="ja-JP" lang="ja-JP" selected>`)) {
		t.Errorf("the ja-JP page is not marked ja-JP (Content-Language %q)", latest.Lang)
	}
	if _, err := site.Changes("0000000000000000", eds[0].ManifestID, ja); err == nil {
		t.Error("a version that is not retained rendered a page")
	}
	h1, _ := site.Home()
	h2, _ := site.Home()
	if h1 != h2 {
		t.Error("the landing page was rendered twice for one version")
	}
}

// swapping serves one Static, then another.
type swapping struct{ cur atomic.Pointer[impl.Static] }

func (s *swapping) Active() *catalog.Edition                  { return s.cur.Load().Active() }
func (s *swapping) LatestDiff() (*representation.Body, error) { return s.cur.Load().LatestDiff() }
func (s *swapping) Diff(from, to string) (*representation.Body, error) {
	return s.cur.Load().Diff(from, to)
}
func (s *swapping) Versions() *impl.VersionList { return s.cur.Load().Versions() }
func (s *swapping) RetainedEdition(id string) (*catalog.Edition, error) {
	return s.cur.Load().RetainedEdition(id)
}

// TestPagesLetSwappedEditionGo: the landing page and the latest pair, kept for
// the edition they were made from, do not keep that edition once another is
// served.
func TestPagesLetSwappedEditionGo(t *testing.T) {
	themes := map[string]string{"aaaaaaaa-0000-0000-0000-000000000001": "Plain"}
	older := snapshot(t, "1111111111111111", themes)
	first := snapshot(t, "2222222222222222", themes)
	repo := &swapping{}
	st, err := impl.NewStatic(first, older)
	if err != nil {
		t.Fatal(err)
	}
	repo.cur.Store(&st)
	site, err := pages.New(repo, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := site.Home(); err != nil {
		t.Fatal(err)
	}
	if _, err := site.Changes("", "", catalog.DefaultLocale); err != nil {
		t.Fatal(err)
	}
	gone := weak.Make(first)
	first = nil
	next, err := impl.NewStatic(snapshot(t, "3333333333333333", themes), older)
	if err != nil {
		t.Fatal(err)
	}
	repo.cur.Store(&next)
	st = impl.Static{}
	runtime.GC()
	if gone.Value() != nil {
		t.Error("the pages keep the edition served before the swap")
	}
	home, err := site.Home()
	if err != nil || !bytes.Contains(home.JSON, []byte("3333333333333333")) {
		t.Errorf("the landing page after the swap does not name the new version (%v)", err)
	}
}

// TestRedocBundleMatchesChecksum: the embedded Redoc bundle is the one refresh.sh
// wrote (vendor/redoc/SHA256SUMS), not an edited copy.
func TestRedocBundleMatchesChecksum(t *testing.T) {
	sums, err := os.ReadFile("vendor/redoc/SHA256SUMS")
	if err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(pages.Redoc().JSON)
	want := hex.EncodeToString(sum[:]) + "  redoc.standalone.js"
	if !strings.Contains(string(sums), want) {
		t.Errorf("vendor/redoc/redoc.standalone.js does not match SHA256SUMS; run pages/vendor/redoc/refresh.sh")
	}
	if bytes.Contains(pages.Redoc().JSON, []byte("cdn.redoc.ly/redoc/logo")) {
		t.Error("the bundle still loads its logo from a CDN")
	}
}
