package deploy_test

import (
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"
)

// marker precedes each block of docs/operations.md that TestQuickStart runs.
const marker = "<!-- quickstart-test -->"

// TestQuickStart runs the marked blocks of docs/operations.md, in order, as
// one bash script from the clone's root, so the commands the doc shows are
// commands that work: build, import, serve, back up, restore, mirror. The
// ports 8080–8082 become free ones (other servers may hold those), and mktemp
// makes its directories in the test's own.
func TestQuickStart(t *testing.T) {
	if testing.Short() {
		t.Skip("builds refdata, imports a version twice and serves three stores: about a minute")
	}
	for _, tool := range []string{"bash", "curl", "flock", "tar", "make"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Fatalf("the quick start needs %s", tool)
		}
	}
	doc, err := os.ReadFile("../docs/operations.md")
	if err != nil {
		t.Fatal(err)
	}
	blocks := markedBlocks(string(doc))
	if len(blocks) != 3 {
		t.Fatalf("docs/operations.md: %d blocks marked %s, want 3", len(blocks), marker)
	}
	script := strings.Join(blocks, "\n")
	for _, port := range []string{"8080", "8081", "8082"} {
		script = strings.ReplaceAll(script, "127.0.0.1:"+port, "127.0.0.1:"+freePort(t))
	}
	// Servers left running by a failed step are stopped with the script.
	script = "set -euo pipefail -x\ntrap 'kill $(jobs -p) 2>/dev/null; wait' EXIT\n" + script

	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "bash", "-c", script)
	cmd.Dir = ".."
	cmd.Env = append(os.Environ(), "TMPDIR="+t.TempDir())
	// Its own process group, so a timeout stops the servers too.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	cmd.WaitDelay = 10 * time.Second
	start := time.Now()
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("the quick start failed (%v):\n%s", err, out)
	}
	// The sample version 15, served by the original and by the restored copy;
	// the mirror's /readyz names it as its store's active version.
	const v15 = `"manifestId":"05E83EB5E32657B9"`
	if n := strings.Count(string(out), v15); n != 2 {
		t.Errorf("/v1/version answered %s %d times, want 2 (the store and its restored copy):\n%s", v15, n, out)
	}
	if !strings.Contains(string(out), `"active":"05E83EB5E32657B9"`) {
		t.Errorf("the mirror's store never held version 15:\n%s", out)
	}
	t.Logf("the quick start ran in %s", time.Since(start).Round(time.Second))
}

// markedBlocks returns the body of each fenced block right after the marker.
func markedBlocks(doc string) []string {
	var blocks []string
	for _, part := range strings.Split(doc, marker)[1:] {
		part = strings.TrimLeft(part, "\n")
		if !strings.HasPrefix(part, "```sh\n") {
			continue
		}
		body, _, ok := strings.Cut(strings.TrimPrefix(part, "```sh\n"), "\n```")
		if ok {
			blocks = append(blocks, body)
		}
	}
	return blocks
}

func freePort(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return fmt.Sprint(ln.Addr().(*net.TCPAddr).Port)
}

// TestMakeRun: `make run` serves, and a SIGTERM to make stops the server: the
// recipe execs the binary it built, so the server is make's own child, which
// make passes the signal to (go run's child outlived a killed make).
func TestMakeRun(t *testing.T) {
	if testing.Short() {
		t.Skip("builds refdata and serves the embedded sample data")
	}
	addr := "127.0.0.1:" + freePort(t)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "make", "--no-print-directory", "run", "ADDR="+addr)
	cmd.Dir = ".."
	var out strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &out
	// A server that outlives make holds the output pipe open: Wait returns
	// anyway, and the check below names it.
	cmd.WaitDelay = 20 * time.Second
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	up := func() bool {
		c, err := net.DialTimeout("tcp", addr, time.Second)
		if err == nil {
			c.Close()
		}
		return err == nil
	}
	for !up() {
		if ctx.Err() != nil {
			t.Fatalf("make run never listened on %s:\n%s", addr, out.String())
		}
		time.Sleep(100 * time.Millisecond) // polling a port another process opens
	}
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	_ = cmd.Wait()
	if up() {
		t.Fatalf("the server still listens on %s after make got SIGTERM:\n%s", addr, out.String())
	}
}
