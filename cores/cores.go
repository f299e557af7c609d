// Package cores decides how many CPUs the Go runtime runs goroutines on
// (GOMAXPROCS): serving keeps one core free for the applications beside it, and
// background work (loading and compressing a version) borrows it while it runs.
//
// Why: on a small machine shared with the clients of the service (the
// companion apps it is deployed beside, or a load generator), two runtime
// threads chasing requests across two cores wake and park each other and take
// CPU from the client: against nginx with two workers on two cores, small
// bodies were served at 0.74–0.92× with GOMAXPROCS=2 and 0.99–1.40× with 1,
// with a third of the p99 (BENCHMARKS.md). Work that must finish soon — a new
// version going live — still gets every core.
package cores

import (
	"os"
	"runtime"
	"sync"
)

var state struct {
	mu      sync.Mutex
	serving int // 0: not limited (tests, or GOMAXPROCS set by the operator)
	full    int
	busy    int // background tasks running
}

// Limit makes the process serve on n procs and lends background work every
// proc Go chose at start-up. n ≤ 0 means that number less one (at least 1). It
// does nothing when the GOMAXPROCS environment variable is set: the operator
// has chosen. It returns the procs used for serving.
func Limit(n int) int {
	state.mu.Lock()
	defer state.mu.Unlock()
	if os.Getenv("GOMAXPROCS") != "" {
		return runtime.GOMAXPROCS(0)
	}
	if state.full == 0 {
		state.full = runtime.GOMAXPROCS(0)
	}
	if n <= 0 {
		n = state.full - 1
	}
	state.serving = max(1, min(n, state.full))
	if state.busy == 0 {
		runtime.GOMAXPROCS(state.serving)
	}
	return state.serving
}

// Borrow gives background work every proc until the returned function is
// called; borrows nest. Without Limit it does nothing.
func Borrow() (giveBack func()) {
	state.mu.Lock()
	defer state.mu.Unlock()
	if state.serving == 0 {
		return func() {}
	}
	state.busy++
	if state.busy == 1 && state.full != state.serving {
		runtime.GOMAXPROCS(state.full)
	}
	var once sync.Once
	return func() {
		once.Do(func() {
			state.mu.Lock()
			defer state.mu.Unlock()
			state.busy--
			if state.busy == 0 && state.serving != 0 {
				runtime.GOMAXPROCS(state.serving)
			}
		})
	}
}

// Procs is how many procs background work gets while it borrows: all of them.
func Procs() int {
	state.mu.Lock()
	defer state.mu.Unlock()
	if state.full != 0 {
		return state.full
	}
	return runtime.GOMAXPROCS(0)
}
