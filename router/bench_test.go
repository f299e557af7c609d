package router_test

import (
	"bytes"
	"context"
	"fmt"
	"image"
	"image/color"
	"image/png"
	"io"
	"log/slog"
	"math"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/refdata/refdata/catalog"
	"github.com/refdata/refdata/edge"
	"github.com/refdata/refdata/handler"
	"github.com/refdata/refdata/replica"
	"github.com/refdata/refdata/router"
	"github.com/refdata/refdata/store"
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
	h := testRouter(b, served(b), nil)
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

// BenchmarkAbortedRecolors: 150 clients each ask for a 1024×1024 logo
// recolored in colors of its own and close their connection at once, on the
// edge as served; cpu-s is the server's CPU from the closes until every one of
// the 150 requests has ended (the process's rusage; the clients only close).
// "one client": all from one address (MaxRecolorsPerClient); "150 clients":
// as if from 150 addresses, so only the recolorings' own stop bounds it.
// recolor-s is one recoloring that runs to its end.
func BenchmarkAbortedRecolors(b *testing.B) {
	base := rings(1024)
	repo := served(b)
	logo, ok := catalog.UUID{}, false
	for _, u := range repo.Active().UUIDs(catalog.PremierLogos) {
		if icon, _ := repo.Active().LogoImage(u); strings.HasSuffix(icon, ".png") {
			logo, ok = u, true
			break
		}
	}
	if !ok {
		b.Fatal("no premier logo with an image in the sample")
	}
	target := "/v1/premier/logos/" + logo.String() + "/image?primary="
	for _, bc := range []struct {
		name      string
		perClient int
	}{{"one client", 0}, {"150 clients", 150}} {
		b.Run(bc.name, func(b *testing.B) {
			reg := prometheus.NewRegistry()
			srv := &handler.Server{Repo: repo, Media: &fakeMedia{every: base}, MaxRecolorsPerClient: bc.perClient}
			router, err := router.New(srv, slog.New(slog.DiscardHandler), router.NewHTTPMetrics(reg))
			if err != nil {
				b.Fatal(err)
			}
			ln, err := net.Listen("tcp", "127.0.0.1:0")
			if err != nil {
				b.Fatal(err)
			}
			es := edge.New(edge.Config{Router: router, Active: repo.Active})
			go func() { _ = es.Serve(ln) }()
			b.Cleanup(func() { _ = es.Shutdown(context.Background()) })
			request := func(k int) string {
				color := fmt.Sprintf("(R=%.6f,G=%.6f,B=0,A=1)", float64(k%256)/255, float64(k/256%256)/255)
				return "GET " + target + url.QueryEscape(color) + " HTTP/1.1\r\nHost: x\r\nUser-Agent: " + ua + "\r\n\r\n"
			}
			// One recoloring to its end: what each of the 150 would cost.
			start := time.Now()
			req, _ := http.NewRequest(http.MethodGet, "http://"+ln.Addr().String()+strings.Fields(request(1<<16 - 1))[1], nil)
			req.Header.Set("User-Agent", ua)
			res, err := http.DefaultClient.Do(req)
			if err != nil || res.StatusCode != http.StatusOK {
				b.Fatalf("a recoloring: %v %v", res, err)
			}
			res.Body.Close()
			one := time.Since(start)
			ended := observed(b, reg)
			var cpu time.Duration
			for i := 0; b.Loop(); i++ {
				conns := make([]net.Conn, 150)
				for j := range conns {
					if conns[j], err = net.Dial("tcp", ln.Addr().String()); err != nil {
						b.Fatal(err)
					}
					if _, err := io.WriteString(conns[j], request(i*150+j)); err != nil {
						b.Fatal(err)
					}
				}
				for _, c := range conns {
					c.Close()
				}
				before := cpuTime()
				for ended += 150; observed(b, reg) < ended; {
					time.Sleep(time.Millisecond)
				}
				cpu += cpuTime() - before
			}
			b.ReportMetric(cpu.Seconds()/float64(b.N), "cpu-s")
			b.ReportMetric(one.Seconds(), "recolor-s")
		})
	}
}

// observed is how many logo image requests the router has ended.
func observed(b *testing.B, reg *prometheus.Registry) int {
	mfs, err := reg.Gather()
	if err != nil {
		b.Fatal(err)
	}
	n := 0
	for _, mf := range mfs {
		if mf.GetName() != "refdata_http_request_duration_seconds" {
			continue
		}
		for _, m := range mf.GetMetric() {
			for _, l := range m.GetLabel() {
				if l.GetName() == "route" && l.GetValue() == "/v1/premier/logos/{uuid}/image" {
					n += int(m.GetHistogram().GetSampleCount())
				}
			}
		}
	}
	return n
}

// cpuTime is the process's CPU time, user and system.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// rings is a size×size logo of soft-edged red, green, blue and black rings.
func rings(size int) []byte {
	img := image.NewNRGBA(image.Rect(0, 0, size, size))
	markers := [4]color.NRGBA{{255, 0, 0, 255}, {0, 255, 0, 255}, {0, 0, 255, 255}, {0, 0, 0, 255}}
	c := float64(size) / 2
	for y := range size {
		for x := range size {
			d := math.Hypot(float64(x)+0.5-c, float64(y)+0.5-c) / 24
			ring, frac := int(d)%4, d-math.Floor(d)
			px := markers[ring]
			px.A = uint8(255 * min(1, 4*min(frac, 1-frac)+0.25))
			img.SetNRGBA(x, y, px)
		}
	}
	var buf bytes.Buffer
	_ = png.Encode(&buf, img)
	return buf.Bytes()
}

// BenchmarkQuery answers queries over a store of the public API's size (4×
// the sample in 18 locales: go run ./tools/synth18 -scale 4 …, imported with
// refdata import), named by REFDATA_BENCH_STORE; without it, it skips. Each
// request goes through the router with Accept-Encoding gzip, br:
//   - memo: the answer is kept (the second request on) — a look-up.
//   - cold: no answer is kept (QueryMemoBytes 1), so each request evaluates
//     the query and makes the answer, compressed; the decoded table and the
//     split list it reads are kept, as on a server that has answered any
//     query over that list.
//   - first: nothing of queries is kept (QueryCacheBytes 1 too): each request
//     also decodes the language=all list into a table and splits the
//     locale's list; the replica's body cache keeps the list bodies it may
//     (under an eighth of it: the locale's, not language=all's).
//
// answer-B, gzip-B and br-B are the answer's bytes in each encoding.
func BenchmarkQuery(b *testing.B) {
	dir := os.Getenv("REFDATA_BENCH_STORE")
	if dir == "" {
		b.Skip("REFDATA_BENCH_STORE names no store of the 4×, 18-locale data (BENCHMARKS.md)")
	}
	st, err := store.Open(dir)
	if err != nil {
		b.Fatal(err)
	}
	repo, err := replica.Open(st, slog.New(slog.DiscardHandler), nil, nil)
	if err != nil {
		b.Fatal(err)
	}
	targets := []struct{ name, target string }{
		{"word", "/v1/weapons/skins?q=odin"},
		{"chromas", "/v1/weapons/skins?q=chromas.displayName:red"},
		{"chromas-ja", "/v1/weapons/skins?q=chromas.displayName:red&language=ja-JP"},
		{"half", "/v1/weapons/skins?q=-contentTierUuid=null+levels.levelItem=null"},
		{"fields", "/v1/weapons/skins?q=name:prime&fields=uuid,displayName,chromas.uuid"},
	}
	for _, mode := range []struct {
		name       string
		cache, mem int64
	}{{"memo", 0, 0}, {"cold", 0, 1}, {"first", 1, 1}} {
		h, err := router.New(&handler.Server{Repo: repo, QueryCacheBytes: mode.cache, QueryMemoBytes: mode.mem}, slog.New(slog.DiscardHandler), nil)
		if err != nil {
			b.Fatal(err)
		}
		for _, tc := range targets {
			b.Run(mode.name+"/"+tc.name, func(b *testing.B) {
				rec := httptest.NewRecorder()
				h.ServeHTTP(rec, get(tc.target))
				if rec.Code != http.StatusOK {
					b.Fatalf("GET %s: %d %s", tc.target, rec.Code, rec.Body.Bytes())
				}
				req := get(tc.target, "Accept-Encoding", "gzip, br")
				w := &sink{h: http.Header{}}
				for b.Loop() {
					clear(w.h)
					h.ServeHTTP(w, req)
				}
				b.ReportMetric(float64(rec.Body.Len()), "answer-B")
				for _, enc := range []string{"gzip", "br"} {
					rec := httptest.NewRecorder()
					h.ServeHTTP(rec, get(tc.target, "Accept-Encoding", enc))
					b.ReportMetric(float64(rec.Body.Len()), enc+"-B")
				}
			})
		}
	}
}
