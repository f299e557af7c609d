//go:build linux

package edge

import (
	"bytes"
	"errors"
	"io"
	"net"
	"os"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// smallSendBuffer makes the socket take a large write in several pieces, so
// that the write meets EAGAIN and waits for the poller.
func smallSendBuffer(t *testing.T, c net.Conn) {
	t.Helper()
	if err := c.(*net.TCPConn).SetWriteBuffer(4096); err != nil {
		t.Fatal(err)
	}
}

// pattern is n bytes that differ at every offset a misplaced resume could
// land on.
func pattern(n int, seed byte) []byte {
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(i*131) ^ byte(i>>8) ^ seed
	}
	return b
}

// readAll reads from c, slowly at first, so the writer fills its socket.
func readAll(c net.Conn, n int, got chan<- []byte) {
	time.Sleep(50 * time.Millisecond)
	b := make([]byte, n)
	_, err := io.ReadFull(c, b)
	if err != nil {
		b = nil
	}
	got <- b
}

func TestRawSocketWrites(t *testing.T) {
	const big = 4 << 20 // far more than a loopback socket buffers
	tests := []struct {
		name       string
		head, body []byte
		writev     bool
	}{
		{"a small write", nil, pattern(300, 1), false},
		{"a write larger than the socket takes", nil, pattern(big, 2), false},
		{"a writev of head and body", pattern(418, 3), pattern(121058, 4), true},
		{"a writev larger than the socket takes, resumed inside the head's iovec and the body's", pattern(70000, 5), pattern(big, 6), true},
		{"a writev with no head", nil, pattern(big, 7), true},
		{"a writev with no body", pattern(5000, 8), nil, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			server, client := tcpPair(t)
			smallSendBuffer(t, server)
			s, ok := newSocket(server).(*rawSocket)
			if !ok {
				t.Fatal("no raw socket for a TCP connection")
			}
			want := append(append([]byte{}, tt.head...), tt.body...)
			got := make(chan []byte, 1)
			go readAll(client, len(want), got)
			var n int64
			var err error
			if tt.writev {
				n, err = s.Writev(tt.head, tt.body)
			} else {
				var k int
				k, err = s.Write(tt.body)
				n = int64(k)
			}
			if err != nil || n != int64(len(want)) {
				t.Fatalf("wrote %d of %d bytes: %v", n, len(want), err)
			}
			if b := <-got; !bytes.Equal(b, want) {
				t.Fatalf("the reader got %d bytes that differ from the %d written", len(b), len(want))
			}
			if s.iov != [2]syscall.Iovec{} || s.p != nil {
				t.Error("the socket still refers to the bytes it wrote")
			}
		})
	}
}

func TestRawSocketReads(t *testing.T) {
	server, client := tcpPair(t)
	s := newSocket(server).(*rawSocket)
	msg := []byte("GET /v1/version HTTP/1.1\r\nHost: x\r\n\r\n")
	if _, err := client.Write(msg); err != nil {
		t.Fatal(err)
	}
	b := make([]byte, 4096)
	n, err := s.Read(b)
	if err != nil || !bytes.Equal(b[:n], msg) {
		t.Fatalf("read %q, %v; want %q", b[:n], err, msg)
	}
	if n, err := s.Read(nil); n != 0 || err != nil {
		t.Fatalf("an empty read: %d, %v", n, err)
	}

	// A read with nothing to read waits for the poller, and its deadline holds.
	if err := server.SetReadDeadline(time.Now().Add(50 * time.Millisecond)); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Read(b); !errors.Is(err, os.ErrDeadlineExceeded) {
		t.Fatalf("a read past its deadline: %v, want a deadline error", err)
	}
	if err := server.SetReadDeadline(time.Time{}); err != nil {
		t.Fatal(err)
	}

	// A read that waits gets what arrives later.
	go func() {
		time.Sleep(20 * time.Millisecond)
		_, _ = client.Write([]byte("later"))
	}()
	if n, err := s.Read(b); err != nil || string(b[:n]) != "later" {
		t.Fatalf("read %q, %v; want \"later\"", b[:n], err)
	}

	// The peer's close is io.EOF, as net.Conn's Read says.
	client.Close()
	if _, err := s.Read(b); err != io.EOF {
		t.Fatalf("a read after the peer closed: %v, want io.EOF", err)
	}
}

func TestRawSocketErrors(t *testing.T) {
	t.Run("a closed connection", func(t *testing.T) {
		server, _ := tcpPair(t)
		s := newSocket(server).(*rawSocket)
		server.Close()
		if _, err := s.Read(make([]byte, 10)); !errors.Is(err, net.ErrClosed) {
			t.Errorf("read: %v, want net.ErrClosed", err)
		}
		if _, err := s.Write([]byte("x")); !errors.Is(err, net.ErrClosed) {
			t.Errorf("write: %v, want net.ErrClosed", err)
		}
		if _, err := s.Writev([]byte("x"), []byte("y")); !errors.Is(err, net.ErrClosed) {
			t.Errorf("writev: %v, want net.ErrClosed", err)
		}
	})
	t.Run("a peer that reset the connection", func(t *testing.T) {
		server, client := tcpPair(t)
		s := newSocket(server).(*rawSocket)
		if err := client.(*net.TCPConn).SetLinger(0); err != nil {
			t.Fatal(err)
		}
		client.Close() // RST
		time.Sleep(20 * time.Millisecond)
		var err error
		for range 10 { // the first write may still be taken by the socket
			if _, err = s.Write(pattern(1000, 9)); err != nil {
				break
			}
		}
		var errno syscall.Errno
		if !errors.As(err, &errno) || (errno != syscall.ECONNRESET && errno != syscall.EPIPE) {
			t.Errorf("writes to a reset connection: %v, want ECONNRESET or EPIPE", err)
		}
	})
	t.Run("a write deadline", func(t *testing.T) {
		server, _ := tcpPair(t) // the client never reads
		smallSendBuffer(t, server)
		s := newSocket(server).(*rawSocket)
		if err := server.SetWriteDeadline(time.Now().Add(100 * time.Millisecond)); err != nil {
			t.Fatal(err)
		}
		n, err := s.Writev(nil, pattern(16<<20, 10))
		if !errors.Is(err, os.ErrDeadlineExceeded) || n >= 16<<20 {
			t.Errorf("a writev the peer does not read: %d bytes, %v; want a deadline error", n, err)
		}
	})
	t.Run("not a *net.TCPConn itself", func(t *testing.T) {
		a, b := net.Pipe()
		defer a.Close()
		defer b.Close()
		server, _ := tcpPair(t)
		for name, c := range map[string]net.Conn{"net.Pipe": a, "a wrapped TCP connection": wrapped{server.(*net.TCPConn)}} {
			if _, ok := newSocket(c).(*netSocket); !ok {
				t.Errorf("%s: not read and written through net.Conn", name)
			}
		}
	})
}

// wrapped is a listener's connection that does its own reading: it still
// has the socket's SyscallConn.
type wrapped struct{ *net.TCPConn }

func (w wrapped) Read(b []byte) (int, error) { return w.TCPConn.Read(b) }

// An answer's read and write allocate nothing (the memo's answers do not).
func TestRawSocketDoesNotAllocate(t *testing.T) {
	server, client := tcpPair(t)
	s := newSocket(server).(*rawSocket)
	req, body := []byte("ping"), pattern(2000, 11)
	rb, cb := make([]byte, 64), make([]byte, 2000+418)
	head := pattern(418, 12)
	allocs := testing.AllocsPerRun(100, func() {
		if _, err := client.Write(req); err != nil {
			t.Fatal(err)
		}
		if _, err := s.Read(rb); err != nil {
			t.Fatal(err)
		}
		if _, err := s.Writev(head, body); err != nil {
			t.Fatal(err)
		}
		if _, err := io.ReadFull(client, cb); err != nil {
			t.Fatal(err)
		}
	})
	if allocs != 0 {
		t.Errorf("%.1f allocations per answer, want 0", allocs)
	}
}

// memFile is a memory file holding b at off, as the body file holds a
// representation.
func memFile(t *testing.T, b []byte, off int64) int {
	t.Helper()
	fd, err := unix.MemfdCreate("test", unix.MFD_CLOEXEC)
	if err != nil {
		t.Skipf("no memory files: %v", err)
	}
	t.Cleanup(func() { _ = unix.Close(fd) })
	if n, err := unix.Pwrite(fd, b, off); err != nil || n != len(b) {
		t.Fatalf("wrote %d of %d bytes: %v", n, len(b), err)
	}
	return fd
}

func TestRawSocketSendfile(t *testing.T) {
	const big = 1 << 20 // far more than a socket of smallSendBuffer buffers
	tests := []struct {
		name       string
		head, body []byte
		off        int64
	}{
		{"a head and a body the socket takes at once", pattern(418, 13), pattern(121058, 14), 0},
		{"a body larger than the socket takes, from inside the file", pattern(418, 15), pattern(big, 16), 3 << 12},
		{"a head larger than the socket takes", pattern(big, 17), pattern(70000, 18), 4096},
		{"no head", nil, pattern(big, 19), 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			server, client := tcpPair(t)
			smallSendBuffer(t, server)
			s := newSocket(server).(*rawSocket)
			fd := memFile(t, tt.body, tt.off)
			want := append(append([]byte{}, tt.head...), tt.body...)
			got := make(chan []byte, 1)
			go readAll(client, len(want), got)
			n, err := s.Sendfile(tt.head, fd, tt.off, len(tt.body))
			if err != nil || n != int64(len(want)) {
				t.Fatalf("sent %d of %d bytes: %v", n, len(want), err)
			}
			if b := <-got; !bytes.Equal(b, want) {
				t.Fatalf("the reader got %d bytes that differ from the %d sent", len(b), len(want))
			}
		})
	}
	t.Run("a file shorter than the body", func(t *testing.T) {
		server, client := tcpPair(t)
		s := newSocket(server).(*rawSocket)
		fd := memFile(t, pattern(1000, 20), 0)
		go func() { _, _ = io.Copy(io.Discard, client) }()
		n, err := s.Sendfile([]byte("head"), fd, 0, 5000)
		if !errors.Is(err, io.ErrUnexpectedEOF) || n != 1004 {
			t.Errorf("sent %d bytes: %v; want 1004 and io.ErrUnexpectedEOF", n, err)
		}
	})
	t.Run("a closed connection", func(t *testing.T) {
		server, _ := tcpPair(t)
		s := newSocket(server).(*rawSocket)
		fd := memFile(t, pattern(1000, 21), 0)
		server.Close()
		if _, err := s.Sendfile(nil, fd, 0, 1000); !errors.Is(err, net.ErrClosed) {
			t.Errorf("sendfile: %v, want net.ErrClosed", err)
		}
	})
	t.Run("a write deadline", func(t *testing.T) {
		server, _ := tcpPair(t) // the client never reads
		smallSendBuffer(t, server)
		s := newSocket(server).(*rawSocket)
		fd := memFile(t, pattern(16<<20, 22), 0)
		if err := server.SetWriteDeadline(time.Now().Add(100 * time.Millisecond)); err != nil {
			t.Fatal(err)
		}
		n, err := s.Sendfile(nil, fd, 0, 16<<20)
		if !errors.Is(err, os.ErrDeadlineExceeded) || n >= 16<<20 {
			t.Errorf("a sendfile the peer does not read: %d bytes, %v; want a deadline error", n, err)
		}
	})
}
