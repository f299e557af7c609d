package edge

import (
	"runtime"
	"sync"
)

// Answering in turn: on one proc (the default on a two-core machine, see
// package cores), memo answers are written in the order their requests
// arrived, as nginx's event loop writes them, not in the order Go's scheduler
// happens to run their goroutines.
//
// Why: Go's network poller hands the goroutines of the sockets that became
// readable together to the scheduler in the reverse of the order the kernel
// reported them (netpoll collects them on a stack). On one proc, with every
// client waiting for its answer before it sends again, a round of requests is
// then answered last-come-first: the request that arrived first in a round is
// answered last in the next, and each client waits anywhere between none and
// two rounds instead of one. That spread, not the time an answer takes, was
// most of the p99: on a 4.4 KB body at about 120,000 requests a second, p90
// was 1.7× p50 and p99 2.1–5.9× (nginx, when its two workers keep pace:
// about 1.1×); in turn 1.3–1.4× and 1.8–2.4×, for 5–7 % of the throughput
// (BENCHMARKS.md § Stop 26).
//
// How: goroutines that arrive while another has the turn wait in a stack,
// and the stack is answered top first, which undoes the poller's reversal.
// The first of a round to arrive (when nobody has the turn) first lets the
// rest of its round arrive: runtime.Gosched puts it on the global run queue,
// which the scheduler runs after the goroutines the poller put on the proc's
// own. Each answer passes the turn to the next before its bytes are written;
// the next runs as soon as the current one waits for its next request. The
// cost is a park and a wake per answer, well under a microsecond.

// A waiter is one goroutine waiting for its turn; pooled, so taking a turn
// does not allocate.
type waiter struct{ ch chan struct{} }

var waiters = sync.Pool{New: func() any { return &waiter{ch: make(chan struct{}, 1)} }}

// turns orders the goroutines that take it. Its zero value is ready.
type turns struct {
	mu    sync.Mutex
	taken bool      // a goroutine has the turn, or is gathering its round
	stack []*waiter // arrived while the turn was taken, latest on top
	queue []*waiter // the round being answered, in order, from head
	head  int
}

// take returns when the caller has the turn; done passes it on.
func (t *turns) take() *waiter {
	w := waiters.Get().(*waiter)
	t.mu.Lock()
	t.stack = append(t.stack, w)
	if t.taken {
		t.mu.Unlock()
		<-w.ch
		return w
	}
	t.taken = true
	t.mu.Unlock()
	runtime.Gosched() // the rest of the round arrives
	t.mu.Lock()
	next := t.round()
	t.mu.Unlock()
	if next != w {
		next.ch <- struct{}{}
		<-w.ch
	}
	return w
}

// done passes the turn to the next waiter, if any.
func (t *turns) done(w *waiter) {
	t.mu.Lock()
	var next *waiter
	switch {
	case t.head < len(t.queue):
		next = t.queue[t.head]
		t.queue[t.head] = nil
		t.head++
	case len(t.stack) > 0:
		next = t.round()
	default:
		t.taken = false
	}
	t.mu.Unlock()
	waiters.Put(w)
	if next != nil {
		next.ch <- struct{}{}
	}
}

// round makes the stack the queue, top first, and returns its head, whose
// turn it is. t.mu is held and the stack is not empty.
func (t *turns) round() *waiter {
	t.queue, t.head = t.queue[:0], 1
	for i := len(t.stack) - 1; i >= 0; i-- {
		t.queue = append(t.queue, t.stack[i])
		t.stack[i] = nil
	}
	t.stack = t.stack[:0]
	next := t.queue[0]
	t.queue[0] = nil
	return next
}
