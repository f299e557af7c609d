package pipeline_test

import (
	"bufio"
	"bytes"
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
	"github.com/refdata/refdata/catalog"
	"github.com/refdata/refdata/pipeline"
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
		if err == nil {
			_, err = pipeline.Import(st, os.Getenv("REFDATA_CRASH_SNAP"), pipeline.Options{Retain: 1})
		}
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	apitest.Main(m)
}

// TestCrashSafety kills an import with SIGKILL at many points — paused before a
// chosen write step (store.Store.OnStep), or after a random delay — and checks
// each time that the store opens with the old or the new version active and
// intact, and that importing again then succeeds. Retain 1 makes the import
// prune too, so the crash points cover pruning.
func TestCrashSafety(t *testing.T) {
	base := t.TempDir()
	mustImport(t, openStore(t, base), fixtureDir(t, "14"))
	snap := fixtureDir(t, "15")

	// Count the write steps of an uninterrupted import, and keep its result.
	ref := filepath.Join(t.TempDir(), "ref")
	copyDir(t, base, ref)
	refStore := openStore(t, ref)
	steps := 0
	refStore.OnStep = func(string) { steps++ }
	if _, err := pipeline.Import(refStore, snap, pipeline.Options{Retain: 1}); err != nil {
		t.Fatal(err)
	}
	want := map[string][]byte{}
	for _, dir := range []string{base, ref} {
		p, _, err := openStore(t, dir).Active()
		if err != nil {
			t.Fatal(err)
		}
		ed, _, err := loadEdition(openStore(t, dir), p.ManifestID)
		if err != nil {
			t.Fatal(err)
		}
		want[p.ManifestID] = ed.VersionBody().JSON
	}

	// Every step near the end (rename, diff, pointer, prune), spread points
	// before, and random delays; the short form (make test, make test-race)
	// spreads fewer points over the early steps, where each write is alike.
	spread, randoms := 14, 8
	if raceOn || testing.Short() {
		spread, randoms = 4, 4
	}
	var points []int
	for n := 1; n <= steps; n++ {
		if n > steps-14 || n%max(1, steps/spread) == 0 {
			points = append(points, n)
		}
	}
	newID := mustID(t, ref)
	runs := 0
	check := func(t *testing.T, dir string, reimport bool) {
		st := openStore(t, dir)
		p, why, err := st.Resolve()
		if err != nil || why != "" {
			t.Fatalf("store does not open cleanly: %v %s", err, why)
		}
		body, ok := want[p.ManifestID]
		if !ok {
			t.Fatalf("active version %s is neither the old nor the new one", p.ManifestID)
		}
		ed, _, err := loadEdition(st, p.ManifestID)
		if err != nil {
			t.Fatalf("active version %s does not load: %v", p.ManifestID, err)
		}
		if !bytes.Equal(ed.VersionBody().JSON, body) {
			t.Fatalf("active version %s has other bytes", p.ManifestID)
		}
		if !reimport {
			return
		}
		if _, err := pipeline.Import(st, snap, pipeline.Options{Retain: 1}); err != nil {
			t.Fatalf("import after the crash: %v", err)
		}
		if p, _, _ := st.Active(); p.ManifestID != newID {
			t.Fatalf("after re-import the active version is %s", p.ManifestID)
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
	cmd.Env = append(os.Environ(), "REFDATA_CRASH_CHILD=1", "REFDATA_CRASH_STORE="+storeDir, "REFDATA_CRASH_SNAP="+snap, "REFDATA_CRASH_PAUSE_AT="+pauseAt)
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

// loadEdition builds a stored version, as a server loads it.
func loadEdition(st *store.Store, id string) (*catalog.Edition, store.Manifest, error) {
	m, files, err := st.ReadVersion(id)
	if err != nil {
		return nil, m, err
	}
	ed, err := catalog.BuildFiles(files)
	return ed, m, err
}
