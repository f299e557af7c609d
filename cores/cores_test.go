package cores

import (
	"runtime"
	"runtime/debug"
	"slices"
	"testing"
	"time"
)

// reset gives each case a process that has not called Limit, Go's choice being
// n procs, and restores GOMAXPROCS afterwards.
func reset(t *testing.T, n int) {
	before := runtime.GOMAXPROCS(n)
	gcBefore := debug.SetGCPercent(100)
	clear := func() {
		state.limited, state.serving, state.full, state.gogc, state.busy = false, 0, 0, 0, 0
		procs.Store(0)
	}
	clear()
	t.Cleanup(func() {
		runtime.GOMAXPROCS(before)
		debug.SetGCPercent(gcBefore)
		clear()
	})
}

// gogc reads the collector's setting without changing it.
func gogc() int {
	v := debug.SetGCPercent(100)
	debug.SetGCPercent(v)
	return v
}

// TestCollectorPacing: a serving process collects at ServingGOGC, at
// LoadingGOGC while any background work runs, and leaves an operator's GOGC alone.
func TestCollectorPacing(t *testing.T) {
	t.Setenv("GOMAXPROCS", "")
	t.Run("serving and borrowing", func(t *testing.T) {
		reset(t, 2)
		t.Setenv("GOGC", "")
		Limit(0)
		if got := gogc(); got != ServingGOGC {
			t.Fatalf("serving: GOGC %d, want %d", got, ServingGOGC)
		}
		first, second := Borrow(), Borrow()
		if got := gogc(); got != LoadingGOGC {
			t.Errorf("borrowed: GOGC %d, want %d", got, LoadingGOGC)
		}
		first()
		if got := gogc(); got != LoadingGOGC {
			t.Errorf("one borrower left: GOGC %d, want %d", got, LoadingGOGC)
		}
		second()
		if got := gogc(); got != ServingGOGC {
			t.Errorf("all given back: GOGC %d, want %d", got, ServingGOGC)
		}
	})
	t.Run("the operator's GOGC stands", func(t *testing.T) {
		reset(t, 2)
		t.Setenv("GOGC", "70")
		debug.SetGCPercent(70) // as the runtime read it at start-up
		Limit(0)
		Borrow()()
		if got := gogc(); got != 70 {
			t.Errorf("GOGC %d, want the operator's 70", got)
		}
	})
	t.Run("GOMAXPROCS set: the collector still paces", func(t *testing.T) {
		reset(t, 2)
		t.Setenv("GOGC", "")
		t.Setenv("GOMAXPROCS", "2")
		Limit(0)
		giveBack := Borrow()
		if got := gogc(); got != LoadingGOGC {
			t.Errorf("borrowed: GOGC %d, want %d", got, LoadingGOGC)
		}
		giveBack()
		if got := gogc(); got != ServingGOGC || runtime.GOMAXPROCS(0) != 2 {
			t.Errorf("given back: GOGC %d, GOMAXPROCS %d; want %d and 2", got, runtime.GOMAXPROCS(0), ServingGOGC)
		}
	})
}

// TestCollectsBeforeGivingBack: the last borrower to give back collects while
// it still has every proc, when what it left on the heap is more than
// ServingGOGC allows, so the collection does not start on serving's one proc;
// with the heap within it, it does not collect.
func TestCollectsBeforeGivingBack(t *testing.T) {
	t.Setenv("GOMAXPROCS", "")
	t.Setenv("GOGC", "")
	for _, tc := range []struct {
		name    string
		garbage bool
		want    []int // GOMAXPROCS at each collection
	}{
		{"garbage left", true, []int{2}},
		{"heap within the goal", false, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			reset(t, 2)
			Limit(0)
			var at []int
			before := collect
			collect = func() { at = append(at, runtime.GOMAXPROCS(0)); runtime.GC() }
			t.Cleanup(func() { collect = before })
			runtime.GC() // the live heap is measured here
			first, second := Borrow(), Borrow()
			// No collection but the one under test: garbage stays garbage.
			debug.SetGCPercent(-1)
			if tc.garbage {
				for range 64 {
					sink = append(sink, make([]byte, 1<<20))
				}
				sink = nil
			}
			first()
			if len(at) != 0 {
				t.Fatalf("collected with a borrower left")
			}
			second()
			if !slices.Equal(at, tc.want) {
				t.Errorf("collections at GOMAXPROCS %v, want %v", at, tc.want)
			}
			if runtime.GOMAXPROCS(0) != 1 {
				t.Errorf("given back: GOMAXPROCS %d, want 1", runtime.GOMAXPROCS(0))
			}
		})
	}
}

var sink [][]byte

func TestLimitAndBorrow(t *testing.T) {
	t.Setenv("GOMAXPROCS", "")
	for _, tc := range []struct {
		name            string
		cpus, n, serves int
	}{
		{"all but one", 4, 0, 3},
		{"one of two", 2, 0, 1},
		{"one CPU keeps it", 1, 0, 1},
		{"asked for", 4, 2, 2},
		{"more than there are", 4, 9, 4},
	} {
		t.Run(tc.name, func(t *testing.T) {
			reset(t, tc.cpus)
			if OneProc() {
				t.Fatal("OneProc before Limit")
			}
			if got := Limit(tc.n); got != tc.serves || runtime.GOMAXPROCS(0) != tc.serves {
				t.Fatalf("Limit(%d) = %d, GOMAXPROCS %d; want %d", tc.n, got, runtime.GOMAXPROCS(0), tc.serves)
			}
			if OneProc() != (tc.serves == 1) {
				t.Errorf("serving on %d: OneProc %v", tc.serves, OneProc())
			}
			first := Borrow()
			second := Borrow()
			if runtime.GOMAXPROCS(0) != tc.cpus || Procs() != tc.cpus {
				t.Errorf("while borrowed: GOMAXPROCS %d, Procs %d; want %d", runtime.GOMAXPROCS(0), Procs(), tc.cpus)
			}
			if OneProc() != (tc.cpus == 1) {
				t.Errorf("borrowed %d: OneProc %v", tc.cpus, OneProc())
			}
			first()
			first() // a second call gives nothing back twice
			if runtime.GOMAXPROCS(0) != tc.cpus {
				t.Errorf("one borrower left: GOMAXPROCS %d, want %d", runtime.GOMAXPROCS(0), tc.cpus)
			}
			second()
			if runtime.GOMAXPROCS(0) != tc.serves || OneProc() != (tc.serves == 1) {
				t.Errorf("all given back: GOMAXPROCS %d, OneProc %v; want %d", runtime.GOMAXPROCS(0), OneProc(), tc.serves)
			}
		})
	}
}

func TestOperatorChoiceStands(t *testing.T) {
	reset(t, 3)
	t.Setenv("GOMAXPROCS", "3")
	if got := Limit(0); got != 3 || runtime.GOMAXPROCS(0) != 3 {
		t.Errorf("Limit with GOMAXPROCS set: %d, GOMAXPROCS %d; want 3 untouched", got, runtime.GOMAXPROCS(0))
	}
	Borrow()()
	if runtime.GOMAXPROCS(0) != 3 {
		t.Errorf("Borrow changed GOMAXPROCS to %d", runtime.GOMAXPROCS(0))
	}
	if OneProc() {
		t.Error("OneProc on the operator's 3 procs")
	}
	reset(t, 2)
	t.Setenv("GOMAXPROCS", "1")
	runtime.GOMAXPROCS(1) // as the runtime read it at start-up
	if Limit(0); !OneProc() {
		t.Error("not OneProc on the operator's one proc")
	}
}

func TestBorrowWithoutLimit(t *testing.T) {
	reset(t, 2)
	giveBack := Borrow()
	giveBack()
	if runtime.GOMAXPROCS(0) != 2 {
		t.Errorf("GOMAXPROCS %d, want 2: nothing was limited", runtime.GOMAXPROCS(0))
	}
}

// TestPacerYieldsOnlyToRequests: background work parks only when requests came
// in within Recent and it has run Pace since it last looked; an idle server
// never parks.
func TestPacerYieldsOnlyToRequests(t *testing.T) {
	parked := 0
	before := park
	park = func() { parked++ }
	t.Cleanup(func() { park = before; heard.Store(0) })

	requested.Store(false)
	heard.Store(0)
	var p Pacer
	p.Yield()
	if parked != 0 {
		t.Fatalf("no request came in: parked %d times", parked)
	}
	Request()
	p.last = time.Time{}
	p.Yield()
	if parked != 1 {
		t.Fatalf("a request came in and Pace had passed: parked %d times, want 1", parked)
	}
	Request()
	p.last = time.Now().Add(time.Hour) // Pace has not passed since
	p.Yield()
	if parked != 1 {
		t.Fatalf("within Pace of the last yield: parked %d times, want 1", parked)
	}
	p.last = time.Time{}
	p.Yield()
	if parked != 2 {
		t.Fatalf("Pace passed with a request pending: parked %d times, want 2", parked)
	}
	p.last = time.Time{}
	p.Yield()
	if parked != 3 {
		t.Fatalf("no request since the last yield, one within Recent: parked %d times, want 3", parked)
	}
	heard.Store(time.Now().Add(-2 * Recent).UnixNano())
	p.last = time.Time{}
	p.Yield()
	if parked != 3 {
		t.Fatalf("no request within Recent: parked %d times, want 3", parked)
	}

	// The real park: it sleeps and returns, and the yield clears the flag.
	park = before
	Request()
	p.last = time.Time{}
	p.Yield()
	if requested.Load() {
		t.Error("a yield left the request flag set: the next one would park with no request")
	}
	if p.last.IsZero() {
		t.Error("a yield did not restart the pace")
	}
}

// TestWorkers: parallel background loops run on every proc while no request
// came in within Recent, on one while requests come in; a request flag left
// set long ago is looked at again rather than believed, for up to looks
// moments, so a gap between paced requests is not taken for an idle server.
func TestWorkers(t *testing.T) {
	reset(t, 3)
	t.Cleanup(func() { heard.Store(0); requested.Store(false) })
	cases := []struct {
		name      string
		flag      bool
		heard     time.Time
		requestAt int // a request comes in during busy's look number requestAt; 0: none
		want      int
	}{
		{"idle", false, time.Time{}, 0, 3},
		{"a request within Recent", false, time.Now(), 0, 1},
		{"the last one long ago", false, time.Now().Add(-2 * Recent), 0, 3},
		{"the flag left set, no request since", true, time.Time{}, 0, 3},
		{"the flag set, and requests still coming", true, time.Time{}, 1, 1},
		{"the flag set, the next request after a gap", true, time.Time{}, looks, 1},
		{"the flag set, the next request after every look", true, time.Time{}, looks + 1, 3},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			requested.Store(c.flag)
			var at int64 // the zero Time has no UnixNano: never heard
			if !c.heard.IsZero() {
				at = c.heard.UnixNano()
			}
			heard.Store(at)
			was := lookAgain
			defer func() { lookAgain = was }()
			look := 0
			lookAgain = func() {
				if look++; look == c.requestAt {
					Request()
				}
			}
			got := Workers()
			if got != c.want {
				t.Errorf("Workers() = %d, want %d", got, c.want)
			}
		})
	}
}

// TestChildBudget: a child runs on the procs its server leaves free, and
// widen gives it every proc; without a usable budget it keeps its procs.
func TestChildBudget(t *testing.T) {
	for _, tc := range []struct {
		env         string
		runs, after int
	}{
		{"1", 1, 4},
		{"3", 3, 4},
		{"4", 4, 4},
		{"9", 4, 4},
		{"0", 4, 4},
		{"x", 4, 4},
		{"", 4, 4},
	} {
		t.Run(tc.env, func(t *testing.T) {
			reset(t, 4)
			t.Setenv(childProcsEnv, tc.env)
			widen := ChildBudget()
			if got := runtime.GOMAXPROCS(0); got != tc.runs {
				t.Errorf("budget %q on 4 procs: GOMAXPROCS %d, want %d", tc.env, got, tc.runs)
			}
			widen()
			if got := runtime.GOMAXPROCS(0); got != tc.after {
				t.Errorf("budget %q widened: GOMAXPROCS %d, want %d", tc.env, got, tc.after)
			}
		})
	}
}

// TestFree: a serving process leaves its children the procs serving does not
// use, at least one; one that does not choose its procs tells them nothing.
func TestFree(t *testing.T) {
	t.Setenv("GOMAXPROCS", "")
	for _, tc := range []struct {
		name          string
		cpus, n, free int
		limit         bool
	}{
		{"no Limit", 4, 0, 0, false},
		{"all but one", 4, 0, 1, true},
		{"one of two", 2, 0, 1, true},
		{"one CPU", 1, 0, 1, true},
		{"asked for one of four", 4, 1, 3, true},
		{"all", 4, 4, 1, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			reset(t, tc.cpus)
			if tc.limit {
				Limit(tc.n)
			}
			if got := free(); got != tc.free {
				t.Errorf("free() = %d, want %d", got, tc.free)
			}
		})
	}
	reset(t, 4)
	t.Setenv("GOMAXPROCS", "4")
	if Limit(0); free() != 0 {
		t.Errorf("with the operator's GOMAXPROCS: free() = %d, want 0", free())
	}
}
