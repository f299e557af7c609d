package edge

import (
	"bufio"
	"bytes"
	"fmt"
	"net"
	"runtime"
	"testing"

	"github.com/refdata/refdata/edition"
)

// TestIdleConnectionsHoldNoBuffers: a keep-alive connection waiting for its
// next request keeps none of the buffers its last answer used, so a client's
// pool of idle connections (or a hostile client's thousands) costs little
// memory; and each one still answers its next request. fasthttp keeps a
// connection's 16 KiB read and 64 KiB write buffers for its whole life unless
// told otherwise (ReduceMemoryUsage, New): the control runs the same server
// with it off, to show the measurement sees those buffers when they are held.
//
// Not parallel: it measures the live heap, which other tests' work would
// change under it. What it measures is bytes, not time: each idle connection
// costs about 1.5 KiB with ReduceMemoryUsage and over 80 KiB without, far
// from the 8 KiB and 64 KiB the two cases are held to.
func TestIdleConnectionsHoldNoBuffers(t *testing.T) {
	for _, tc := range []struct {
		name   string
		reduce bool
	}{
		{"as served", true},
		{"control: buffers kept", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			per := idleConnectionHeap(t, func(s *Server) {
				if !s.http.ReduceMemoryUsage {
					t.Fatal("New no longer sets ReduceMemoryUsage")
				}
				s.http.ReduceMemoryUsage = tc.reduce
			})
			t.Logf("%d bytes of heap per idle keep-alive connection", per)
			switch {
			case tc.reduce && per > 8<<10:
				// Each connection's own state (its socket, drainConn,
				// fasthttp's worker) is well under 4 KiB; the buffers alone
				// are 80 KiB.
				t.Errorf("each idle keep-alive connection holds %d bytes of heap; want no buffers (under 8 KiB)", per)
			case !tc.reduce && per < 64<<10:
				t.Errorf("with ReduceMemoryUsage off each idle connection holds only %d bytes of heap: the measurement does not see the buffers, so the case above proves nothing", per)
			}
		})
	}
}

// idleConnectionHeap opens connections to a server configured by opt, has
// each answer a request, and returns the heap each holds once they all wait
// for their next one; each answers again after that.
func idleConnectionHeap(t *testing.T, opt func(*Server)) int64 {
	repo := edition.Serve(newest(t))
	r := testRouter(t, repo)
	h := start(t, Config{Router: r, Active: repo.Active}, opt)
	req := request("GET", "/v1/version")
	want := direct(r, req)
	var raw bytes.Buffer
	if err := req.Write(&raw); err != nil {
		t.Fatal(err)
	}
	h.do(t, req) // into the memo, as a busy server has it
	if !h.memoized("/v1/version") {
		t.Fatal("/v1/version is not in the memo")
	}

	// ask sends the request on c and checks the answer; it keeps no reader, so
	// the client's side of the connection holds nothing either.
	ask := func(c net.Conn, what string) {
		t.Helper()
		if _, err := c.Write(raw.Bytes()); err != nil {
			t.Fatalf("%s: %v", what, err)
		}
		br := bufio.NewReader(c)
		got := readAnswer(t, br, req, what)
		if br.Buffered() != 0 {
			t.Fatalf("%s: %d bytes after the answer", what, br.Buffered())
		}
		check(t, h.c, req, got)
		same(t, what, got, want)
	}

	const n = 64
	before := liveHeap()
	conns := make([]net.Conn, n)
	for i := range conns {
		c, err := net.Dial("tcp", h.addr)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = c.Close() })
		ask(c, fmt.Sprintf("connection %d, first request", i))
		conns[i] = c
	}
	h.settle(t)
	per := (int64(liveHeap()) - int64(before)) / n
	for i, c := range conns {
		ask(c, fmt.Sprintf("connection %d, after idling", i))
	}
	return per
}

// liveHeap is the heap in use after two collections (the second empties the
// pools' victim caches, where released buffers wait).
func liveHeap() uint64 {
	runtime.GC()
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return ms.HeapAlloc
}
