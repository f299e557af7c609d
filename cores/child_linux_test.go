package cores

import (
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
	cmd, in, out, err := StartChild("/bin/cat", "REFDATA_TEST_CHILD")
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
	cmd, in, out, err := StartChild("/usr/bin/env", "REFDATA_TEST_CHILD")
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
