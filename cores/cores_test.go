package cores

import (
	"runtime"
	"testing"
)

// reset gives each case a process that has not called Limit, Go's choice being
// n procs, and restores GOMAXPROCS afterwards.
func reset(t *testing.T, n int) {
	before := runtime.GOMAXPROCS(n)
	state.serving, state.full, state.busy = 0, 0, 0
	t.Cleanup(func() {
		runtime.GOMAXPROCS(before)
		state.serving, state.full, state.busy = 0, 0, 0
	})
}

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
			if got := Limit(tc.n); got != tc.serves || runtime.GOMAXPROCS(0) != tc.serves {
				t.Fatalf("Limit(%d) = %d, GOMAXPROCS %d; want %d", tc.n, got, runtime.GOMAXPROCS(0), tc.serves)
			}
			first := Borrow()
			second := Borrow()
			if runtime.GOMAXPROCS(0) != tc.cpus || Procs() != tc.cpus {
				t.Errorf("while borrowed: GOMAXPROCS %d, Procs %d; want %d", runtime.GOMAXPROCS(0), Procs(), tc.cpus)
			}
			first()
			first() // a second call gives nothing back twice
			if runtime.GOMAXPROCS(0) != tc.cpus {
				t.Errorf("one borrower left: GOMAXPROCS %d, want %d", runtime.GOMAXPROCS(0), tc.cpus)
			}
			second()
			if runtime.GOMAXPROCS(0) != tc.serves {
				t.Errorf("all given back: GOMAXPROCS %d, want %d", runtime.GOMAXPROCS(0), tc.serves)
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
}

func TestBorrowWithoutLimit(t *testing.T) {
	reset(t, 2)
	giveBack := Borrow()
	giveBack()
	if runtime.GOMAXPROCS(0) != 2 {
		t.Errorf("GOMAXPROCS %d, want 2: nothing was limited", runtime.GOMAXPROCS(0))
	}
}
