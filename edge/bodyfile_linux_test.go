//go:build linux

package edge

import (
	"bufio"
	"bytes"
	"context"
	"net"
	"net/http"
	"runtime"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/refdata/refdata/api/apitest"
	"github.com/refdata/refdata/catalog"
	"github.com/refdata/refdata/fixtures"
	"github.com/refdata/refdata/representation"
)

// smallSends is a listener whose connections take little into their send
// buffer: a body of some ten kilobytes then stays in the middle of its
// sendfile until the client reads.
type smallSends struct{ net.Listener }

func (l smallSends) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err == nil {
		err = c.(*net.TCPConn).SetWriteBuffer(4096)
	}
	return c, err
}

// TestBodyFileOutlivesItsEdition: a representation sent from the body file
// arrives whole when its edition is swapped out and collected in the middle of
// the answer (the answer holds its range until the last byte is sent), and
// the range is freed once it has been.
func TestBodyFileOutlivesItsEdition(t *testing.T) {
	// Full-size, not trimmed: its lists must be larger than the socket buffers.
	files, err := fixtures.Files(fixtures.Versions()[0], false)
	if err != nil {
		t.Fatal(err)
	}
	old, err := catalog.BuildFiles(files) // this test's own: nothing else holds it
	if err != nil {
		t.Fatal(err)
	}
	representation.CompressAll(old.Bodies()) // the body file takes its gzip of 1 KiB and more (TestMain)
	repo := &swappable{}
	repo.ed.Store(old)
	r := router(t, repo)
	target, req := "", (*http.Request)(nil)
	var want response
	for _, tg := range []string{"/v1/weapons/skins?language=all", "/v1/weapons/skins", "/v1/weapons?language=all"} {
		q := request("GET", tg, "Accept-Encoding", "gzip")
		if res := direct(r, q); res.status == http.StatusOK && len(res.body) > len(want.body) {
			target, req, want = tg, q, res
		}
	}
	if len(want.body) < 64<<10 {
		t.Fatalf("the largest gzip list is %d bytes: too small to stay in the middle of its sendfile", len(want.body))
	}
	apitest.New(t).Do(t, r, req)

	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	es := New(Config{Router: r, Active: repo.Active})
	gatherAll(es)
	go func() { _ = es.Serve(smallSends{ln}) }()
	t.Cleanup(func() { _ = es.Shutdown(context.Background()) })
	h := &harness{es: es, addr: ln.Addr().String()}

	// The client takes little into its receive buffer and reads nothing yet.
	d := net.Dialer{Control: func(_, _ string, c syscall.RawConn) error {
		var serr error
		err := c.Control(func(fd uintptr) { serr = unix.SetsockoptInt(int(fd), unix.SOL_SOCKET, unix.SO_RCVBUF, 4096) })
		if err != nil {
			return err
		}
		return serr
	}}
	conn, err := d.Dial("tcp", h.addr)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if err := req.Write(conn); err != nil {
		t.Fatal(err)
	}
	fd, off := inFlight(t, h, target)
	old = nil

	repo.ed.Store(loadEditions(t)[1])
	es.ActiveChanged()
	for range 5 {
		collect()
	}
	if got := pread(t, fd, off, len(want.body)); !bytes.Equal(got, want.body) {
		t.Fatal("the body file's range was freed while its answer was being sent")
	}
	got := readAnswer(t, bufio.NewReader(conn), req, target)
	same(t, target, got, want)

	// The control: once the answer is sent and nothing names its range, the
	// range is punched out, so the check above can fail.
	h.settle(t)
	for deadline := time.Now().Add(10 * time.Second); !bytes.Equal(pread(t, fd, off, len(want.body)), make([]byte, len(want.body))); {
		if time.Now().After(deadline) {
			t.Fatal("the range still holds the body 10 s after its edition and answer are gone: this test cannot see it freed")
		}
		collect()
	}
}

// inFlight waits until target's answer is stalled in the middle of its
// sendfile, and returns where its body lies in the body file.
func inFlight(t *testing.T, h *harness, target string) (fd int, off int64) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("%s's answer never stalled in its sendfile", target)
		}
		m := h.es.memo.Load()
		m.mu.RLock()
		e := m.entries[target]
		m.mu.RUnlock()
		if e == nil {
			continue
		}
		var ok bool
		if fd, off, ok = e.res.Body.Pick([]string{"gzip"}).InFile(); !ok {
			t.Fatalf("%s's gzip is not in the body file", target)
		}
		open := 0
		h.es.conns.Range(func(any, any) bool { open++; return true })
		if open == 1 && h.es.waitingReads() == 0 {
			time.Sleep(100 * time.Millisecond) // still not done: stalled
			if h.es.waitingReads() == 0 {
				return fd, off
			}
		}
	}
}

func pread(t *testing.T, fd int, off int64, n int) []byte {
	t.Helper()
	b := make([]byte, n)
	if got, err := unix.Pread(fd, b, off); err != nil || got != n {
		t.Fatalf("read %d of %d bytes at %d of the body file: %v", got, n, off, err)
	}
	return b
}

// collect runs the collector and gives the cleanups it queued time to run.
func collect() {
	runtime.GC()
	time.Sleep(10 * time.Millisecond)
}
