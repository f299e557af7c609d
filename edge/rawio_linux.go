//go:build linux

package edge

import (
	"io"
	"net"
	"os"
	"syscall"
	"unsafe"
)

// rawSocket reads and writes a TCP connection's socket with raw system calls
// (syscall.RawSyscall), through the socket's syscall.RawConn so that the
// network poller still parks a read or write that would block, and deadlines
// hold as they do for net.Conn's Read and Write.
//
// Why: a system call made the usual way puts the proc in a syscall state, and
// Go's monitor thread hands a proc that stays there over one of its ticks to
// another thread. On one serving proc every such handoff wakes a second
// thread, often on the client's CPU, and the monitor then polls every 20 µs
// for a while. The socket is non-blocking: a read or write returns at once, with
// EAGAIN when it would block, so the proc has nothing to hand over
// (BENCHMARKS.md § Stop 47).
type rawSocket struct {
	rc   syscall.RawConn
	p    []byte // what the read fills
	iov  [2]syscall.Iovec
	next int // the write's first iovec not yet written
	end  int // the write's iovecs: iov[:end]
	n    int
	err  error // the system call's, if it failed
	// A sendfile's source: the file, where in it the next byte is (the
	// system call moves it) and how many bytes are left to send.
	file int
	off  int64
	left int
	// The functions the RawConn calls, made once: a method value allocates.
	read, writev, sendfile func(fd uintptr) bool
}

// newRawSocket returns nil for a connection that is not a *net.TCPConn
// itself: a listener's wrapper may read or write on its own (a buffer, a
// proxy header, TLS), and that must not be bypassed.
func newRawSocket(c net.Conn) socket {
	tc, ok := c.(*net.TCPConn)
	if !ok {
		return nil
	}
	rc, err := tc.SyscallConn()
	if err != nil {
		return nil
	}
	s := &rawSocket{rc: rc}
	s.read, s.writev, s.sendfile = s.doRead, s.doWritev, s.doSendfile
	return s
}

// Read reads as net.Conn's Read does: io.EOF when the peer has closed.
func (s *rawSocket) Read(b []byte) (int, error) {
	if len(b) == 0 {
		return 0, nil
	}
	s.p, s.n, s.err = b, 0, nil
	err := s.rc.Read(s.read)
	s.p = nil
	switch {
	case err != nil:
		return 0, err
	case s.err != nil:
		return 0, s.err
	case s.n == 0:
		return 0, io.EOF
	}
	return s.n, nil
}

func (s *rawSocket) doRead(fd uintptr) bool {
	for {
		n, _, e := syscall.RawSyscall(syscall.SYS_READ, fd, uintptr(unsafe.Pointer(&s.p[0])), uintptr(len(s.p)))
		switch e {
		case 0:
			s.n = int(n)
			return true
		case syscall.EINTR:
		case syscall.EAGAIN:
			return false
		default:
			s.err = os.NewSyscallError("read", e)
			return true
		}
	}
}

// Write writes all of b, or returns why not: a writev of one iovec, which
// costs the kernel what a write does.
func (s *rawSocket) Write(b []byte) (int, error) {
	n, err := s.Writev(nil, b)
	return int(n), err
}

// Writev writes head and body in one writev, or as many as the socket takes.
func (s *rawSocket) Writev(head, body []byte) (int64, error) {
	s.next, s.end, s.n, s.err = 0, 0, 0, nil
	for _, b := range [2][]byte{head, body} {
		if len(b) > 0 {
			s.iov[s.end].Base = &b[0]
			s.iov[s.end].SetLen(len(b))
			s.end++
		}
	}
	var err error
	if s.end > 0 {
		err = s.rc.Write(s.writev)
	}
	s.iov = [2]syscall.Iovec{} // the body is an edition's: not kept past its answer
	if err == nil {
		err = s.err
	}
	return int64(s.n), err
}

func (s *rawSocket) doWritev(fd uintptr) bool {
	for s.next < s.end {
		r, _, e := syscall.RawSyscall(syscall.SYS_WRITEV, fd, uintptr(unsafe.Pointer(&s.iov[s.next])), uintptr(s.end-s.next))
		k, stop, done := s.wrote(r, e, "writev")
		if stop {
			return done
		}
		n := uintptr(k)
		s.n += k
		for s.next < s.end && n >= uintptr(s.iov[s.next].Len) {
			n -= uintptr(s.iov[s.next].Len)
			s.next++
		}
		if s.next < s.end {
			v := &s.iov[s.next]
			v.Base = (*byte)(unsafe.Add(unsafe.Pointer(v.Base), n))
			v.SetLen(int(v.Len) - int(n))
		}
	}
	return true
}

// Sendfile writes head alone, then n bytes of the file fd from off with
// sendfile, which hands the socket the file's pages rather than copying the
// bytes from memory as a write does. The head leaves first, in a segment of
// its own, as nginx sends a static file: a throwaway that did so lowered the
// ~120 KB lists' p99 to 0.71–0.90× nginx's (BENCHMARKS.md § Stop 49).
func (s *rawSocket) Sendfile(head []byte, fd int, off int64, n int) (int64, error) {
	written, err := s.Writev(head, nil)
	if err != nil || n <= 0 {
		return written, err
	}
	s.file, s.off, s.left, s.n, s.err = fd, off, n, 0, nil
	err = s.rc.Write(s.sendfile)
	if err == nil {
		err = s.err
	}
	return written + int64(s.n), err
}

func (s *rawSocket) doSendfile(fd uintptr) bool {
	for s.left > 0 {
		r, _, e := syscall.RawSyscall6(syscall.SYS_SENDFILE, fd, uintptr(s.file), uintptr(unsafe.Pointer(&s.off)), uintptr(s.left), 0, 0)
		k, stop, done := s.wrote(r, e, "sendfile")
		if stop {
			return done
		}
		s.n += k
		s.left -= k
	}
	return true
}

// wrote sorts out a writev's or a sendfile's result: the bytes it wrote (0
// after EINTR: the caller tries again), or stop, with what the RawConn's
// function returns (done false: wait until the socket takes more). A call
// that wrote nothing stops with io.ErrUnexpectedEOF, as net.Conn's Write
// does, rather than spin on a socket that takes nothing or a file that ends
// before the body does.
func (s *rawSocket) wrote(r uintptr, e syscall.Errno, call string) (n int, stop, done bool) {
	switch e {
	case 0:
		if r == 0 {
			s.err = io.ErrUnexpectedEOF
			return 0, true, true
		}
		return int(r), false, false
	case syscall.EINTR:
		return 0, false, false
	case syscall.EAGAIN:
		return 0, true, false
	}
	s.err = os.NewSyscallError(call, e)
	return 0, true, true
}
