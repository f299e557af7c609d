package router_test

import (
	"fmt"
	"html"
	"io"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"

	"github.com/refdata/refdata/catalog"
	"github.com/refdata/refdata/edition"
	"github.com/refdata/refdata/handler"
	"github.com/refdata/refdata/pages"
	"github.com/refdata/refdata/router/apitest"
)

// TestPagesHeaders: every page is HTML in UTF-8 with its CSP and nosniff, needs
// no User-Agent, and names the served version; the changelog names its locale.
func TestPagesHeaders(t *testing.T) {
	t.Parallel()
	check := apitest.New(t)
	r := served(t)
	older, newer := previous(t, r), r.Active().ManifestID
	h := testRouter(t, r, nil)
	for _, tc := range []struct{ path, lang string }{
		{"/", "en"},
		{"/docs", "en"},
		{"/changes", "en-US"},
		{"/changes?language=ko-kr", "ko-KR"},
		{"/changes/" + older + "/" + newer + "?language=ja-JP", "ja-JP"},
		{"/changes/" + newer + "/" + older + "?language=pt-br", "pt-BR"},
		{"/browse", "en-US"},
		{"/browse/weapons-skins?language=ja-jp", "ja-JP"},
		{"/browse/weapons/" + r.Active().UUIDs(catalog.Weapons)[0].String() + "?language=ko-KR", "ko-KR"},
	} {
		res := check.Do(t, h, get(tc.path, "User-Agent", ""))
		if res.StatusCode != http.StatusOK {
			t.Fatalf("%s: %d", tc.path, res.StatusCode)
		}
		for name, want := range map[string]string{
			"Content-Type":            "text/html; charset=utf-8",
			"Content-Security-Policy": handler.PageCSP,
			"X-Content-Type-Options":  "nosniff",
			"Referrer-Policy":         "same-origin",
			"Content-Language":        tc.lang,
			"X-Data-Version":          newer,
		} {
			if got := res.Header.Get(name); got != want {
				t.Errorf("%s: %s = %q, want %q", tc.path, name, got, want)
			}
		}
	}
}

// TestRedocBundle: the docs page's script comes from the binary, cached and
// compressed like every body, without a User-Agent.
func TestRedocBundle(t *testing.T) {
	t.Parallel()
	h := testRouter(t, served(t), nil)
	rec := newRecorder(h, get(pages.RedocPath, "User-Agent", "", "Accept-Encoding", "br"))
	if rec.Code != http.StatusOK || rec.Header().Get("Content-Encoding") != "br" || !strings.HasPrefix(rec.Header().Get("Content-Type"), "text/javascript") {
		t.Fatalf("%d, Content-Type %q, Content-Encoding %q", rec.Code, rec.Header().Get("Content-Type"), rec.Header().Get("Content-Encoding"))
	}
	etag := rec.Header().Get("ETag")
	if rec := newRecorder(h, get(pages.RedocPath, "If-None-Match", etag, "Accept-Encoding", "br")); rec.Code != http.StatusNotModified {
		t.Errorf("If-None-Match: %d, want 304", rec.Code)
	}
}

// searchBoxRE finds the query a catalog page's search box holds, escaped.
var searchBoxRE = regexp.MustCompile(`<input id="q" name="q" type="search" value="([^"]*)"`)

// TestBrowseSearch: a catalog page with q lists exactly the items the
// catalog's list route answers to the same q in the same language, in its
// order, with the query in the search box and in the language picker; blank
// q is the catalog's page itself. A query that cannot be answered is a 400
// page (never cached) with the query in its box and what is wrong, escaped,
// and no items; so is one past the spec's 512 characters or given twice.
// Through the router and the edge, every answer valid by openapi.yaml.
func TestBrowseSearch(t *testing.T) {
	t.Parallel()
	viaBoth(t, func(t *testing.T, build func(edition.Repository, http.Handler, ...func(*handler.Server)) http.Handler) {
		h := build(edition.Serve(sample(t)), nil)
		check := apitest.New(t)
		page := func(target string) (*http.Response, string) {
			t.Helper()
			res := check.Do(t, h, get(target, "User-Agent", ""))
			body, _ := io.ReadAll(res.Body)
			return res, string(body)
		}
		for _, tc := range []struct{ catalog, q, lang string }{
			{"weapons/skins", "levels.uuid=C9678D8C-4327-F397-B0EC-DCA3C3D6FB15", ""},
			{"weapons/skins", "contentTierUuid=411e4a55-4e59-7757-41f0-86a53f101bb5", ""},
			{"weapons/skins", "name:ヴァンダル", "ja-JP"},
			{"weapons/skins", "ヴァンダル", "ja-JP"},
			{"weapons", `"<b>" OR vandal OR 'odin'`, ""},
			{"agents", "isPlayableCharacter=false", "pt-BR"},
			{"buddies", "  -name:champions  ", ""},
			{"sprays", "nothing-is-named-this", ""},
		} {
			v := url.Values{"q": {tc.q}}
			if tc.lang != "" {
				v.Set("language", tc.lang)
			}
			v.Set("fields", "uuid")
			_, want := fetchList(t, check, h, "/v1/"+tc.catalog+"?"+v.Encode())
			v.Del("fields")
			target := handler.BrowsePath(catalogNamed(t, tc.catalog)) + "?" + v.Encode()
			res, body := page(target)
			if res.StatusCode != http.StatusOK {
				t.Errorf("GET %s: %d, want 200", target, res.StatusCode)
				continue
			}
			var got []string
			for _, m := range regexp.MustCompile(`<li data-uuid="([^"]+)">`).FindAllStringSubmatch(body, -1) {
				got = append(got, m[1])
			}
			var uuids []string
			for _, it := range want {
				uuids = append(uuids, it["uuid"].(string))
			}
			if strings.Join(got, " ") != strings.Join(uuids, " ") {
				t.Errorf("GET %s lists %d items %.200v; the list route answers %d %.200v", target, len(got), got, len(uuids), uuids)
			}
			if m := searchBoxRE.FindStringSubmatch(body); m == nil || html.UnescapeString(m[1]) != tc.q {
				t.Errorf("GET %s: the search box holds %q, want %q", target, m, tc.q)
			}
			if !strings.Contains(body, `<input type="hidden" name="q" value="`) {
				t.Errorf("GET %s: the language picker does not keep the query", target)
			}
			if strings.Contains(body, "<b>") {
				t.Errorf("GET %s: the query is on the page unescaped", target)
			}
			if !strings.Contains(body, fmt.Sprintf("<strong>%d</strong> of %d", len(uuids), len(sample(t).UUIDs(catalogNamed(t, tc.catalog))))) {
				t.Errorf("GET %s: the page does not say %d of the catalog's items match", target, len(uuids))
			}
			if res := check.Do(t, h, get(target, "User-Agent", "", "If-None-Match", res.Header.Get("ETag"))); res.StatusCode != http.StatusNotModified {
				t.Errorf("GET %s with its ETag: %d, want 304", target, res.StatusCode)
			}
		}

		// A blank query is the catalog's page.
		plain, plainBody := page("/browse/weapons")
		blank, blankBody := page("/browse/weapons?q=+++")
		if blank.StatusCode != http.StatusOK || blank.Header.Get("ETag") != plain.Header.Get("ETag") || blankBody != plainBody {
			t.Errorf("a blank q: %d, ETag %s; want the catalog's page (%s)", blank.StatusCode, blank.Header.Get("ETag"), plain.Header.Get("ETag"))
		}

		for _, tc := range []struct {
			target, q string // q: what the box holds; "": no box (the error page)
			says      string
		}{
			{"/browse/weapons-skins?q=level.uuid%3Dx", "level.uuid=x", `unknown path: no field &#34;level&#34; in a weapon skin`},
			{"/browse/weapons?q=cost%3D%3E%3Cscript%3Ealert(1)%3C%2Fscript%3E", "cost=><script>alert(1)</script>", `Term 1 (&#34;cost=&gt;&lt;script&gt;alert(1)&lt;/script&gt;&#34;, at character 5): bad operator`},
			{"/browse/weapons?q=%22open&language=ko-KR", `"open`, `unclosed quote`},
			{"/browse/weapons?q=" + strings.Repeat("a", 513), "", `at most 512`},
			{"/browse/weapons?q=a&q=b", "", `give it once`},
		} {
			res, body := page(tc.target)
			if res.StatusCode != http.StatusBadRequest || res.Header.Get("Cache-Control") != "no-store" || res.Header.Get("Content-Type") != "text/html; charset=utf-8" {
				t.Errorf("GET %s: %d, %s, %s; want 400, an HTML page, no-store", tc.target, res.StatusCode, res.Header.Get("Content-Type"), res.Header.Get("Cache-Control"))
			}
			if !strings.Contains(body, tc.says) {
				t.Errorf("GET %s: the page does not say %s:\n%.3000s", tc.target, tc.says, body)
			}
			if strings.Contains(body, "<script>") || strings.Contains(body, `<ul class="items"`) {
				t.Errorf("GET %s: the page has the query unescaped, or lists items", tc.target)
			}
			m := searchBoxRE.FindStringSubmatch(body)
			switch {
			case tc.q == "" && m != nil:
				t.Errorf("GET %s: a search box on the error page", tc.target)
			case tc.q != "" && (m == nil || html.UnescapeString(m[1]) != tc.q):
				t.Errorf("GET %s: the search box holds %q, want %q", tc.target, m, tc.q)
			}
		}
	})
}

// catalogNamed is the catalog at /v1/name.
func catalogNamed(t *testing.T, name string) catalog.Category {
	t.Helper()
	c, ok := catalog.CategoryNamed(name)
	if !ok {
		t.Fatalf("no catalog %s", name)
	}
	return c
}
