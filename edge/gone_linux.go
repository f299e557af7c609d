package edge

import (
	"net"
	"sync"
	"syscall"
)

// clientGone tells the edge when the client of a request it holds has left,
// as net/http's background read tells its handlers (their context ends). The
// connection's goroutine is in the handler, so nothing reads the socket; and
// reading it here would take bytes fasthttp needs (a pipelined request). So
// the held connections are in one epoll set of their own, asked for the peer's
// FIN (EPOLLRDHUP) and for a reset (EPOLLHUP, EPOLLERR, always reported) but
// not for data (EPOLLIN): nothing is read, and a pipelined request neither
// wakes the set nor ends the hold. One goroutine waits on the set for every
// held request of the process, where a goroutine per request (a blocking
// peek) would add its stack to each of the 10,000 holds BENCHMARKS.md counts.
// A client that only half-closes (shutdown(SHUT_WR)) counts as gone, as it
// does for net/http.
type clientGone struct {
	once  sync.Once
	epfd  int
	err   error
	mu    sync.Mutex
	next  uint64
	calls map[uint64]func() // by registration, not fd: an fd number is reused
}

var gone clientGone

func (g *clientGone) start() {
	g.epfd, g.err = syscall.EpollCreate1(syscall.EPOLL_CLOEXEC)
	if g.err == nil {
		g.calls = map[uint64]func(){}
		go g.wait()
	}
}

func (g *clientGone) wait() {
	var evs [128]syscall.EpollEvent
	for {
		n, err := syscall.EpollWait(g.epfd, evs[:], -1)
		if err == syscall.EINTR {
			continue
		}
		if err != nil { // not expected of a set that is never closed: holds last their wait
			g.mu.Lock()
			g.err = err
			g.mu.Unlock()
			return
		}
		for _, ev := range evs[:n] {
			id := uint64(uint32(ev.Fd)) | uint64(uint32(ev.Pad))<<32
			g.mu.Lock()
			f := g.calls[id]
			delete(g.calls, id)
			g.mu.Unlock()
			if f != nil {
				f()
			}
		}
	}
}

// watchClient calls left once the client at the other end of c closes or
// resets the connection, until stop is called; stop must be called before the
// connection is closed, and is called by the connection's goroutine. Where c
// has no socket (an in-memory listener in tests), left is never called.
func watchClient(c net.Conn, left func()) (stop func()) {
	if dc, ok := c.(*drainConn); ok {
		c = dc.Conn
	}
	sc, ok := c.(syscall.Conn)
	if !ok {
		return func() {}
	}
	rc, err := sc.SyscallConn()
	gone.once.Do(gone.start)
	gone.mu.Lock()
	if err != nil || gone.err != nil {
		gone.mu.Unlock()
		return func() {}
	}
	id := gone.next
	gone.next++
	gone.calls[id] = left
	gone.mu.Unlock()
	ev := syscall.EpollEvent{Events: syscall.EPOLLRDHUP | syscall.EPOLLONESHOT, Fd: int32(uint32(id)), Pad: int32(uint32(id >> 32))}
	var ctlErr error
	if err := rc.Control(func(fd uintptr) { ctlErr = syscall.EpollCtl(gone.epfd, syscall.EPOLL_CTL_ADD, int(fd), &ev) }); err != nil || ctlErr != nil {
		gone.forget(id)
		return func() {}
	}
	return func() {
		gone.forget(id)
		// A connection closed meanwhile left the set with its file.
		_ = rc.Control(func(fd uintptr) { _ = syscall.EpollCtl(gone.epfd, syscall.EPOLL_CTL_DEL, int(fd), &ev) })
	}
}

func (g *clientGone) forget(id uint64) {
	g.mu.Lock()
	delete(g.calls, id)
	g.mu.Unlock()
}
