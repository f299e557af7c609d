package builder_test

import (
	"bytes"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/refdata/refdata/api/apitest"
	"github.com/refdata/refdata/builder"
	"github.com/refdata/refdata/catalog"
	"github.com/refdata/refdata/fixtures"
	"github.com/refdata/refdata/representation"
)

// TestMain: this test binary is also the builder child (apitest.Setup calls
// builder.ServeIfChild).
func TestMain(m *testing.M) { apitest.Main(m) }

// versions builds sample version 14 as the served edition (gzipped, as a
// server has it) and returns it with version 15's files and the edition this
// process builds from them after it.
func versions(t *testing.T) (prev *catalog.Edition, files map[string][]byte, want *catalog.Edition) {
	t.Helper()
	old, err := fixtures.Files(fixtures.Versions()[0], testing.Short())
	if err != nil {
		t.Fatal(err)
	}
	if files, err = fixtures.Files(fixtures.Versions()[1], testing.Short()); err != nil {
		t.Fatal(err)
	}
	if prev, err = catalog.BuildFiles(old); err != nil {
		t.Fatal(err)
	}
	representation.CompressGzipAll(prev.Bodies())
	if want, err = catalog.BuildFilesReusing(files, prev); err != nil {
		t.Fatal(err)
	}
	representation.Reuse(want.Bodies(), prev.Bodies())
	representation.CompressGzipAll(want.Bodies())
	return prev, files, want
}

func enable(t *testing.T) *bytes.Buffer {
	t.Helper()
	logs := new(bytes.Buffer)
	builder.Enable(slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug})))
	t.Cleanup(builder.Disable)
	return logs
}

// builtBy reads the debug line of the last build a child did: its process ID
// and whether it was the spare started ahead.
func builtBy(t *testing.T, logs *bytes.Buffer) (pid int, ahead bool) {
	t.Helper()
	all := regexp.MustCompile(`msg="the builder child built the version" pid=(\d+) started_ahead=(true|false)`).FindAllStringSubmatch(logs.String(), -1)
	if len(all) == 0 {
		t.Fatalf("no build by a child logged: %s", logs)
	}
	m := all[len(all)-1]
	pid, _ = strconv.Atoi(m[1])
	return pid, m[2] == "true"
}

// childBuildsOnABusyMachine keeps the builder child from being replaced for
// the rest of t: other test binaries may keep the cores busy.
func childBuildsOnABusyMachine(t *testing.T) {
	t.Setenv(builder.NormalPriorityEnv, "1")
	patience := builder.Patience
	builder.Patience = time.Hour
	t.Cleanup(func() { builder.Patience = patience })
}

// TestChildBuildsTheEdition: the child builds what this process would, and
// the bodies arrive gzipped (built here, they would not be yet).
func TestChildBuildsTheEdition(t *testing.T) {
	prev, files, want := versions(t)
	childBuildsOnABusyMachine(t)
	logs := enable(t)
	got, err := builder.Build(files, prev)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(logs.String(), "in-process") {
		t.Fatalf("built in-process: %s", logs)
	}
	for _, b := range got.Bodies() {
		if _, made := b.Gzipped(); !made {
			t.Fatal("a body arrived without its gzip: not built by the child")
		}
	}
	apitest.SameEdition(t, want, got)
}

// TestTheSpareBuilds: Enable starts a child ahead; a build takes it and does
// not start the next one (the swap's compression runs then); Replenish does,
// and the next build takes that.
func TestTheSpareBuilds(t *testing.T) {
	prev, files, want := versions(t)
	childBuildsOnABusyMachine(t)
	logs := enable(t)
	for i := range 2 {
		spare := builder.SparePID()
		if spare == 0 {
			t.Fatalf("build %d: no spare child waits", i)
		}
		got, err := builder.Build(files, prev)
		if err != nil {
			t.Fatal(err)
		}
		if pid, ahead := builtBy(t, logs); pid != spare || !ahead {
			t.Fatalf("build %d: built by %d (started ahead: %v), want the spare %d", i, pid, ahead, spare)
		}
		if next := builder.SparePID(); next != 0 {
			t.Fatalf("build %d: spare %d started at once after it", i, next)
		}
		builder.Replenish()
		if next := builder.SparePID(); next == 0 || next == spare {
			t.Fatalf("build %d: spare after it %d, want a new one (was %d)", i, next, spare)
		}
		apitest.SameEdition(t, want, got)
	}
}

// TestAStaleSpareIsNotTaken: a spare started before the priority a child
// reads from the environment changed is replaced by a child started now.
func TestAStaleSpareIsNotTaken(t *testing.T) {
	prev, files, _ := versions(t)
	t.Setenv(builder.NormalPriorityEnv, "") // the spare starts at idle priority, whatever the caller's environment
	logs := enable(t)
	spare := builder.SparePID()
	childBuildsOnABusyMachine(t)
	if _, err := builder.Build(files, prev); err != nil {
		t.Fatal(err)
	}
	if pid, ahead := builtBy(t, logs); pid == spare || ahead {
		t.Fatalf("built by %d (started ahead: %v): the spare %d started at idle priority", pid, ahead, spare)
	}
}

// TestASpareLeftWithoutAPlanExitsQuietly: a spare whose server closed the pipe
// without a plan (it stopped) exits without an error; a plan cut short is one.
// The build's collector setting waits for the plan's first byte.
func TestASpareLeftWithoutAPlanExitsQuietly(t *testing.T) {
	var out bytes.Buffer
	planGC := 0
	if err := builder.ServeChild(strings.NewReader(""), &out, func() { planGC++ }, func() {}); err != nil {
		t.Errorf("no plan: %v, want nil", err)
	}
	if out.String() != "refdata-build/1\n" {
		t.Errorf("no plan: wrote %q, want the handshake alone", out.String())
	}
	if planGC != 0 {
		t.Error("no plan: the build's collector setting was applied")
	}
	if err := builder.ServeChild(strings.NewReader("refdata-pl"), io.Discard, func() { planGC++ }, func() {}); err == nil {
		t.Error("a plan cut short: nil error")
	}
	if planGC != 1 {
		t.Errorf("a plan began: the build's collector setting applied %d times, want once", planGC)
	}
}

// TestALongBuildTakesEveryProc: a child's build runs on the procs the server
// leaves free until it has run for widenAfter, then on all of them; one that
// ends sooner never takes more.
func TestALongBuildTakesEveryProc(t *testing.T) {
	prev, files, _ := versions(t)
	var plan bytes.Buffer
	if err := catalog.WritePlan(&plan, catalog.PlanBuild(files, prev)); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name  string
		after time.Duration
		widen bool
	}{
		{"outlasts the wait", 0, true},
		{"ends within it", time.Hour, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			defer builder.WidenAfter(tc.after)()
			widened := make(chan struct{}, 1)
			if err := builder.ServeChild(bytes.NewReader(plan.Bytes()), io.Discard, func() {}, func() { widened <- struct{}{} }); err != nil {
				t.Fatal(err)
			}
			if !tc.widen {
				select {
				case <-widened:
					t.Error("a build that ended within widenAfter took every proc")
				default:
				}
				return
			}
			select {
			case <-widened:
			case <-time.After(time.Minute):
				t.Error("a build that outlasted widenAfter did not take every proc")
			}
		})
	}
}

// TestBuildsHereWhenTheChildDoesNot: a child that exits, is not a builder,
// sends a broken or endless part, says nothing, or gets no CPU, is replaced by
// building in-process: the same edition, and a warning.
func TestBuildsHereWhenTheChildDoesNot(t *testing.T) {
	prev, files, want := versions(t)
	for _, tc := range []struct{ name, script string }{
		{"exits", "exit 3"},
		{"not a builder", "echo PASS"},
		{"broken part", `printf 'refdata-build/1\nrefdata-part/2\n\377\377\377\377'; cat >/dev/null`},
		{"endless", `printf 'refdata-build/1\n'; exec cat /dev/zero`},
		{"silent", "exec sleep 30"},
		{"starved", `printf 'refdata-build/1\n'; exec sleep 30`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			exe := filepath.Join(t.TempDir(), "child")
			if err := os.WriteFile(exe, []byte("#!/bin/sh\n"+tc.script+"\n"), 0o755); err != nil {
				t.Fatal(err)
			}
			defer builder.StartInstead(exe)()
			logs := enable(t)
			got, err := builder.Build(files, prev)
			if err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(logs.String(), "building in-process") {
				t.Errorf("no warning: %q", logs)
			}
			representation.CompressGzipAll(got.Bodies())
			apitest.SameEdition(t, want, got)
		})
	}
}

// TestBadDataFailsInEitherPlace: files that cannot be built fail Build with
// the build's error, child or not; no swap follows, so the build that took
// the spare starts the next.
func TestBadDataFailsInEitherPlace(t *testing.T) {
	prev, files, _ := versions(t)
	files["en-US/maps.json"] = []byte(`{"status":200,"data":[{"uuid":"not-a-uuid"}]}`)
	for _, child := range []bool{false, true} {
		spare := 0
		if child {
			enable(t)
			if spare = builder.SparePID(); spare == 0 {
				t.Fatal("no spare child waits")
			}
		}
		if _, err := builder.Build(files, prev); err == nil {
			t.Errorf("child %v: a broken maps.json built", child)
		}
		if next := builder.SparePID(); child && (next == 0 || next == spare) {
			t.Errorf("after a failed build: spare %d, want a new one (was %d)", next, spare)
		}
	}
}
