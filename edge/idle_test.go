package edge

import (
	"bufio"
	"bytes"
	"fmt"
	"net"
	"runtime"
	"testing"

	"github.com/refdata/refdata/api/apitest"
	"github.com/refdata/refdata/impl"
)

// TestIdleConnectionsHoldNoBuffers: a keep-alive connection waiting for its
// next request keeps none of the buffers its last answer used, so a client's
// pool of idle connections (or a hostile client's thousands) costs little
// memory; and each one still answers its next request. fasthttp keeps a
// connection's 16 KiB read and 64 KiB write buffers for its whole life unless
// told otherwise (ReduceMemoryUsage).
func TestIdleConnectionsHoldNoBuffers(t *testing.T) {
	repo := impl.Static{Edition: newest(t)}
	r := router(t, repo)
	h := start(t, Config{Router: r, Active: repo.Active})
	req := request("GET", "/v1/version")
	apitest.New(t).Do(t, r, req)
	want := direct(r, req)
	var raw bytes.Buffer
	if err := req.Write(&raw); err != nil {
		t.Fatal(err)
	}
	h.do(t, req) // into the memo, as a busy server has it

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
		defer c.Close()
		ask(c, fmt.Sprintf("connection %d, first request", i))
		conns[i] = c
	}
	h.settle(t)
	grown := int64(liveHeap()) - int64(before)
	// Each connection's own state (its socket, drainConn, fasthttp's worker) is
	// well under 4 KiB; the buffers alone were 80 KiB.
	per := grown / n
	t.Logf("%d bytes of heap per idle keep-alive connection", per)
	if per > 8<<10 {
		t.Errorf("each idle keep-alive connection holds %d bytes of heap; want no buffers (under 8 KiB)", per)
	}
	for i, c := range conns {
		ask(c, fmt.Sprintf("connection %d, after idling", i))
	}
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
