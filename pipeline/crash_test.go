package pipeline_test

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/refdata/refdata/api/apitest"
	"github.com/refdata/refdata/edition"
	"github.com/refdata/refdata/pipeline"
	"github.com/refdata/refdata/representation"
	"github.com/refdata/refdata/store"
)

// TestMain doubles as the crash test's child: with REFDATA_CRASH_CHILD set, the
// test binary only imports one snapshot and exits.
func TestMain(m *testing.M) {
	if os.Getenv("REFDATA_CRASH_CHILD") != "" {
		st, err := store.Open(os.Getenv("REFDATA_CRASH_STORE"))
		if at, perr := strconv.ParseInt(os.Getenv("REFDATA_CRASH_PAUSE_AT"), 10, 64); perr == nil && err == nil {
			// Announce the step on stderr and wait there to be killed.
			var n int64
			st.OnStep = func(what string) {
				if n++; n == at {
					fmt.Fprintf(os.Stderr, "REFDATA_PAUSED %d %s\n", n, what)
					select {}
				}
			}
		}
		var effort representation.Effort
		if err == nil {
			err = json.Unmarshal([]byte(os.Getenv("REFDATA_CRASH_EFFORT")), &effort)
		}
		if err == nil {
			_, err = pipeline.Import(st, os.Getenv("REFDATA_CRASH_SNAP"), pipeline.Options{Retain: 1, Effort: effort})
		}
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	var err error
	if sharedDir, err = os.MkdirTemp("", "pipeline-test-"); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	code := m.Run()
	os.RemoveAll(sharedDir)
	os.Exit(code)
}

// TestCrashSafety kills an import with SIGKILL at many points — paused before a
// chosen write step (store.Store.OnStep), or after a random delay — and checks
// each time that the store opens with the old or the new version active and
// intact, its edition pack the one an uninterrupted import stores, and that
// importing again then succeeds. Retain 1 makes the import prune too, so the
// crash points cover pruning; the writes of the version's EDITION.pack are
// always among them.
func TestCrashSafety(t *testing.T) {
	t.Parallel()
	base, _ := baseStore(t, "14")
	snap := fixtureDir(t, "15")

	// Name the write steps of an uninterrupted import, and keep its result.
	ref := filepath.Join(t.TempDir(), "ref")
	copyDir(t, base, ref)
	refStore := openStore(t, ref)
	var names []string
	refStore.OnStep = func(what string) { names = append(names, what) }
	if _, err := pipeline.Import(refStore, snap, pipeline.Options{Retain: 1, Effort: apitest.Effort()}); err != nil {
		t.Fatal(err)
	}
	steps := len(names)
	want := map[string][]byte{} // manifestId → edition pack
	for _, dir := range []string{base, ref} {
		st := openStore(t, dir)
		_, m, pack, why, err := store.ResolveWith(st, st.ReadEdition)
		if err != nil || why != "" {
			t.Fatalf("%s: %v %s", dir, err, why)
		}
		want[m.ManifestID] = pack
	}

	// Every step near the end (rename, diff, pointer, prune), spread points
	// before, and random delays; the short form (make test, make test-race)
	// spreads fewer points over the early steps, where each write is alike.
	spread, randoms := 14, 8
	if raceOn || testing.Short() {
		spread, randoms = 4, 4
	}
	var points []int
	pack := 0
	for n := 1; n <= steps; n++ {
		// names[n-1] is the step the child pauses before at n.
		if strings.HasSuffix(names[n-1], " EDITION.pack") {
			pack++
			points = append(points, n)
			continue
		}
		if n > steps-14 || n%max(1, steps/spread) == 0 {
			points = append(points, n)
		}
	}
	if pack != 2 {
		t.Fatalf("the import wrote and fsynced EDITION.pack in %d steps, want 2: %q", pack, names)
	}
	newID := mustID(t, ref)
	runs := 0
	check := func(t *testing.T, dir string, reimport bool) {
		st := openStore(t, dir)
		// As a server starts: the active version's edition, checked.
		p, _, pack, why, err := store.ResolveWith(st, st.ReadEdition)
		if err != nil || why != "" {
			t.Fatalf("store does not open cleanly: %v %s", err, why)
		}
		body, ok := want[p.ManifestID]
		if !ok {
			t.Fatalf("active version %s is neither the old nor the new one", p.ManifestID)
		}
		if !bytes.Equal(pack, body) {
			t.Fatalf("active version %s has another edition pack (%d bytes, want %d)", p.ManifestID, len(pack), len(body))
		}
		if _, err := edition.Decode(pack); err != nil {
			t.Fatalf("active version %s: %v", p.ManifestID, err)
		}
		if !reimport {
			return
		}
		if _, err := pipeline.Import(st, snap, pipeline.Options{Retain: 1, Effort: apitest.Effort()}); err != nil {
			t.Fatalf("import after the crash: %v", err)
		}
		if p, _, pack, _, err := store.ResolveWith(st, st.ReadEdition); err != nil || p.ManifestID != newID || !bytes.Equal(pack, want[newID]) {
			t.Fatalf("after re-import the active version is %s (%v), its pack the uninterrupted import's: %v", p.ManifestID, err, bytes.Equal(pack, want[newID]))
		}
	}
	for _, n := range points {
		runs++
		t.Run(fmt.Sprintf("step%d", n), func(t *testing.T) {
			t.Parallel()
			dir := filepath.Join(t.TempDir(), "store")
			copyDir(t, base, dir)
			crashChild(t, dir, snap, fmt.Sprint(n), 0)
			check(t, dir, n > steps-14) // leftovers of a late crash must not block the next import
		})
	}
	rng := rand.New(rand.NewPCG(1, 2))
	for i := 0; i < randoms; i++ {
		runs++
		d := time.Duration(rng.IntN(600)) * time.Millisecond
		t.Run(fmt.Sprintf("after%v", d), func(t *testing.T) {
			t.Parallel()
			dir := filepath.Join(t.TempDir(), "store")
			copyDir(t, base, dir)
			crashChild(t, dir, snap, "", d)
			check(t, dir, true)
		})
	}
	if runs < 20 {
		t.Errorf("only %d crash runs", runs)
	}
}

func mustID(t *testing.T, dir string) string {
	p, _, err := openStore(t, dir).Active()
	if err != nil {
		t.Fatal(err)
	}
	return p.ManifestID
}

// crashChild runs the import in a child process and SIGKILLs it when it pauses
// at step pauseAt, or after delay.
func crashChild(t *testing.T, storeDir, snap, pauseAt string, delay time.Duration) {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	effort, err := json.Marshal(apitest.Effort())
	if err != nil {
		t.Fatal(err)
	}
	cmd.Env = append(os.Environ(), "REFDATA_CRASH_CHILD=1", "REFDATA_CRASH_STORE="+storeDir, "REFDATA_CRASH_SNAP="+snap,
		"REFDATA_CRASH_PAUSE_AT="+pauseAt, "REFDATA_CRASH_EFFORT="+string(effort))
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	paused := make(chan bool, 1)
	go func() {
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			if strings.HasPrefix(sc.Text(), "REFDATA_PAUSED") {
				paused <- true
				break
			}
		}
		_, _ = bufio.NewReader(stderr).WriteTo(new(bytes.Buffer))
		close(paused)
	}()
	if pauseAt != "" {
		if !<-paused {
			_ = cmd.Wait()
			t.Fatalf("the import never paused at step %s: it ran to its end", pauseAt)
		}
	} else {
		time.Sleep(delay)
	}
	_ = cmd.Process.Signal(syscall.SIGKILL)
	_ = cmd.Wait()
}
