package impl

import (
	"net/url"
	"testing"
)

// TestQueryValueReadsAsParseQuery: the catalog routes read language from the
// raw query as the generated binding does (url.ParseQuery); that they allocate
// nothing for it is TestHandlersDoNotAllocate's part.
func TestQueryValueReadsAsParseQuery(t *testing.T) {
	t.Parallel()
	for _, raw := range []string{
		"", "language=ja-JP", "language=", "language", "x=1&language=de-DE",
		"language=ja-JP;x", "a;b=1&language=fr-FR", "lang%75age=es-ES", "language=pt%2DBR",
		"language=en+US", "language=%zz&language=ko-KR", "&&language=it-IT&", "languages=ja-JP",
	} {
		q, _ := url.ParseQuery(raw)
		if got, want := queryValue(raw, "language"), q.Get("language"); got != want {
			t.Errorf("queryValue(%q) = %q, ParseQuery gives %q", raw, got, want)
		}
	}
}
