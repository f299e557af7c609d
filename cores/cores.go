// Package cores divides the Go runtime between serving and background work
// (loading and compressing a version): how many CPUs goroutines run on
// (GOMAXPROCS), and, by the same switch, how far the heap may grow past its
// live bytes before the collector runs (GOGC).
//
// CPUs: serving keeps one core free for the applications beside it, and
// background work borrows it while it runs. On a small machine shared with the
// clients of the service (the companion apps it is deployed beside, or a load
// generator), two runtime threads chasing requests across two cores wake and
// park each other and take CPU from the client: against nginx with two workers
// on two cores, small bodies were served at 0.74–0.92× with GOMAXPROCS=2 and
// 0.99–1.40× with 1, with a third of the p99 (BENCHMARKS.md). Work that must
// finish soon — a new version going live — still gets every core.
//
// Collector: between loads the heap is nearly all immutable bodies, which the
// collector does not scan, and answers from the edge's memo allocate nothing;
// the garbage there is (the first request for each target goes through the
// router) would otherwise let the heap, and the process's RSS, grow to twice
// its live bytes (GOGC=100: RSS 2.51× the rendered bytes with every target in
// the memo; 2.30× at 40; 1.92–2.06× at 20, where the scavenger keeps a tenth
// above the heap goal; 1.78–1.84× at 10, BENCHMARKS.md § Stop 33). So serving
// collects at ServingGOGC, and background work, which allocates much and
// briefly, at LoadingGOGC: at Go's default 100 the bodies a load keeps were
// strewn among its garbage, and the half-empty spans stayed (1.99–2.01× against 1.96× at 50, with the same start-up time).
// The cost while serving is a collection each time a tenth of the live heap has
// been allocated, which only the router's first answers and exports do (some
// 35–45 ms of CPU each for the 18-locale version: the bodies are not scanned,
// their indexes are); answers from the memo allocate nothing.
//
// Yielding: background goroutines call a Pacer's Yield between small pieces of
// work, so requests that arrive while every proc computes are answered within
// a fraction of a millisecond of Go's scheduling, not after its 10 ms
// preemption (see Request). And while requests come in, parallel background
// loops run one goroutine, not one per proc (Workers): the other procs, and
// the cores under them, stay with the requests and their clients.
package cores

import (
	"os"
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"sync"
	"sync/atomic"
	"time"
)

// ServingGOGC is the collector's target growth (percent of the live heap) while
// no background work runs.
const ServingGOGC = 10

// LoadingGOGC is the collector's target growth while background work runs.
const LoadingGOGC = 50

var state struct {
	mu      sync.Mutex
	limited bool // Limit was called: a serving process
	serving int  // procs while serving; 0: not limited (GOMAXPROCS set by the operator)
	full    int
	gogc    int // GOGC while serving; 0: left alone (GOGC set by the operator)
	busy    int // background tasks running
}

// Limit makes the process serve on n procs and lends background work every
// proc Go chose at start-up. n ≤ 0 means that number less one (at least 1). It
// leaves the procs alone when the GOMAXPROCS environment variable is set, and
// the collector when GOGC is: the operator has chosen. It returns the procs
// used for serving.
func Limit(n int) int {
	state.mu.Lock()
	defer state.mu.Unlock()
	state.limited = true
	if os.Getenv("GOGC") == "" {
		state.gogc = ServingGOGC
		if state.busy == 0 {
			debug.SetGCPercent(state.gogc)
		}
	}
	if os.Getenv("GOMAXPROCS") != "" {
		n := runtime.GOMAXPROCS(0)
		procs.Store(int32(n))
		return n
	}
	if state.full == 0 {
		state.full = runtime.GOMAXPROCS(0)
	}
	if n <= 0 {
		n = state.full - 1
	}
	state.serving = max(1, min(n, state.full))
	if state.busy == 0 {
		setProcs(state.serving)
	}
	return state.serving
}

// procs is GOMAXPROCS as Limit and Borrow last left it; 0 before Limit.
var procs atomic.Int32

func setProcs(n int) {
	runtime.GOMAXPROCS(n)
	procs.Store(int32(n))
}

// OneProc reports whether a serving process runs its goroutines on one proc
// now (Limit chose one, or the operator's GOMAXPROCS is 1, and no background
// work borrows more). It reads one atomic: requests ask it, and
// runtime.GOMAXPROCS takes the scheduler's lock. False before Limit.
func OneProc() bool { return procs.Load() == 1 }

// Borrow gives background work every proc, and the collector pacing LoadingGOGC,
// until the returned function is called; borrows nest. Without Limit it does
// nothing.
func Borrow() (giveBack func()) {
	state.mu.Lock()
	defer state.mu.Unlock()
	if !state.limited {
		return func() {}
	}
	state.busy++
	if state.busy == 1 {
		if state.serving != 0 && state.full != state.serving {
			setProcs(state.full)
		}
		if state.gogc != 0 {
			debug.SetGCPercent(LoadingGOGC)
		}
	}
	var once sync.Once
	return func() {
		once.Do(func() {
			state.mu.Lock()
			last := state.busy == 1 && state.gogc != 0
			state.mu.Unlock()
			if last && overServingGoal() {
				collect()
			}
			state.mu.Lock()
			defer state.mu.Unlock()
			state.busy--
			if state.busy == 0 {
				if state.serving != 0 {
					setProcs(state.serving)
				}
				if state.gogc != 0 {
					debug.SetGCPercent(state.gogc)
				}
			}
		})
	}
}

// Giving the procs back, the last borrower first collects when the heap is
// past what ServingGOGC allows, while the procs and LoadingGOGC are still its.
// Lowered first, the collector started at the next allocation with serving's
// one proc to itself and the goroutine that set it off: after an 18-locale
// swap, the requests waited 20–40 ms for its assists and mark worker, with
// two editions live (BENCHMARKS.md § Stop 28).

// collect is debug.FreeOSMemory: a collection that also returns what it freed
// to the operating system, since what a borrower leaves past ServingGOGC is a
// load's garbage, which the process would otherwise keep as RSS (a swap's
// previous edition, a loaded version's files). A variable so the tests see
// when it runs.
var collect = debug.FreeOSMemory

// overServingGoal reports whether the heap holds more than ServingGOGC lets it
// grow past the bytes the last collection found live.
func overServingGoal() bool {
	s := []metrics.Sample{{Name: "/gc/heap/live:bytes"}, {Name: "/memory/classes/heap/objects:bytes"}}
	metrics.Read(s)
	if s[0].Value.Kind() != metrics.KindUint64 || s[1].Value.Kind() != metrics.KindUint64 {
		return false
	}
	live, heap := s[0].Value.Uint64(), s[1].Value.Uint64()
	return heap > live+live*ServingGOGC/100
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

// Requests and background work share the cores, and Go's scheduler looks for
// sockets that became readable only when a proc has nothing else to run, or
// every 10 ms from its monitor thread. A background goroutine that computes for
// tens of milliseconds on every proc therefore keeps ready requests waiting up
// to 10 ms, however few cores it uses. Background loops call a Pacer's Yield
// between small pieces of work (an item, a body, a chunk of one); while
// requests are coming in, it parks the goroutine for a moment so that its proc
// polls the network and answers them first.
var requested atomic.Bool

// heard is when background work last found the request flag set (Unix
// nanoseconds). A flag cleared by one Yield and not yet set again says nothing
// about the next request: at a few thousand requests a second, most yields
// find it clear, and background work that stopped yielding then kept requests
// waiting up to Go's 10 ms (p99 14.2–14.5 ms during an 18-locale swap at
// 20,000 requests a second; BENCHMARKS.md § Stop 24). So background work
// yields for Recent after it last saw one.
var heard atomic.Int64

// heardRecently reports whether a request came in within Recent of now, as far
// as background work has looked: a set flag counts as a request now (and is
// cleared, so the next look sees only later ones).
func heardRecently(now time.Time) bool {
	if requested.Swap(false) {
		heard.Store(now.UnixNano())
		return true
	}
	return now.UnixNano()-heard.Load() < int64(Recent)
}

// Request tells background work that a request came in. The server calls it
// once per request; it writes only when background work has read the flag
// since, so the line is not bounced between cores on every request.
func Request() {
	if !requested.Load() {
		requested.Store(true)
	}
}

// Pace is how long a background goroutine computes between yields while
// requests come in, and Pause how long it then stays parked.
const (
	Pace  = 250 * time.Microsecond
	Pause = 20 * time.Microsecond
	// Recent is how long background work counts requests as coming in after
	// it last saw one (Yield, Workers).
	Recent = 100 * time.Millisecond
)

// A Pacer spaces one goroutine's yields; its zero value is ready. It is not
// safe for concurrent use: each background goroutine keeps its own.
type Pacer struct {
	last time.Time
}

// Yield parks the goroutine for Pause when it has run Pace since it last
// looked and requests came in meanwhile; otherwise it returns at once. An idle
// server (start-up, an import with no clients) never parks.
func (p *Pacer) Yield() {
	now := time.Now()
	if now.Sub(p.last) < Pace {
		return
	}
	p.last = now
	if !heardRecently(now) {
		return
	}
	park()
	p.last = time.Now()
}

// park lets the proc poll the network; a variable so the tests can count.
var park = func() {
	time.Sleep(Pause)
	// Woken by its timer, the goroutine would run before the requests its proc
	// has just taken from the network: to the back of the queue behind them.
	runtime.Gosched()
}

// Workers is how many goroutines a parallel loop of background work should
// run: every proc while no request has come in for Recent (start-up, an import
// on an idle server, the import command), one while requests come in. One
// goroutine that yields (Pacer) leaves the other procs, and the cores under
// them, to the requests and to the clients beside the server. With the Pacer
// yielding for Recent, it took an 18-locale swap's p99 at 20,000 requests a
// second from 14.2–14.5 ms to 3.6–5.1 ms, going live 1.5 s later
// (BENCHMARKS.md § Stop 24).
func Workers() int {
	if busy() {
		return 1
	}
	return runtime.GOMAXPROCS(0)
}

// Busy reports whether requests came in within Recent (see busy).
func Busy() bool { return busy() }

// busy reports whether requests came in within Recent. Unlike a Yield, which
// costs a park at worst, it does not take a set flag at its word: with no
// background work to clear it, the flag may have been set long ago, and one
// worker for a whole loop on an idle server would be a slow load. So it
// clears the flag and looks again, a moment at a time, up to looks times.
// One look was not enough: clients that pause between requests leave gaps
// longer than a moment, and under a paced load (32 clients, each asking 1 ms
// after its answer) a single look fell in one, and a compression worker took
// a 67 KB body to brotli in the serving process for 207 ms, beside requests
// (BENCHMARKS.md § Stop 34).
func busy() bool {
	if time.Now().UnixNano()-heard.Load() < int64(Recent) {
		return true
	}
	if !requested.Swap(false) {
		return false
	}
	for range looks {
		lookAgain()
		if heardRecently(time.Now()) {
			return true
		}
	}
	return false
}

// lookAgain is the moment busy waits for a request to set the flag again; a
// variable so that a test can have one come in meanwhile without a timing.
var lookAgain = func() { time.Sleep(time.Millisecond) }

// looks is how many moments busy looks for: 5 ms, which an idle server pays
// once after its last request (the flag is then clear) and in which a paced
// one's next request comes.
const looks = 5
