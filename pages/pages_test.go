package pages_test

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"
	"testing/fstest"
	"time"
	"weak"

	"github.com/refdata/refdata/catalog"
	"github.com/refdata/refdata/edition"
	"github.com/refdata/refdata/fixtures"
	"github.com/refdata/refdata/handler"
	"github.com/refdata/refdata/pages"
	"github.com/refdata/refdata/representation"
	"github.com/refdata/refdata/router"
	"github.com/refdata/refdata/router/apitest"
)

// snapshot is a minimal version: its record and one theme per name given.
func snapshot(t *testing.T, manifest string, themes map[string]string) *edition.Edition {
	t.Helper()
	return snapshotWith(t, manifest, themes, nil)
}

// snapshotWith is snapshot with extra fields on every theme, as an upstream
// adds them, rendered as an import renders a version: the fields openapi.yaml
// does not describe that Validate finds are the edition's Unknown.
func snapshotWith(t *testing.T, manifest string, themes map[string]string, extra map[string]any) *edition.Edition {
	t.Helper()
	version := map[string]any{"status": 200, "data": map[string]any{
		"manifestId": manifest, "branch": "release-test", "version": "01.00.00." + manifest[:4],
		"buildVersion": "1", "engineVersion": "", "riotClientVersion": "release-test-shipping-1",
		"riotClientBuild": "", "buildDate": "2026-01-01T00:00:00Z",
	}}
	var items []map[string]any
	for uuid, name := range themes {
		it := map[string]any{"uuid": uuid, "displayName": name, "displayIcon": "https://example.com/" + uuid + ".png", "storeFeaturedImage": nil, "assetPath": "Themes/" + uuid}
		for k, v := range extra {
			it[k] = v
		}
		items = append(items, it)
	}
	vb, _ := json.Marshal(version)
	tb, _ := json.Marshal(map[string]any{"status": 200, "data": items})
	snap, err := catalog.LoadSnapshot(fstest.MapFS{"version.json": {Data: vb}, "en-US/themes.json": {Data: tb}}, ".")
	if err != nil {
		t.Fatal(err)
	}
	val, err := catalog.Validate(snap)
	if err != nil {
		t.Fatal(err)
	}
	if len(val.Rejections) > 0 {
		t.Fatalf("the snapshot is refused: %v", val.Rejections)
	}
	r, err := catalog.Render(snap)
	if err != nil {
		t.Fatal(err)
	}
	r.Unknown = val.Unknown
	return edition.New(r)
}

// static serves eds, newest first, with the diffs between them.
func static(t *testing.T, eds ...*edition.Edition) *edition.Static {
	t.Helper()
	var vs []edition.StaticVersion
	for _, ed := range eds {
		vs = append(vs, edition.StaticVersion{Edition: ed})
	}
	st, err := edition.NewStatic(vs...)
	if err != nil {
		t.Fatal(err)
	}
	return st
}

// TestChangesEscapeNames: a name is data, never markup — the template escapes it
// in text and in attributes.
func TestChangesEscapeNames(t *testing.T) {
	t.Parallel()
	const evil = `<script>alert("x")</script><img src=x onerror=alert(1)>`
	old := snapshot(t, "1111111111111111", map[string]string{"aaaaaaaa-0000-0000-0000-000000000001": "Plain"})
	cur := snapshot(t, "2222222222222222", map[string]string{
		"aaaaaaaa-0000-0000-0000-000000000001": "Plain & renamed",
		"aaaaaaaa-0000-0000-0000-000000000002": evil,
	})
	site, err := pages.New(static(t, cur, old), nil)
	if err != nil {
		t.Fatal(err)
	}
	b, err := site.Changes("", "", catalog.DefaultLocale)
	if err != nil {
		t.Fatal(err)
	}
	page := string(apitest.JSON(t, b))
	for _, bad := range []string{"<script>alert", "<img src=x"} {
		if strings.Contains(page, bad) {
			t.Errorf("the page carries %q unescaped", bad)
		}
	}
	for _, want := range []string{
		"&lt;script&gt;alert(&#34;x&#34;)&lt;/script&gt;", // the added theme, by name
		`<del><span class="visually-hidden">before: </span>Plain</del>`,
		`<ins><span class="visually-hidden">after: </span>Plain &amp; renamed</ins>`,
		`href="/browse/themes/aaaaaaaa-0000-0000-0000-000000000002"`,
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
	t.Parallel()
	// Caching, not contents: the trimmed versions (every catalog and locale).
	var eds [2]*edition.Edition
	for i, nn := range []string{"15", "14"} {
		r, err := fixtures.Small(nn)
		if err != nil {
			t.Fatal(err)
		}
		eds[i] = edition.New(r)
	}
	site, err := pages.New(static(t, eds[0], eds[1]), nil)
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
	again, err := site.Changes(eds[1].ManifestID, eds[0].ManifestID, ja)
	if err != nil || again != named {
		t.Errorf("the pair was rendered again (%v)", err)
	}
	en, err := site.Changes(eds[1].ManifestID, eds[0].ManifestID, catalog.DefaultLocale)
	if err != nil || en.Lang != "en-US" || en == named {
		t.Errorf("the en-US page of the pair: %v, Content-Language %q", err, en.Lang)
	}
	// Back from the active version to the previous one: a pair of its own.
	back, err := site.Changes(eds[0].ManifestID, eds[1].ManifestID, ja)
	if err != nil {
		t.Fatal(err)
	}
	if back == named || !bytes.Contains(apitest.JSON(t, back), []byte("/v1/diff/"+eds[0].ManifestID+"/"+eds[1].ManifestID)) {
		t.Error("the changelog back to the previous version is not its own page")
	}
	if latest.Lang != "ja-JP" || !bytes.Contains(apitest.JSON(t, latest), []byte(`<option value="ja-JP" lang="ja-JP" selected>`)) {
		t.Errorf("the ja-JP page is not marked ja-JP (Content-Language %q)", latest.Lang)
	}
	if _, err := site.Changes("0000000000000000", eds[0].ManifestID, ja); catalog.ErrorCode(err) != catalog.ENOTFOUND {
		t.Errorf("a version that is not retained: %v, want ENOTFOUND", err)
	}
	h1, _ := site.Home("http://example.test")
	h2, _ := site.Home("http://example.test")
	if h1 != h2 {
		t.Error("the landing page was rendered twice for one version")
	}
}

// swapping serves one Static, then another.
type swapping struct {
	cur atomic.Pointer[edition.Static]
}

func (s *swapping) Active() *edition.Edition                  { return s.cur.Load().Active() }
func (s *swapping) LatestDiff() (*representation.Body, error) { return s.cur.Load().LatestDiff() }
func (s *swapping) Diff(from, to string) (*representation.Body, error) {
	return s.cur.Load().Diff(from, to)
}
func (s *swapping) Versions() *edition.VersionList { return s.cur.Load().Versions() }
func (s *swapping) RetainedEdition(id string) (*edition.Edition, error) {
	return s.cur.Load().RetainedEdition(id)
}

// TestPagesLetSwappedEditionGo: the landing page and the latest pair, kept for
// the edition they were made from, do not keep that edition once another is
// served.
func TestPagesLetSwappedEditionGo(t *testing.T) {
	t.Parallel()
	themes := map[string]string{"aaaaaaaa-0000-0000-0000-000000000001": "Plain"}
	older := snapshot(t, "1111111111111111", themes)
	first := snapshot(t, "2222222222222222", themes)
	repo := &swapping{}
	repo.cur.Store(static(t, first, older))
	site, err := pages.New(repo, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := site.Home("http://example.test"); err != nil {
		t.Fatal(err)
	}
	if _, err := site.Changes("", "", catalog.DefaultLocale); err != nil {
		t.Fatal(err)
	}
	gone := weak.Make(first)
	first = nil
	repo.cur.Store(static(t, snapshot(t, "3333333333333333", themes), older))
	runtime.GC()
	if gone.Value() != nil {
		t.Error("the pages keep the edition served before the swap")
	}
	home, err := site.Home("http://example.test")
	if err != nil || !bytes.Contains(apitest.JSON(t, home), []byte("3333333333333333")) {
		t.Errorf("the landing page after the swap does not name the new version (%v)", err)
	}
}

// TestRedocBundleMatchesChecksum: the embedded Redoc bundle is the one refresh.sh
// wrote (vendor/redoc/SHA256SUMS), not an edited copy.
func TestRedocBundleMatchesChecksum(t *testing.T) {
	t.Parallel()
	sums, err := os.ReadFile("vendor/redoc/SHA256SUMS")
	if err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(apitest.JSON(t, pages.Redoc()))
	want := hex.EncodeToString(sum[:]) + "  redoc.standalone.js"
	if !strings.Contains(string(sums), want) {
		t.Errorf("vendor/redoc/redoc.standalone.js does not match SHA256SUMS; run pages/vendor/redoc/refresh.sh")
	}
	if bytes.Contains(apitest.JSON(t, pages.Redoc()), []byte("cdn.redoc.ly/redoc/logo")) {
		t.Error("the bundle still loads its logo from a CDN")
	}
}

// diffOf is a repository whose diff between any two retained versions is the
// one a test chooses.
type diffOf struct {
	*edition.Static
	body *representation.Body
	err  error
}

func (d diffOf) Diff(from, to string) (*representation.Body, error) {
	for _, id := range []string{from, to} {
		if _, err := d.RetainedEdition(id); err != nil {
			return nil, err
		}
	}
	return d.body, d.err
}

// TestChangesComeFromTheRepository: a changelog shows the diff the repository
// holds; with none it is no page (never a diff computed from the two
// editions), and a diff the repository cannot read is an internal error.
func TestChangesComeFromTheRepository(t *testing.T) {
	t.Parallel()
	old := snapshot(t, "1111111111111111", map[string]string{"aaaaaaaa-0000-0000-0000-000000000001": "Plain"})
	cur := snapshot(t, "2222222222222222", map[string]string{
		"aaaaaaaa-0000-0000-0000-000000000001": "Plain",
		"aaaaaaaa-0000-0000-0000-000000000002": "Added theme",
	})
	st := static(t, cur, old)
	// A diff that says nothing changed, though the two editions differ.
	nothing, err := edition.DiffBody(old, old, time.Date(2026, 11, 22, 0, 0, 0, 0, time.UTC))
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		repo edition.Repository
		code string // of the error; "" for a page
		says string // on the page
		not  string // not on the page
	}{
		{"held", st, "", "<strong>1</strong> added", "<strong>0</strong> added"},
		{"what the repository says", diffOf{st, nothing, nil}, "", "<strong>0</strong> added", "Added theme"},
		{"none", diffOf{st, nil, catalog.Errorf(catalog.ENOTFOUND, "no diff stored")}, catalog.ENOTFOUND, "", ""},
		{"unreadable", diffOf{st, nil, errors.New("read /var/lib/refdata/diffs/x.json: checksum mismatch")}, catalog.EINTERNAL, "", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			site, err := pages.New(tc.repo, nil)
			if err != nil {
				t.Fatal(err)
			}
			for _, pair := range [][2]string{{"", ""}, {old.ManifestID, cur.ManifestID}} {
				b, err := site.Changes(pair[0], pair[1], catalog.DefaultLocale)
				if code := catalog.ErrorCode(err); code != tc.code {
					t.Fatalf("%v: error %v (%s), want code %q", pair, err, code, tc.code)
				}
				if tc.code != "" {
					if b != nil {
						t.Errorf("%v: a page besides the error", pair)
					}
					continue
				}
				if page := string(apitest.JSON(t, b)); !strings.Contains(page, tc.says) || strings.Contains(page, tc.not) {
					t.Errorf("%v: the page does not say %q, or says %q", pair, tc.says, tc.not)
				}
			}
		})
	}
}

// TestChangesNewFields: /changes lists under "New fields" each field the
// newer version's items carry that openapi.yaml does not describe and the
// older version's did not — its catalog's route, its name (escaped: a field
// name is data, never markup) and how many items carry it — in every
// locale's page. Without such a field (none, the same ones, or one that went
// away) the section is absent; back from the newer version to the older, the
// fields only the older has are the new ones.
func TestChangesNewFields(t *testing.T) {
	t.Parallel()
	const evil = `<img src=x onerror=alert(1)>`
	themes := map[string]string{
		"aaaaaaaa-0000-0000-0000-000000000001": "Plain",
		"aaaaaaaa-0000-0000-0000-000000000002": "Other",
	}
	glow := map[string]any{"glow": "warm"}
	item := func(field string) string {
		return `<li><code>/v1/themes</code> <code>` + field + `</code> <span class="muted">in 2 items</span></li>`
	}
	check := apitest.New(t)
	for _, tc := range []struct {
		name     string
		old, cur map[string]any // extra fields on every theme
		listed   []string       // under New fields, in order; none: no section
		back     []string       // the same, from the newer version back to the older
	}{
		{"added", nil, map[string]any{"glow": "warm", evil: 1.0, "rarity": map[string]any{"tier": "rare"}},
			[]string{item("&lt;img src=x onerror=alert(1)&gt;"), item("glow"), item("rarity")}, nil},
		{"one more beside one the older had", glow, map[string]any{"glow": "cold", "rarity": "rare"},
			[]string{item("rarity")}, nil},
		{"the same ones", glow, glow, nil, nil},
		{"one went away", glow, nil, nil, []string{item("glow")}},
		{"none", nil, nil, nil, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			old := snapshotWith(t, "1111111111111111", themes, tc.old)
			cur := snapshotWith(t, "2222222222222222", themes, tc.cur)
			if len(cur.Unknown) != len(tc.cur) || len(old.Unknown) != len(tc.old) {
				t.Fatalf("the versions carry unknown fields %v and %v, want %d and %d", old.Unknown, cur.Unknown, len(tc.old), len(tc.cur))
			}
			h, err := router.New(&handler.Server{Repo: static(t, cur, old)}, slog.New(slog.DiscardHandler), nil)
			if err != nil {
				t.Fatal(err)
			}
			for _, page := range []struct {
				target string
				listed []string
			}{
				{"/changes", tc.listed},
				{"/changes?language=ja-JP", tc.listed},
				{"/changes/" + cur.ManifestID + "/" + old.ManifestID, tc.back},
			} {
				req := httptest.NewRequest(http.MethodGet, page.target, nil)
				res := check.Do(t, h, req)
				b, _ := io.ReadAll(res.Body)
				if res.StatusCode != http.StatusOK {
					t.Fatalf("GET %s: %d %.300s", page.target, res.StatusCode, b)
				}
				body := string(b)
				if strings.Contains(body, evil) {
					t.Errorf("GET %s: the page carries %s unescaped", page.target, evil)
				}
				heading := strings.Contains(body, `<h2 id="new-fields">New fields</h2>`)
				start := strings.Index(body, `<ul class="new-fields">`)
				if heading != (len(page.listed) > 0) || (start >= 0) != heading {
					t.Fatalf("GET %s: New fields heading %v, list %v; want them when %d fields are new", page.target, heading, start >= 0, len(page.listed))
				}
				if start < 0 {
					continue
				}
				end := strings.Index(body[start:], "</ul>")
				list := body[start : start+end]
				if want := `<ul class="new-fields">` + strings.Join(page.listed, ""); list != want {
					t.Errorf("GET %s: new fields\n%s\nwant\n%s", page.target, list, want)
				}
			}
		})
	}
}

// TestErrorPage: an error page is the site's layout with a heading for its
// status, the message (capitalized, escaped: it may carry what the client
// sent), the status, and a way back: to / always, to /changes from a
// changelog unless /changes itself is what failed, to /browse from a catalog
// or item page.
func TestErrorPage(t *testing.T) {
	t.Parallel()
	check := apitest.New(t)
	const home, changes = `<a href="/">Back to the home page</a>`, `<a href="/changes">The latest changes</a>`
	for _, tc := range []struct {
		status        int
		message, path string
		says          []string
		not           []string
	}{
		{404, "There is no page at /nope.", "/nope", []string{"<title>Page not found · refdata</title>", "<h1>Page not found</h1>", "There is no page at /nope.", "HTTP status 404.", home}, []string{changes}},
		{404, "this server retains no version named \"zzz\"", "/changes/zzz/yyy", []string{"<h1>Page not found</h1>", "This server retains no version named &#34;zzz&#34;", home, changes}, nil},
		{400, `language "<b>" is not supported`, "/changes", []string{"<h1>Bad request</h1>", "Language &#34;&lt;b&gt;&#34; is not supported", home, changes}, []string{"<b>"}},
		{404, "the server retains no version before X", "/changes", []string{home}, []string{changes}},
		{405, "this API is read-only", "/docs", []string{"<h1>Method not allowed</h1>", "This API is read-only", home}, []string{changes}},
		{500, "internal error (request id 1-2)", "/", []string{"<h1>Server error</h1>", "Internal error (request id 1-2)", home}, nil},
		{418, "short and stout", "/", []string{"<h1>I&#39;m a teapot</h1>"}, nil},
		{404, "", "/", []string{"<h1>Page not found</h1>"}, nil},
		{404, "there is no catalog \"nope\"", "/browse/nope", []string{home, `<a href="/browse">The catalogs</a>`}, []string{changes}},
		{404, "no route", "/browsed", []string{home}, []string{`<a href="/browse">The catalogs</a>`}},
		{404, "ärger", "/", []string{"Ärger"}, nil},
	} {
		page := string(pages.ErrorPage(tc.status, tc.message, tc.path))
		req := httptest.NewRequest(http.MethodGet, tc.path, nil)
		rec := httptest.NewRecorder()
		handler.SendError(representation.HTTPSink{W: rec, Req: req}, tc.status, tc.message, func(int, string) []byte { return []byte(page) })
		check.CheckErrorPage(t, req, rec.Result(), rec.Body.Bytes())
		for _, want := range tc.says {
			if !strings.Contains(page, want) {
				t.Errorf("%d %s: the page lacks %s", tc.status, tc.path, want)
			}
		}
		for _, bad := range tc.not {
			if strings.Contains(page, bad) {
				t.Errorf("%d %s: the page has %s", tc.status, tc.path, bad)
			}
		}
	}
}

// TestHomeEscapesItsOrigin: the origin the landing page names is text, never
// markup, whatever the caller passes (handler passes only plain host names).
func TestHomeEscapesItsOrigin(t *testing.T) {
	t.Parallel()
	cur := snapshot(t, "2222222222222222", map[string]string{"aaaaaaaa-0000-0000-0000-000000000001": "Plain"})
	site, err := pages.New(static(t, cur), nil)
	if err != nil {
		t.Fatal(err)
	}
	b, err := site.Home(`http://x'"><script>alert(1)</script>`)
	if err != nil {
		t.Fatal(err)
	}
	page := string(apitest.JSON(t, b))
	if strings.Contains(page, "<script>alert") || !strings.Contains(page, `'http://x&#39;&#34;&gt;&lt;script&gt;alert(1)&lt;/script&gt;/v1/weapons?language=ja-JP'`) {
		t.Errorf("the origin is not escaped: %s", page[strings.Index(page, "<pre>"):])
	}
}

// TestHomeKeptPerOrigin: each address gets its page, rendered once and kept,
// up to a bound; past it the oldest is rendered again when asked for.
func TestHomeKeptPerOrigin(t *testing.T) {
	t.Parallel()
	cur := snapshot(t, "2222222222222222", map[string]string{"aaaaaaaa-0000-0000-0000-000000000001": "Plain"})
	site, err := pages.New(static(t, cur), nil)
	if err != nil {
		t.Fatal(err)
	}
	first, _ := site.Home("http://a.example")
	if again, _ := site.Home("http://a.example"); again != first {
		t.Error("one address, two renders")
	}
	if other, _ := site.Home("https://a.example"); other == first || !bytes.Contains(apitest.JSON(t, other), []byte("https://a.example/v1/weapons")) {
		t.Error("another scheme, the same page")
	}
	for i := range 20 {
		if _, err := site.Home(fmt.Sprintf("http://host%d.example", i)); err != nil {
			t.Fatal(err)
		}
	}
	if again, _ := site.Home("http://a.example"); again == first || !bytes.Equal(apitest.JSON(t, again), apitest.JSON(t, first)) {
		t.Error("the oldest page is kept past the bound, or renders differently")
	}
}
