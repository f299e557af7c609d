package cores

import (
	"fmt"
	"io"
	"os"
	"os/exec"
	"runtime"
	"strconv"
)

// childProcsEnv tells a child StartChild starts how many procs its server
// leaves free (ChildBudget).
const childProcsEnv = "REFDATA_CHILD_PROCS"

// StartChild starts exe (this executable, or a test's stand-in) as a child
// process that works beside the server: env=1 added to this process's
// environment tells it which, its standard input and output are pipes to it,
// its standard error is this process's. idle: the child works at
// IdlePriority, and runs under SCHED_IDLE from the moment it starts; false
// leaves it at this process's priority. A serving process (Limit) tells it
// the procs serving leaves free.
func StartChild(exe, env string, idle bool) (cmd *exec.Cmd, in io.WriteCloser, out io.ReadCloser, err error) {
	cmd = exec.Command(exe)
	cmd.Env = append(os.Environ(), env+"=1")
	if n := free(); n > 0 {
		cmd.Env = append(cmd.Env, childProcsEnv+"="+strconv.Itoa(n))
	}
	cmd.Stderr = os.Stderr
	if in, err = cmd.StdinPipe(); err != nil {
		return nil, nil, nil, err
	}
	if out, err = cmd.StdoutPipe(); err != nil {
		return nil, nil, nil, err
	}
	growPipe(in)
	growPipe(out)
	if err := cmd.Start(); err != nil {
		return nil, nil, nil, fmt.Errorf("start %s: %w", exe, err)
	}
	if idle {
		// Idle from its first moments, not from its own IdlePriority: before
		// that call the child's runtime and package initialization ran at the
		// server's priority, beside the requests, twice in every swap.
		// Threads its first thread starts from now on inherit it;
		// IdlePriority catches any other.
		setIdle(cmd.Process.Pid)
	}
	return cmd, in, out, nil
}

// free is how many procs serving leaves to the rest of the machine: Go's
// count less serving's, at least one; 0 when the process does not choose its
// procs (no Limit, or the operator's GOMAXPROCS, which a child inherits).
func free() int {
	state.mu.Lock()
	defer state.mu.Unlock()
	if state.serving == 0 {
		return 0
	}
	return max(1, state.full-state.serving)
}

// ChildBudget, in a child StartChild started, runs the child's goroutines on
// the procs its server leaves free, and returns a function that gives it every
// proc again, for work that must not wait long. Without a budget from the
// server (or with one no smaller than GOMAXPROCS) both leave GOMAXPROCS alone.
//
// Why: a child at idle priority runs only when the server does not want the
// CPU, but it is not free. With two busy idle-priority threads on two cores
// beside a server under paced load, the server's p99 was 2.5–4× and its
// throughput a quarter lower; with one, no worse than alone; with both
// children on one thread, an en-US swap's p99 fell from 2.8–5.4 ms to
// 1.8–3.1 ms (BENCHMARKS.md § Stop 35). With this budget (the builder widening
// after a moment), the swap's p99 had a median of 2.9 ms against 4.2 (en-US)
// and 5.3 against 6.6 (18 locales), going live as soon (§ Stop 36).
func ChildBudget() (widen func()) {
	full := runtime.GOMAXPROCS(0)
	n, err := strconv.Atoi(os.Getenv(childProcsEnv))
	if err != nil || n < 1 || n >= full {
		return func() {}
	}
	runtime.GOMAXPROCS(n)
	return func() { runtime.GOMAXPROCS(full) }
}
