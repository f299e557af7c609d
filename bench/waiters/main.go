// Command waiters measures change push on a running server (BENCHMARKS.md):
// it holds -n requests on /v1/version?wait= with the active version's ETag
// and one /v1/version/stream, reports the server's RSS growth (-pid) and the
// p99 of -load meanwhile, runs -activate, and reports how long after the
// command exited the last waiter and the stream got the new version.
package main

import (
	"bufio"
	"bytes"
	"flag"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"os"
	"os/exec"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

const ua = "bench-waiters/1.0 (+http://localhost)"

func main() {
	addr := flag.String("addr", "127.0.0.1:18130", "the server")
	n := flag.Int("n", 10000, "waiting requests to hold")
	wait := flag.String("wait", "120s", "their wait")
	pid := flag.Int("pid", 0, "the server's process, for its RSS")
	load := flag.String("load", "/v1/weapons", "a route loaded before and while the requests are held, for its p99")
	activate := flag.String("activate", "", "the command that activates another version (run with sh -c)")
	flag.Parse()

	res, err := get(*addr, "/v1/version")
	if err != nil {
		log.Fatal(err)
	}
	_, _ = io.Copy(io.Discard, res.Body)
	res.Body.Close()
	etag, from := res.Header.Get("ETag"), res.Header.Get("X-Data-Version")
	fmt.Printf("serving %s; RSS %s\n", from, rss(*pid))
	fmt.Printf("load on %s at rest: %s\n", *load, measure(*addr, *load, 5*time.Second))
	before := rssKB(*pid)

	// The stream: its first event is the active version's.
	stream, err := net.Dial("tcp", *addr)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Fprintf(stream, "GET /v1/version/stream HTTP/1.1\r\nHost: bench\r\nUser-Agent: %s\r\nLast-Event-ID: %s\r\n\r\n", ua, from)
	streamed := make(chan time.Time, 1)
	go func() {
		sc := bufio.NewScanner(stream)
		for sc.Scan() {
			if strings.HasPrefix(sc.Text(), "id: ") && sc.Text() != "id: "+from {
				streamed <- time.Now()
				return
			}
		}
	}()

	var answered, ok atomic.Int64
	arrivals := make([]time.Time, *n)
	var wg sync.WaitGroup
	dial := make(chan struct{}, 100) // connections opened at once, so the accept queue keeps up
	start := time.Now()
	for i := range *n {
		dial <- struct{}{}
		wg.Add(1)
		go func() {
			defer wg.Done()
			c, err := net.Dial("tcp", *addr)
			<-dial
			if err != nil {
				log.Printf("dial: %v", err)
				return
			}
			defer c.Close()
			fmt.Fprintf(c, "GET /v1/version?wait=%s HTTP/1.1\r\nHost: bench\r\nUser-Agent: %s\r\nAccept-Encoding: gzip\r\nIf-None-Match: %s\r\n\r\n", *wait, ua, etag)
			res, err := http.ReadResponse(bufio.NewReader(c), nil)
			if err != nil {
				log.Printf("read: %v", err)
				return
			}
			_, _ = io.Copy(io.Discard, res.Body)
			arrivals[i] = time.Now()
			answered.Add(1)
			if res.StatusCode == http.StatusOK && res.Header.Get("X-Data-Version") != from {
				ok.Add(1)
			}
		}()
	}
	for held(*addr) < *n {
		time.Sleep(100 * time.Millisecond)
	}
	fmt.Printf("%d held after %.1f s (%d answered early); RSS %s, +%.0f MB\n", *n, time.Since(start).Seconds(), answered.Load(), rss(*pid), float64(rssKB(*pid)-before)/1024)
	fmt.Printf("load on %s with them held: %s\n", *load, measure(*addr, *load, 5*time.Second))
	if *activate == "" {
		return
	}
	cpu0 := cpuMS(*pid)
	cmd := exec.Command("sh", "-c", *activate)
	cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
	if err := cmd.Run(); err != nil {
		log.Fatalf("activate: %v", err)
	}
	exited := time.Now()
	fmt.Printf("the command exited at %s\n", exited.UTC().Format("15:04:05.000"))
	wg.Wait()
	last := slices.MaxFunc(arrivals, func(a, b time.Time) int { return a.Compare(b) })
	fmt.Printf("after the activation: %d/%d answered 200 with the new version, the last %.0f ms after the command exited; server CPU meanwhile %d ms\n", ok.Load(), *n, last.Sub(exited).Seconds()*1000, cpuMS(*pid)-cpu0)
	select {
	case at := <-streamed:
		fmt.Printf("stream event %.0f ms after the command exited (%s)\n", at.Sub(exited).Seconds()*1000, at.UTC().Format("15:04:05.000"))
	case <-time.After(10 * time.Second):
		fmt.Println("no stream event within 10 s")
	}
}

func get(addr, path string) (*http.Response, error) {
	req, _ := http.NewRequest("GET", "http://"+addr+path, nil)
	req.Header.Set("User-Agent", ua)
	return http.DefaultClient.Do(req)
}

// held reads refdata_held_requests.
func held(addr string) int {
	res, err := get(addr, "/v1/metrics")
	if err != nil {
		return 0
	}
	defer res.Body.Close()
	sc := bufio.NewScanner(res.Body)
	for sc.Scan() {
		var v float64
		if _, err := fmt.Sscanf(sc.Text(), "refdata_held_requests %g", &v); err == nil {
			return int(v)
		}
	}
	return 0
}

// measure loads path from 4 keep-alive connections, one request at a time
// each, for d, and reports the latency percentiles.
func measure(addr, path string, d time.Duration) string {
	var mu sync.Mutex
	var lat []time.Duration
	var wg sync.WaitGroup
	end := time.Now().Add(d)
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 4, DisableCompression: true}}
	for range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for time.Now().Before(end) {
				req, _ := http.NewRequest("GET", "http://"+addr+path, nil)
				req.Header.Set("User-Agent", ua)
				req.Header.Set("Accept-Encoding", "gzip")
				t0 := time.Now()
				res, err := client.Do(req)
				if err != nil {
					log.Fatal(err)
				}
				_, _ = io.Copy(io.Discard, res.Body)
				res.Body.Close()
				mu.Lock()
				lat = append(lat, time.Since(t0))
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	slices.Sort(lat)
	at := func(q float64) float64 { return lat[int(q*float64(len(lat)-1))].Seconds() * 1000 }
	return fmt.Sprintf("%d requests, p50 %.2f ms, p99 %.2f ms", len(lat), at(0.5), at(0.99))
}

func rssKB(pid int) int {
	if pid == 0 {
		return 0
	}
	b, _ := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	for _, line := range strings.Split(string(b), "\n") {
		var kb int
		if _, err := fmt.Sscanf(line, "VmRSS: %d kB", &kb); err == nil {
			return kb
		}
	}
	return 0
}

// cpuMS is the CPU time the process has used, in ms (clock ticks of 10 ms).
func cpuMS(pid int) int {
	b, _ := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	f := strings.Fields(string(b[bytes.LastIndexByte(b, ')')+1:]))
	var u, s int
	if len(f) > 12 {
		fmt.Sscan(f[11], &u)
		fmt.Sscan(f[12], &s)
	}
	return (u + s) * 10
}

func rss(pid int) string { return fmt.Sprintf("%.0f MB", float64(rssKB(pid))/1024) }
