package api_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/refdata/refdata/api/apitest"
	"github.com/refdata/refdata/catalog"
	"github.com/refdata/refdata/impl"
	"github.com/refdata/refdata/pages"
)

// TestPagesHeaders: every page is HTML in UTF-8 with its CSP and nosniff, needs
// no User-Agent, and names the served version; the changelog names its locale.
func TestPagesHeaders(t *testing.T) {
	t.Parallel()
	check := apitest.New(t)
	r := served(t)
	older, newer := previous(t, r), r.Active().ManifestID
	h := handler(t, r, nil)
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
			"Content-Security-Policy": impl.PageCSP,
			"X-Content-Type-Options":  "nosniff",
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
	h := handler(t, served(t), nil)
	rec := newRecorder(h, get(pages.RedocPath, "User-Agent", "", "Accept-Encoding", "br"))
	if rec.Code != http.StatusOK || rec.Header().Get("Content-Encoding") != "br" || !strings.HasPrefix(rec.Header().Get("Content-Type"), "text/javascript") {
		t.Fatalf("%d, Content-Type %q, Content-Encoding %q", rec.Code, rec.Header().Get("Content-Type"), rec.Header().Get("Content-Encoding"))
	}
	etag := rec.Header().Get("ETag")
	if rec := newRecorder(h, get(pages.RedocPath, "If-None-Match", etag, "Accept-Encoding", "br")); rec.Code != http.StatusNotModified {
		t.Errorf("If-None-Match: %d, want 304", rec.Code)
	}
}
