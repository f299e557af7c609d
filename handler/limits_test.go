package handler

import (
	"net/url"
	"testing"
)

// TestQueryLookupReadsAsParseQuery: the limits check reads a parameter from
// the raw query as the generated binding does (url.ParseQuery), so it checks
// the value the handler gets.
func TestQueryLookupReadsAsParseQuery(t *testing.T) {
	t.Parallel()
	for _, raw := range []string{
		"", "language=ja-JP", "language=", "language", "x=1&language=de-DE",
		"language=ja-JP;x", "a;b=1&language=fr-FR", "lang%75age=es-ES", "language=pt%2DBR",
		"language=en+US", "language=%zz&language=ko-KR", "&&language=it-IT&", "languages=ja-JP",
	} {
		q, _ := url.ParseQuery(raw)
		got, has := queryLookup(raw, "language")
		if want := q.Get("language"); got != want || has != q.Has("language") {
			t.Errorf("queryLookup(%q) = %q, %v; ParseQuery gives %q, %v", raw, got, has, want, q.Has("language"))
		}
	}
}
