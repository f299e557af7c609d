// Command standin serves snapshot directories as an upstream in the public
// API's shape (upstream/upstreamtest, what the sync tests run against), for
// measuring refdata sync by hand (BENCHMARKS.md): every catalog in every
// locale its own answer, /v1/version, /v1/locres/{locale}. The first
// directory is published; SIGHUP publishes the next one.
//
//	go run ./tools/standin -addr 127.0.0.1:18400 /tmp/s4-14 /tmp/s4-15
//	go run ./tools/standin -addr 127.0.0.1:18400 -media-url https://media.example.invalid/ fixtures/versions/15_*
//
// -media-url rewrites the catalogs' media URLs (https://media.valorant-api.com/…)
// to another root, e.g. a host that does not resolve (sync --media --media-host).
package main

import (
	"bytes"
	"flag"
	"log"
	"net/http"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/refdata/refdata/upstream/upstreamtest"
)

func main() {
	addr := flag.String("addr", "127.0.0.1:18400", "address to listen on")
	mediaURL := flag.String("media-url", "", "root to point the catalogs' media URLs to instead of "+upstreamtest.PublicMediaHost)
	all := flag.Bool("advertise-all", false, "advertise ?language=all in /openapi.json (sync then asks one answer per catalog)")
	flag.Parse()
	if flag.NArg() == 0 {
		log.Fatal("usage: standin [-addr HOST:PORT] [-media-url URL] SNAPSHOT_DIR…")
	}
	vs, err := upstreamtest.FromSnapshotDirs(flag.Args())
	if err != nil {
		log.Fatal(err)
	}
	if *mediaURL != "" {
		for _, v := range vs {
			for _, bodies := range v.Catalogs {
				for lang, b := range bodies {
					bodies[lang] = bytes.ReplaceAll(b, []byte(upstreamtest.PublicMediaHost), []byte(*mediaURL))
				}
			}
		}
	}
	up := upstreamtest.New(vs...)
	up.AdvertiseAll.Store(*all)
	hup := make(chan os.Signal, 1)
	signal.Notify(hup, syscall.SIGHUP)
	go func() {
		for i := 1; ; i++ {
			<-hup
			up.Publish(i % len(vs))
			log.Printf("publishing %s", vs[i%len(vs)].Name)
		}
	}()
	log.Printf("serving %s on http://%s", vs[0].Name, *addr)
	hs := &http.Server{Addr: *addr, Handler: up, ReadHeaderTimeout: 10 * time.Second}
	log.Fatal(hs.ListenAndServe())
}
