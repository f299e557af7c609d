// Package builder builds a new version's edition for a serving process in a
// child process at the kernel's idle priority: the same executable, started
// with childEnv set, which renders the categories whose files changed and
// gzips the bodies the server does not have (catalog.BuildPart), and sends
// them back.
//
// Why: on two cores, rendering and gzipping an 18-locale version took the
// serving process 1.1-1.2 s of both procs and 0.6-0.7 s of gzip, at normal
// priority, and requests waited behind it: p99 4-6 ms through the swap
// against 0.5 at rest (BENCHMARKS.md § Stop 28). A process at idle priority
// gets only the CPU nobody else wants (representation's compression child
// showed it: p99 0.68 ms beside brotli on both cores), though it is not free:
// on a slower machine one that only computes doubled the p99 (§ Stop 30), so
// how long it works matters too. What is left in the server is reading the
// part: the new bodies' bytes and their ETags.
//
// A child that cannot start, fails or sends a broken part is replaced by
// building in-process, as is one that is starved: on a saturated machine an
// idle-priority process gets no CPU, and a version must still go live, so a
// child that used less than starvedShare of a core over Patience is stopped
// and the version is built here. Nothing the child sends reaches the served
// data unless all of it reads as a complete edition (catalog.ReadPart).
package builder

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"runtime/debug"
	"sync"
	"sync/atomic"
	"time"

	"github.com/refdata/refdata/catalog"
	"github.com/refdata/refdata/cores"
)

// childEnv, when set, makes the process a builder child (ServeIfChild).
const childEnv = "REFDATA_EDITION_BUILDER"

// handshake is the child's first line: it proves that the executable builds
// (a test binary without the hook would run its tests instead).
const handshake = "refdata-build/1\n"

// NormalPriorityEnv, set in the server's environment, leaves its builder
// children at normal priority. For tests that check what the child builds
// while other test binaries keep the cores busy: at idle priority it would get
// almost no CPU there (and with a long Patience, not be replaced).
const NormalPriorityEnv = "REFDATA_BUILDER_NORMAL_PRIORITY"

// idle reports whether builder children run at idle priority: the server
// starting one and the child itself read it alike.
func idle() bool { return os.Getenv(NormalPriorityEnv) == "" }

// Patience is how often a child's progress is checked; starvedShare is the
// share of one core below which, over Patience, it counts as starved.
var (
	Patience     = 500 * time.Millisecond
	starvedShare = 0.2
)

// childGCPercent is the GOGC of a child's build, from its plan's first byte
// on, unless the environment sets one. Its heap grows through the whole build
// (the rendered bodies stay), and every page it grows by is a page fault:
// 8.5 µs each in a VM, a fifth of the child's CPU at the default 100. At 50
// an 18-locale build took 67,000-75,000 faults instead of 87,000-96,000 and
// no more CPU (BENCHMARKS.md § Stop 31).
const childGCPercent = 50

// handshakeWait is how long a child has to say what it is.
var handshakeWait = 10 * time.Second

// executable is the program started as the child (tests start others).
var executable = os.Executable

// maxPlan bounds what a child reads: more than any version's files.
const maxPlan = 1 << 31

// partLimit bounds what the server reads from a child for a plan whose files
// are n bytes. A part holds each new body's bytes, gzip and ETags; language=all
// bodies repeat an en-US-only version's text per locale, so its rendered bytes
// are many times its files' (a whole version: 17.7× on the sample data, 12.3×
// on a real en-US capture, 5.5× on the synthetic 18-locale one; TestPartLimit).
func partLimit(n int64) int64 { return 64<<20 + 64*n }

// ServeIfChild makes the process a builder child when a server started it as
// one: it reads a plan on standard input, builds it, writes the part on
// standard output and exits. Otherwise it returns at once. main and every
// TestMain of a package that serves call it first.
func ServeIfChild() {
	if os.Getenv(childEnv) == "" {
		return
	}
	if idle() {
		cores.IdlePriority()
	}
	planGC := func() {}
	if os.Getenv("GOGC") == "" {
		planGC = func() { debug.SetGCPercent(childGCPercent) }
	}
	widen := cores.ChildBudget()
	if err := serveChild(os.Stdin, os.Stdout, planGC, widen); err != nil {
		fmt.Fprintln(os.Stderr, "builder child:", err)
		os.Exit(1)
	}
	os.Exit(0)
}

// widenAfter is how long a build runs on the procs the server leaves free
// (cores.ChildBudget) before it takes them all: a small version's build ends
// within it or soon after on one thread (an en-US one in 346–458 ms, against
// 284–354 on two; BENCHMARKS.md § Stop 36), beside the requests; a large one
// must still go live within seconds.
var widenAfter = 300 * time.Millisecond

// serveChild answers the handshake, reads a plan from in, builds it and writes
// the part to out; planGC sets the collector for the plan and its build when
// the plan's first byte comes, and widen gives the build every proc once it
// has run widenAfter.
func serveChild(in io.Reader, out io.Writer, planGC, widen func()) error {
	if _, err := io.WriteString(out, handshake); err != nil {
		return err
	}
	// The build's normalization needs openapi.yaml parsed (76 ms of CPU):
	// parsed while the plan arrives, or while a spare waits for one.
	go func() { _, _ = catalog.Spec() }()
	r := bufio.NewReaderSize(in, 256<<10)
	if _, err := r.Peek(1); err == io.EOF {
		return nil // a spare whose server stopped without a build for it
	}
	// Not before: at childGCPercent the start's small heap (openapi.yaml's
	// parse) was collected 18 times, against 8 or 9 at the runtime's default
	// (BENCHMARKS.md § Stop 41).
	planGC()
	plan, err := catalog.ReadPlan(r, maxPlan)
	if err != nil {
		return err
	}
	t := time.AfterFunc(widenAfter, widen)
	defer t.Stop()
	ed, err := catalog.BuildPart(plan)
	if err != nil {
		return err
	}
	return catalog.WritePart(out, ed, plan)
}

var state struct {
	mu      sync.Mutex
	enabled bool
	log     *slog.Logger
	spare   *spare
}

// A spare is a builder child started ahead of the build that takes it, so a
// publish does not wait for one to start: the exec, the Go runtime and the
// parse of openapi.yaml, 0.26 CPU-s that a child at idle priority beside a
// loaded server got only slowly (BENCHMARKS.md § Stop 35). It waits
// on its standard input, costing no CPU; it is stopped by Disable, and exits
// by itself when the server's end of the pipe closes.
type spare struct {
	exe    string
	normal string // NormalPriorityEnv when it started: a child reads it then
	cmd    *exec.Cmd
	in     io.WriteCloser
	out    io.ReadCloser
}

func (s *spare) stop() {
	if s == nil {
		return
	}
	_ = s.cmd.Process.Kill()
	_ = s.in.Close()
	_ = s.out.Close()
	_ = s.cmd.Wait()
}

// Enable makes Build build in a child process, and starts the first one;
// log receives its failures (the build then goes on in-process).
func Enable(log *slog.Logger) {
	if os.Getenv(childEnv) != "" {
		return
	}
	state.mu.Lock()
	state.enabled, state.log = true, log
	state.mu.Unlock()
	Replenish()
}

// Disable makes later builds run in-process, and stops the spare child.
func Disable() {
	state.mu.Lock()
	s := state.spare
	state.enabled, state.spare = false, nil
	state.mu.Unlock()
	s.stop()
}

// Replenish starts the next build's spare child when builds go to children
// and none waits. A build by a child takes the spare and does not start the
// next: its caller calls Replenish once the swap it led to is done with the
// CPU (a build whose child failed starts it itself). Started at once, the
// spare's start (the runtime's and openapi.yaml's, about 130 ms of CPU) fell
// just before the swap and then beside the compression child's brotli of the
// new bodies, and two busy processes at idle priority cost the requests more
// than one (BENCHMARKS.md § Stop 35, § Stop 40). A child that does not start
// here is started (and its failure reported) by the build that needs it.
func Replenish() {
	exe, err := executable()
	if err != nil {
		return
	}
	state.mu.Lock()
	defer state.mu.Unlock()
	if !state.enabled || state.spare != nil {
		return
	}
	cmd, in, out, err := cores.StartChild(exe, childEnv, idle())
	if err != nil {
		return
	}
	state.spare = &spare{exe: exe, normal: os.Getenv(NormalPriorityEnv), cmd: cmd, in: in, out: out}
	if state.log != nil {
		state.log.Debug("started the next build's builder child", "pid", cmd.Process.Pid)
	}
}

// startChild takes the spare when it is what a child started now would be
// (the same program and priority), else starts one; ahead says which.
func startChild(exe string) (cmd *exec.Cmd, in io.WriteCloser, out io.ReadCloser, ahead bool, err error) {
	state.mu.Lock()
	s := state.spare
	state.spare = nil
	state.mu.Unlock()
	if s != nil && s.exe == exe && s.normal == os.Getenv(NormalPriorityEnv) {
		return s.cmd, s.in, s.out, true, nil
	}
	s.stop()
	cmd, in, out, err = cores.StartChild(exe, childEnv, idle())
	return cmd, in, out, false, err
}

func enabled() (bool, *slog.Logger) {
	state.mu.Lock()
	defer state.mu.Unlock()
	return state.enabled, state.log
}

// Build builds files after prev (catalog.BuildFilesReusing's result), in a
// child process when Enable was called and one does the work, else here. The
// in-process parts borrow the free cores (cores.Borrow); waiting for the child
// does not.
func Build(files map[string][]byte, prev *catalog.Edition) (*catalog.Edition, error) {
	on, log := enabled()
	if on {
		ed, err := buildInChild(files, prev, log)
		if err == nil {
			return ed, nil
		}
		// The child may have been the spare, and no swap may follow to start
		// the next (Replenish): start it once this build is done.
		defer Replenish()
		if log != nil {
			log.Warn("the builder child did not build the version; building in-process", "err", err)
		}
	}
	defer cores.Borrow()()
	return catalog.BuildFilesReusing(files, prev)
}

// errStarved: the child got too little CPU to finish soon.
var errStarved = errors.New("the builder child is starved of CPU (the machine is busy)")

func buildInChild(files map[string][]byte, prev *catalog.Edition, log *slog.Logger) (*catalog.Edition, error) {
	giveBack := cores.Borrow()
	plan := catalog.PlanBuild(files, prev)
	giveBack()
	exe, err := executable()
	if err != nil {
		return nil, fmt.Errorf("find the executable: %w", err)
	}
	cmd, in, out, ahead, err := startChild(exe)
	if err != nil {
		return nil, err
	}
	var size int64
	for _, b := range plan.Files {
		size += int64(len(b))
	}
	type result struct {
		ed  *catalog.Edition
		err error
	}
	done := make(chan result, 1)
	var greeted, arriving atomic.Bool
	go func() {
		ed, err := readChild(out, plan, prev, size, &greeted, &arriving)
		done <- result{ed, err}
	}()
	go func() {
		// The plan goes in beside the read: the child answers the handshake
		// before it reads.
		_ = catalog.WritePlan(in, plan)
		_ = in.Close()
	}()
	watch := newWatch(cmd.Process.Pid)
	tick := time.NewTicker(Patience)
	defer tick.Stop()
	began := time.Now()
	stop := func(err error) (*catalog.Edition, error) {
		_ = cmd.Process.Kill()
		<-done
		_ = cmd.Wait()
		return nil, err
	}
	for {
		select {
		case r := <-done:
			if r.err != nil {
				_ = cmd.Process.Kill()
				_ = cmd.Wait()
				return nil, r.err
			}
			if err := cmd.Wait(); err != nil {
				return nil, fmt.Errorf("builder child: %w", err)
			}
			if log != nil {
				log.Debug("the builder child built the version", "pid", cmd.Process.Pid, "started_ahead", ahead, "took", time.Since(began))
			}
			return r.ed, nil
		case <-tick.C:
			switch {
			case !greeted.Load() && time.Since(began) > handshakeWait:
				return stop(errors.New("no handshake from the builder child"))
			case !arriving.Load() && watch.starved():
				// Once the part arrives the child waits on the pipe, not
				// on the CPU.
				return stop(errStarved)
			}
		}
	}
}

// readChild reads the handshake, waits for the part to begin, and reads it
// with the free cores borrowed: the new bodies and their ETags are the part
// of a version's load left in the server.
func readChild(out io.Reader, plan *catalog.BuildPlan, prev *catalog.Edition, size int64, greeted, arriving *atomic.Bool) (*catalog.Edition, error) {
	r := bufio.NewReaderSize(out, 256<<10)
	line, err := r.ReadString('\n')
	if err == nil && line != handshake {
		err = errors.New("the executable does not speak the build protocol")
	}
	if err != nil {
		return nil, fmt.Errorf("builder child handshake: %w", err)
	}
	greeted.Store(true)
	if _, err := r.Peek(1); err != nil {
		return nil, fmt.Errorf("builder child: %w", err)
	}
	arriving.Store(true)
	defer cores.Borrow()()
	return catalog.ReadPart(r, partLimit(size), plan, prev)
}
