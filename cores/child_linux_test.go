package cores

import (
	"fmt"
	"io"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// TestStartChildGrowsPipes: both pipes to a child hold pipeSize bytes, where
// the machine allows it.
func TestStartChildGrowsPipes(t *testing.T) {
	max, err := os.ReadFile("/proc/sys/fs/pipe-max-size")
	if n, _ := strconv.Atoi(strings.TrimSpace(string(max))); err != nil || n < pipeSize {
		t.Skipf("pipes may not grow to %d bytes here (%q, %v)", pipeSize, max, err)
	}
	cmd, in, out, err := StartChild("/bin/cat", "REFDATA_TEST_CHILD", true)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = cmd.Process.Kill(); _ = cmd.Wait() }()
	for name, p := range map[string]any{"stdin": in, "stdout": out} {
		if size, ok := pipeFcntl(p, fGetPipeSize, 0); !ok || size != pipeSize {
			t.Errorf("%s: a pipe of %d bytes (read: %v), want %d", name, size, ok, pipeSize)
		}
	}
}

// TestStartChildTellsTheBudget: a serving process's child finds the procs
// serving leaves free in its environment.
func TestStartChildTellsTheBudget(t *testing.T) {
	t.Setenv("GOMAXPROCS", "")
	reset(t, 4)
	Limit(0)
	cmd, in, out, err := StartChild("/usr/bin/env", "REFDATA_TEST_CHILD", true)
	if err != nil {
		t.Fatal(err)
	}
	_ = in.Close()
	env, err := io.ReadAll(out)
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Wait(); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"REFDATA_TEST_CHILD=1", childProcsEnv + "=1"} {
		if !slices.Contains(strings.Split(string(env), "\n"), want) {
			t.Errorf("the child's environment lacks %s", want)
		}
	}
}

// TestStartChildIsIdle: an idle child is under SCHED_IDLE from the start,
// though it never calls IdlePriority itself (cat does not); any other keeps
// this process's policy.
func TestStartChildIsIdle(t *testing.T) {
	for _, tc := range []struct {
		idle bool
		want string
	}{{true, strconv.Itoa(schedIdle)}, {false, policy(t, "self")}} {
		t.Run(fmt.Sprintf("idle=%v", tc.idle), func(t *testing.T) {
			cmd, in, _, err := StartChild("/bin/cat", "REFDATA_TEST_CHILD", tc.idle)
			if err != nil {
				t.Fatal(err)
			}
			defer func() { _ = in.Close(); _ = cmd.Wait() }()
			if got := policy(t, strconv.Itoa(cmd.Process.Pid)); got != tc.want {
				t.Errorf("the child's scheduling policy is %s, want %s", got, tc.want)
			}
		})
	}
}

// policy reads a process's scheduling policy from /proc/PROC/stat: the 41st
// field of the line, the 39th after the command's closing parenthesis.
func policy(t *testing.T, proc string) string {
	t.Helper()
	stat, err := os.ReadFile("/proc/" + proc + "/stat")
	if err != nil {
		t.Fatal(err)
	}
	fields := strings.Fields(string(stat[strings.LastIndexByte(string(stat), ')')+1:]))
	if len(fields) < 39 {
		t.Fatalf("short /proc stat: %q", stat)
	}
	return fields[38]
}
