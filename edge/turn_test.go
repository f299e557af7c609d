package edge

import (
	"net/http"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// stacked waits until n goroutines wait in t's stack.
func (t *turns) stacked(tb testing.TB, n int) {
	tb.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		t.mu.Lock()
		k := len(t.stack)
		t.mu.Unlock()
		if k == n {
			return
		}
		if time.Now().After(deadline) {
			tb.Errorf("%d goroutines waiting, want %d", k, n)
			return
		}
		runtime.Gosched()
	}
}

// TestTurnsUndoThePollersOrder: goroutines that arrive while the turn is taken
// are answered in the reverse of their arrival, round by round — the order in
// which the kernel reported their sockets, which Go's poller reversed — and
// those that arrive during a round form the next.
func TestTurnsUndoThePollersOrder(t *testing.T) {
	var tn turns
	var mu sync.Mutex
	var order []int
	var wg sync.WaitGroup
	var answer func(id int)
	answer = func(id int) {
		w := tn.take()
		mu.Lock()
		order = append(order, id)
		mu.Unlock()
		if id == 5 { // 6 and 7 arrive while 5 has the turn
			for next := 6; next <= 7; next++ {
				wg.Go(func() { answer(next) })
				tn.stacked(t, next-5)
			}
		}
		tn.done(w)
	}
	first := tn.take() // alone: it has the turn once it has let others arrive
	for id := 1; id <= 5; id++ {
		wg.Go(func() { answer(id) })
		tn.stacked(t, id)
	}
	tn.done(first)
	wg.Wait()
	if want := []int{5, 4, 3, 2, 1, 7, 6}; !slices.Equal(order, want) {
		t.Errorf("answered %v, want %v", order, want)
	}
	if tn.taken {
		t.Error("the turn is still taken with nobody waiting")
	}
}

// TestTurnsAnswerEveryone: under contention from many goroutines on several
// procs, every one gets the turn, once, and never two at a time.
func TestTurnsAnswerEveryone(t *testing.T) {
	var tn turns
	var holding, most, answered atomic.Int64
	var wg sync.WaitGroup
	const n, each = 64, 200
	for range n {
		wg.Go(func() {
			for range each {
				w := tn.take()
				h := holding.Add(1)
				for m := most.Load(); h > m && !most.CompareAndSwap(m, h); m = most.Load() {
				}
				answered.Add(1)
				holding.Add(-1)
				tn.done(w)
			}
		})
	}
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(2 * time.Minute):
		t.Fatalf("%d of %d turns taken after 2 minutes: a waiter was forgotten", answered.Load(), n*each)
	}
	if answered.Load() != n*each || most.Load() != 1 {
		t.Errorf("%d turns of %d, at most %d at once; want all, one at a time", answered.Load(), n*each, most.Load())
	}
}

// TestAnswersInTurn: a server answering in turn on one proc answers
// concurrent clients with the router's bytes (TestMemoDoesNotAllocate holds
// an answer in turn to no allocation).
func TestAnswersInTurn(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(1))
	repo := &swappable{}
	repo.ed.Store(newest(t))
	rt := router(t, repo)
	h := start(t, Config{Router: rt, Active: repo.Active})
	var inTurn atomic.Int64
	h.es.inTurn = func() bool { inTurn.Add(1); return true }
	targets := [][]string{
		{"/v1/version"},
		{"/v1/currencies", "Accept-Encoding", "gzip"},
		{"/v1/weapons", "Accept-Encoding", "br"},
		{"/v1/weapons", "If-None-Match", `"nope", *`},
	}
	want := map[int]response{}
	for i, tc := range targets {
		want[i] = direct(rt, request(http.MethodGet, tc[0], tc[1:]...))
		want[i].header.Del("Date")
		h.do(t, request(http.MethodGet, tc[0], tc[1:]...)) // into the memo
	}
	var wg sync.WaitGroup
	for c := range 16 {
		wg.Go(func() {
			for k := range 20 {
				i := (c + k) % len(targets)
				got := h.do(t, request(http.MethodGet, targets[i][0], targets[i][1:]...))
				if got.status != want[i].status || string(got.body) != string(want[i].body) {
					t.Errorf("%v: %d, %d bytes; the router says %d, %d bytes", targets[i], got.status, len(got.body), want[i].status, len(want[i].body))
					return
				}
			}
		})
	}
	wg.Wait()
	if !h.memoized("/v1/currencies") || inTurn.Load() < 16*20 {
		t.Fatalf("%d answers in turn: the test proves nothing about turns", inTurn.Load())
	}
}
