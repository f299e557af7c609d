package pages_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"html"
	"io"
	"strings"
	"sync"
	"testing"

	"github.com/refdata/refdata/catalog"
	"github.com/refdata/refdata/edition"
	"github.com/refdata/refdata/fixtures"
	"github.com/refdata/refdata/media"
	"github.com/refdata/refdata/pages"
	"github.com/refdata/refdata/representation"
	"github.com/refdata/refdata/router/apitest"
)

// fakeMedia is a mirror holding the URLs a test gives it.
type fakeMedia struct {
	mu      sync.Mutex
	files   map[string]media.File
	lookups int
}

func (f *fakeMedia) hold(url string) media.File {
	f.mu.Lock()
	defer f.mu.Unlock()
	sum := sha256.Sum256([]byte(url))
	file := media.File{SHA256: hex.EncodeToString(sum[:]), ContentType: "image/png", Size: 1}
	if f.files == nil {
		f.files = map[string]media.File{}
	}
	f.files[url] = file
	return file
}

func (f *fakeMedia) Lookup(url string) (media.File, bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.lookups++
	file, ok := f.files[url]
	return file, ok
}

func (f *fakeMedia) Len() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return len(f.files)
}

func (f *fakeMedia) Open(context.Context, string) (io.ReadSeekCloser, error) {
	return nil, errors.New("not a file store")
}

const (
	plainID = "aaaaaaaa-0000-0000-0000-000000000001"
	evilID  = "aaaaaaaa-0000-0000-0000-000000000002"
	evil    = `<script>alert("x")</script><img src=x onerror=alert(1)>`
)

// browsed is a site over one version of two themes, one with a hostile name,
// each with nested fields: a list with an image URL, a video URL, a null; the
// other theme's uuid; an empty list and a list of objects.
func browsed(t *testing.T, lib media.Library) (*pages.Site, *edition.Edition) {
	t.Helper()
	ed := snapshotWith(t, "2222222222222222", map[string]string{plainID: "Plain", evilID: evil}, map[string]any{
		"extra": map[string]any{
			"art":    []any{"https://example.com/art.png", "https://example.com/clip.mp4", nil, 1.5, true},
			"other":  plainID,
			"empty":  []any{},
			"levels": []any{map[string]any{"name": "a"}},
			evil:     evil,
		},
	})
	site, err := pages.New(static(t, ed), nil)
	if err != nil {
		t.Fatal(err)
	}
	site.Media = lib
	return site, ed
}

// TestBrowsePages: the catalog's page lists every item by name (escaped: a
// name is data, never markup; marked en-US where the locale has none of its own) with its icon and a link to its page; the item's
// page shows every field, nested ones as nested lists (a list of objects
// folded behind its count), image URLs as images,
// other URLs and item UUIDs as links; the list of catalogs counts the items.
func TestBrowsePages(t *testing.T) {
	t.Parallel()
	site, _ := browsed(t, nil)
	ja, _ := catalog.ParseLocale("ja-JP")
	list, err := site.Catalog(catalog.Themes, ja)
	if err != nil {
		t.Fatal(err)
	}
	item, err := site.Item(catalog.Themes, mustUUID(t, evilID), ja)
	if err != nil {
		t.Fatal(err)
	}
	index, err := site.Catalogs()
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name, page string
		says       []string
	}{
		{"catalog", string(apitest.JSON(t, list)), []string{
			`<option value="ja-JP" lang="ja-JP" selected>`,
			`<form class="picker" method="get" action="/browse/themes">`,
			`<a href="/browse/themes/` + evilID + `?language=ja-JP"><span class="name" lang="en-US" dir="auto">&lt;script&gt;alert(&#34;x&#34;)&lt;/script&gt;&lt;img src=x onerror=alert(1)&gt;</span></a>`,
			`<img src="https://example.com/` + plainID + `.png"`,
			`<strong>2</strong> in version`,
		}},
		{"item", string(apitest.JSON(t, item)), []string{
			`<title>&lt;script&gt;alert(&#34;x&#34;)`,
			`<a href="/browse/themes?language=ja-JP">Themes</a>`,
			`<a href="/v1/themes/` + evilID + `?language=ja-JP">`,
			`<dt>displayName</dt><dd><span dir="auto">&lt;script&gt;`,
			`<dt>storeFeaturedImage</dt><dd><span class="muted">null</span></dd>`,
			`<dt>art</dt><dd><ol class="values"><li><a class="image" href="https://example.com/art.png"><img src="https://example.com/art.png" alt="" loading="lazy" decoding="async"><span>https://example.com/art.png</span></a></li><li><a href="https://example.com/clip.mp4" dir="auto">https://example.com/clip.mp4</a></li><li><span class="muted">null</span></li><li><span dir="auto">1.5</span></li><li><span dir="auto">true</span></li></ol></dd>`,
			`<dt>other</dt><dd><a href="/browse/themes/` + plainID + `?language=ja-JP" dir="auto">` + plainID + `</a></dd>`,
			`<dt>empty</dt><dd><span class="muted">empty list</span></dd>`,
			`<dt>levels</dt><dd><details><summary>1 entry</summary><ol class="values"><li><dl class="fields"><dt>name</dt><dd><span dir="auto">a</span></dd></dl></li></ol></details></dd>`,
			`<dt>&lt;script&gt;alert(&#34;x&#34;)&lt;/script&gt;&lt;img src=x onerror=alert(1)&gt;</dt>`,
		}},
		{"index", string(apitest.JSON(t, index)), []string{
			`<td data-label="Catalog"><a href="/browse/themes">Themes</a></td><td data-label="Items">2</td>`,
			`<td data-label="Catalog"><a href="/browse/weapons-skins">Weapon skins</a></td><td data-label="Items">0</td>`,
		}},
	} {
		for _, bad := range []string{"<script>alert", "<img src=x"} {
			if strings.Contains(tc.page, bad) {
				t.Errorf("%s: the page carries %q unescaped", tc.name, bad)
			}
		}
		for _, want := range tc.says {
			if !strings.Contains(tc.page, want) {
				t.Errorf("%s: the page lacks %s", tc.name, want)
			}
		}
	}
	if list.Lang != "ja-JP" || item.Lang != "ja-JP" || index.Lang != "en-US" {
		t.Errorf("Content-Language %q, %q, %q; want ja-JP, ja-JP, en-US", list.Lang, item.Lang, index.Lang)
	}
	if _, err := site.Item(catalog.Themes, mustUUID(t, "aaaaaaaa-0000-0000-0000-00000000000f"), ja); catalog.ErrorCode(err) != catalog.ENOTFOUND {
		t.Errorf("an item the version lacks: %v, want ENOTFOUND", err)
	}
}

// TestBrowseUsesTheMirror: an image the mirror holds is loaded from it; one it
// does not is loaded from its URL until the mirror holds it, and then the page
// is rendered again. A page is otherwise kept: asked again, the same body.
func TestBrowseUsesTheMirror(t *testing.T) {
	t.Parallel()
	lib := &fakeMedia{}
	site, _ := browsed(t, lib)
	plainIcon, evilIcon := "https://example.com/"+plainID+".png", "https://example.com/"+evilID+".png"
	held := lib.hold(plainIcon)
	first, err := site.Catalog(catalog.Themes, catalog.DefaultLocale)
	if err != nil {
		t.Fatal(err)
	}
	page := string(apitest.JSON(t, first))
	if !strings.Contains(page, `src="`+held.Path()+`"`) || strings.Contains(page, `src="`+plainIcon+`"`) || !strings.Contains(page, `src="`+evilIcon+`"`) {
		t.Errorf("held icon not from %s, or the other not from its URL", held.Path())
	}
	lib.mu.Lock()
	looked := lib.lookups
	lib.mu.Unlock()
	if again, _ := site.Catalog(catalog.Themes, catalog.DefaultLocale); again != first {
		t.Error("nothing new in the mirror, the page rendered again")
	}
	if lib.mu.Lock(); lib.lookups != looked {
		t.Errorf("nothing new in the mirror, yet the kept page looked up %d icons again", lib.lookups-looked)
	}
	lib.mu.Unlock()
	later := lib.hold(evilIcon)
	second, err := site.Catalog(catalog.Themes, catalog.DefaultLocale)
	if err != nil {
		t.Fatal(err)
	}
	if second == first || !strings.Contains(string(apitest.JSON(t, second)), `src="`+later.Path()+`"`) {
		t.Error("the mirror holds the other icon now; the page still loads it from its URL")
	}
	if again, _ := site.Catalog(catalog.Themes, catalog.DefaultLocale); again != second {
		t.Error("the mirror holds every icon; the page rendered again")
	}
	item, err := site.Item(catalog.Themes, mustUUID(t, evilID), catalog.DefaultLocale)
	if err != nil || !strings.Contains(string(apitest.JSON(t, item)), `<img src="`+later.Path()+`" alt="" width="128" height="128">`) {
		t.Errorf("the item's icon is not the mirror's (%v)", err)
	}
}

// TestBrowseSampleInJapanese: the sample's weapons page in ja-JP names each
// weapon as /v1/weapons?language=ja-JP does.
func TestBrowseSampleInJapanese(t *testing.T) {
	t.Parallel()
	r, err := fixtures.Small("15")
	if err != nil {
		t.Fatal(err)
	}
	ed := edition.New(r)
	site, err := pages.New(static(t, ed), nil)
	if err != nil {
		t.Fatal(err)
	}
	ja, _ := catalog.ParseLocale("ja-JP")
	b, err := site.Catalog(catalog.Weapons, ja)
	if err != nil {
		t.Fatal(err)
	}
	page := string(apitest.JSON(t, b))
	ids := ed.UUIDs(catalog.Weapons)
	if len(ids) == 0 {
		t.Fatal("the sample has no weapons")
	}
	for _, u := range ids {
		name := itemName(t, ed, catalog.Weapons, u, ja)
		want := `<a href="/browse/weapons/` + u.String() + `?language=ja-JP"><span class="name" lang="ja-JP" dir="auto">` + name + `</span></a>`
		if !strings.Contains(page, want) {
			t.Errorf("the page lacks %s", want)
		}
	}
}

func mustUUID(t *testing.T, s string) catalog.UUID {
	t.Helper()
	u, ok := catalog.ParseUUID(s)
	if !ok {
		t.Fatalf("%q is not a uuid", s)
	}
	return u
}

// itemName is an item's displayName in locale loc, as the API serves it,
// escaped as a page escapes text.
func itemName(t *testing.T, ed *edition.Edition, c catalog.Category, u catalog.UUID, loc int) string {
	t.Helper()
	var env struct {
		Data struct {
			DisplayName string `json:"displayName"`
		} `json:"data"`
	}
	if err := json.Unmarshal(apitest.JSON(t, ed.Item(c, u, loc)), &env); err != nil || env.Data.DisplayName == "" {
		t.Fatalf("%s %s has no displayName (%v)", c.Noun(), u, err)
	}
	return html.EscapeString(env.Data.DisplayName)
}

// TestBrowseKeptBounded: item pages are kept up to a bound; past it the oldest
// is rendered again when asked for, to the same bytes.
func TestBrowseKeptBounded(t *testing.T) {
	t.Parallel()
	themes := map[string]string{}
	for i := range 300 {
		themes[fmt.Sprintf("aaaaaaaa-0000-0000-0000-%012d", i)] = fmt.Sprint("Theme ", i)
	}
	site, err := pages.New(static(t, snapshot(t, "2222222222222222", themes)), nil)
	if err != nil {
		t.Fatal(err)
	}
	page := func(i int) *representation.Body {
		b, err := site.Item(catalog.Themes, mustUUID(t, fmt.Sprintf("aaaaaaaa-0000-0000-0000-%012d", i)), catalog.DefaultLocale)
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	first := page(0)
	if page(0) != first {
		t.Error("one page, two renders")
	}
	for i := 1; i < 300; i++ {
		page(i)
	}
	last := page(299)
	if again := page(0); again == first || !bytes.Equal(apitest.JSON(t, again), apitest.JSON(t, first)) {
		t.Error("the oldest page is kept past the bound, or renders differently")
	}
	if page(299) != last {
		t.Error("the newest page was dropped")
	}
}

// TestChangesUseTheMirror: a changelog's icons come from the mirror once it
// holds them; until then from their URLs, and the pair is rendered again when
// the mirror gets one.
func TestChangesUseTheMirror(t *testing.T) {
	t.Parallel()
	old := snapshot(t, "1111111111111111", map[string]string{plainID: "Plain"})
	cur := snapshot(t, "2222222222222222", map[string]string{plainID: "Plain", evilID: "Added"})
	site, err := pages.New(static(t, cur, old), nil)
	if err != nil {
		t.Fatal(err)
	}
	lib := &fakeMedia{}
	site.Media = lib
	icon := "https://example.com/" + evilID + ".png"
	first, err := site.Changes("", "", catalog.DefaultLocale)
	if err != nil || !strings.Contains(string(apitest.JSON(t, first)), `src="`+icon+`"`) {
		t.Fatalf("the added theme's icon is not from its URL (%v)", err)
	}
	if again, _ := site.Changes("", "", catalog.DefaultLocale); again != first {
		t.Error("nothing new in the mirror, the changelog rendered again")
	}
	held := lib.hold(icon)
	second, err := site.Changes("", "", catalog.DefaultLocale)
	if err != nil || !strings.Contains(string(apitest.JSON(t, second)), `src="`+held.Path()+`"`) || strings.Contains(string(apitest.JSON(t, second)), `src="`+icon+`"`) {
		t.Errorf("the mirror holds the icon; the changelog does not load it from %s (%v)", held.Path(), err)
	}
	if again, _ := site.Changes("", "", catalog.DefaultLocale); again != second {
		t.Error("the mirror holds every icon; the changelog rendered again")
	}
}

// TestBrowseLogoRecolored: a premier logo's page shows the logo in example team
// colors, from the recoloring route, when the mirror holds its base image, and
// no such image when it does not (the route would be 404).
func TestBrowseLogoRecolored(t *testing.T) {
	t.Parallel()
	r, err := fixtures.Small("15")
	if err != nil {
		t.Fatal(err)
	}
	ed := edition.New(r)
	site, err := pages.New(static(t, ed), nil)
	if err != nil {
		t.Fatal(err)
	}
	lib := &fakeMedia{}
	site.Media = lib
	var with, without catalog.UUID
	var zero catalog.UUID
	for _, u := range ed.UUIDs(catalog.PremierLogos) {
		var env struct {
			Data struct{ DisplayIcon *string } `json:"data"`
		}
		if err := json.Unmarshal(apitest.JSON(t, ed.Item(catalog.PremierLogos, u, catalog.DefaultLocale)), &env); err != nil {
			t.Fatal(err)
		}
		switch {
		case env.Data.DisplayIcon != nil && with == zero:
			with = u
			lib.hold(*env.Data.DisplayIcon)
		case env.Data.DisplayIcon != nil && without == zero:
			without = u
		}
	}
	if with == zero || without == zero {
		t.Fatal("the sample needs two premier logos with an image")
	}
	for u, want := range map[catalog.UUID]bool{with: true, without: false} {
		b, err := site.Item(catalog.PremierLogos, u, catalog.DefaultLocale)
		if err != nil {
			t.Fatal(err)
		}
		src := `<img src="/v1/premier/logos/` + u.String() + `/image?outline=%28R%3D`
		if got := strings.Contains(string(apitest.JSON(t, b)), src); got != want {
			t.Errorf("logo %s (base image mirrored: %v): recolored image shown %v", u, want, got)
		}
	}
}

// TestBrowseSearchPages: a search page lists the items of its answer with the
// query in its box and the language picker, escaped, and the same query's
// JSON; it is kept by query as typed (the answer asked once), apart from the
// catalog pages and bounded: a crawl of queries leaves the catalog's page
// kept and renders the oldest query's page again. An answer that fails is an
// error, not kept. A query that cannot be answered has its page: the query in
// its box, why, escaped, and no items.
func TestBrowseSearchPages(t *testing.T) {
	t.Parallel()
	site, ed := browsed(t, nil)
	ja, _ := catalog.ParseLocale("ja-JP")
	asked := 0
	answer := func() (*representation.Body, error) {
		asked++
		return ed.List(catalog.Themes, ja), nil
	}
	q := `name:"<b>x" OR ` + evil
	first, err := site.Search(ed, catalog.Themes, ja, q, answer)
	if err != nil {
		t.Fatal(err)
	}
	page := string(apitest.JSON(t, first))
	for _, want := range []string{
		`<input id="q" name="q" type="search" value="name:&#34;&lt;b&gt;x&#34; OR &lt;script&gt;alert(&#34;x&#34;)&lt;/script&gt;&lt;img src=x onerror=alert(1)&gt;" maxlength="512"`,
		`<input type="hidden" name="language" value="ja-JP">`,
		`<input type="hidden" name="q" value="name:&#34;&lt;b&gt;x&#34; OR &lt;script&gt;`,
		`<strong>2</strong> of 2 in version`,
		`<a href="/v1/themes?language=ja-JP&amp;q=name%3A%22%3Cb%3Ex%22`,
		`<a href="/browse/themes?language=ja-JP">Show all</a>`,
		`<li data-uuid="` + plainID + `">`,
		`<li data-uuid="` + evilID + `">`,
	} {
		if !strings.Contains(page, want) {
			t.Errorf("the search page lacks %s", want)
		}
	}
	for _, bad := range []string{"<script>alert", "<img src=x", "<b>"} {
		if strings.Contains(page, bad) {
			t.Errorf("the search page carries %q unescaped", bad)
		}
	}
	catalogPage, err := site.Catalog(catalog.Themes, ja)
	if err != nil {
		t.Fatal(err)
	}
	if again, _ := site.Search(ed, catalog.Themes, ja, q, answer); again != first || asked != 1 {
		t.Errorf("asked again: a new page (%v) or the answer asked %d times, want the kept page, asked once", again != first, asked)
	}
	for i := range 100 {
		if _, err := site.Search(ed, catalog.Themes, ja, fmt.Sprint("theme ", i), answer); err != nil {
			t.Fatal(err)
		}
	}
	if again, _ := site.Catalog(catalog.Themes, ja); again != catalogPage {
		t.Error("100 queries pushed the catalog's page out")
	}
	asked = 0
	if again, _ := site.Search(ed, catalog.Themes, ja, q, answer); again == first || asked != 1 {
		t.Errorf("after 100 other queries the first is still kept (asked %d)", asked)
	}
	failing := func() (*representation.Body, error) { asked++; return nil, errors.New("no table") }
	for range 2 {
		if _, err := site.Search(ed, catalog.Themes, ja, "fails", failing); err == nil {
			t.Error("a failed answer gave a page")
		}
	}
	if asked != 3 {
		t.Errorf("a failed answer was kept: asked %d times, want 3", asked)
	}

	bad := string(site.SearchError(ed, catalog.Themes, catalog.DefaultLocale, `cost=><img src=x>`, `q: term 1 ("cost=><img src=x>", at character 5): bad operator "=>"`))
	for _, want := range []string{
		`<input id="q" name="q" type="search" value="cost=&gt;&lt;img src=x&gt;" maxlength="512" autocomplete="off" spellcheck="false" aria-describedby="q-error q-help" aria-invalid="true">`,
		`<p class="error" role="alert" id="q-error">Term 1 (&#34;cost=&gt;&lt;img src=x&gt;&#34;, at character 5): bad operator &#34;=&gt;&#34;.</p>`,
		`HTTP status 400.`,
		`<a href="/">`,
	} {
		if !strings.Contains(bad, want) {
			t.Errorf("the page of a bad query lacks %s:\n%s", want, bad)
		}
	}
	if strings.Contains(bad, "<img src=x") || strings.Contains(bad, `<ul class="items"`) {
		t.Error("the page of a bad query carries it unescaped, or lists items")
	}
}
