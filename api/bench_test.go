package api_test

import (
	"net/http"
	"testing"

	"github.com/refdata/refdata/catalog"
)

// sink is a ResponseWriter that allocates nothing, so the figures are the
// router's, middleware's and handler's alone (not net/http's connection code).
type sink struct{ h http.Header }

func (s *sink) Header() http.Header         { return s.h }
func (s *sink) Write(b []byte) (int, error) { return len(b), nil }
func (s *sink) WriteHeader(int)             {}

// BenchmarkRouter measures a whole request through the real handler: CORS,
// recovery, metrics, routing, the generated parameter binding, the User-Agent rule,
// lookup and write; pinned reads the version before the active one.
func BenchmarkRouter(b *testing.B) {
	ed := active(b)
	h := handler(b, served(b), nil)
	skin := ed.UUIDs(catalog.WeaponSkins)[0].String()
	etag := ed.List(catalog.Currencies, catalog.DefaultLocale).ETag()
	for _, bc := range []struct{ name, path, inm string }{
		{"version", "/v1/version", ""},
		{"list", "/v1/currencies", ""},
		{"list-ja", "/v1/weapons?language=ja-JP", ""},
		{"uuid", "/v1/weapons/skins/" + skin, ""},
		{"304", "/v1/currencies", etag},
		{"pinned-ja", "/v1/versions/" + previous(b, served(b)) + "/weapons?language=ja-JP", ""},
		{"level", "/v1/levelborders?level=57", ""},
		{"events-at", "/v1/events?at=2021-12-01T00:00:00Z", ""},
		{"events-active", "/v1/events?active=true", ""},
		{"season-tiers", "/v1/seasons/competitive/" + ed.UUIDs(catalog.CompetitiveSeasons)[0].String() + "/tiers", ""},
	} {
		b.Run(bc.name, func(b *testing.B) {
			req := get(bc.path, "Accept-Encoding", "gzip", "If-None-Match", bc.inm)
			w := &sink{h: http.Header{}}
			b.ReportAllocs()
			for b.Loop() {
				clear(w.h)
				h.ServeHTTP(w, req)
			}
		})
	}
}
