package pipeline_test

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/refdata/refdata/blob"
	"github.com/refdata/refdata/edition"
	"github.com/refdata/refdata/pipeline"
	"github.com/refdata/refdata/representation"
	"github.com/refdata/refdata/router/apitest"
	"github.com/refdata/refdata/store"
	"github.com/refdata/refdata/store/storetest"
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
			_, err = pipeline.Import(st, os.Getenv("REFDATA_CRASH_SNAP"), pipeline.Options{Retain: 1, Effort: effort, Bulk: true})
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
// intact, its edition index the one an uninterrupted import stores and its
// segments serving every route as that import's do; that importing the same
// snapshot again then succeeds; and that a next import, which publishes and
// sweeps, leaves no segment or snapshot file unreferenced and none missing.
// Retain 1 makes the import prune and sweep too, and the store it starts from
// holds a segment and a file a crashed import left unpublished, so the crash
// points cover every kind of step: the snapshot files, the segment's rename,
// the index, the version, the diff, the pointer, pruning and the sweep of
// segments and of files.
func TestCrashSafety(t *testing.T) {
	t.Parallel()
	sample, _ := baseStore(t, "14")
	base := filepath.Join(t.TempDir(), "base")
	copyDir(t, sample, base)
	plantOrphans(t, base)
	snap := fixtureDir(t, "15")
	// A next version, to import after each crash: it always publishes, so its
	// sweep runs.
	next := filepath.Join(t.TempDir(), "next")
	copyDir(t, snap, next)
	const nextID = "05E83EB5E32657BA"
	edit(t, next, "version.json", func(v any) any { v.(map[string]any)["manifestId"] = nextID; return v })

	// Name the write steps of an uninterrupted import, and keep its result.
	ref := filepath.Join(t.TempDir(), "ref")
	copyDir(t, base, ref)
	refStore := openStore(t, ref)
	var names []string
	refStore.OnStep = func(what string) { names = append(names, what) }
	if _, err := pipeline.Import(refStore, snap, pipeline.Options{Retain: 1, Effort: crashEffort, Bulk: true}); err != nil {
		t.Fatal(err)
	}
	steps := len(names)
	want := map[string][]byte{}             // manifestId → edition index
	wantEd := map[string]*edition.Edition{} // manifestId → what it serves
	for _, dir := range []string{base, ref} {
		st := openStore(t, dir)
		_, m, index, why, err := store.ResolveWith(st, st.ReadIndex)
		if err != nil || why != "" {
			t.Fatalf("%s: %v %s", dir, err, why)
		}
		want[m.ManifestID] = index
		if wantEd[m.ManifestID], err = decodeFrom(st, index); err != nil {
			t.Fatal(err)
		}
	}

	// The first step of each kind (a kind is a step's name without the names
	// it writes), the last step, spread points among the steps repeated per
	// snapshot file or swept name, and random delays; the short form (make
	// test; make test-race thins it, below) no spread points and fewer
	// delays. No step before an fsync: for a process killed (not a machine
	// stopped), the store before an fsync is the store before the step after
	// it.
	short := raceOn || testing.Short()
	spread, randoms, minRuns := 14, 6, 20
	if short {
		spread, randoms, minRuns = 0, 2, 15
	}
	var points []int
	kinds := map[string]int{} // kind → its first step
	repeated := map[string]bool{"write file.*": true, "sweep *.gz": true, "sweep *.seg": true}
	for n := 1; n <= steps; n++ {
		// names[n-1] is the step the child pauses before at n.
		k := stepKind(names[n-1])
		_, seen := kinds[k]
		if !seen {
			kinds[k] = n
		}
		switch {
		case n == steps:
		case strings.HasPrefix(k, "fsync "):
			continue
		case !seen:
		case spread > 0 && repeated[k] && n%max(1, steps/spread) == 0:
		default:
			continue
		}
		points = append(points, n)
	}
	if raceOn {
		// Each run is an import in a race-built child and two imports after
		// it, several times slower under the race detector, which looks at
		// the same code at every point: a third of the points and the last
		// (make test crashes at each), one random delay.
		var thinned []int
		for i, n := range points {
			if i%3 == 0 || i == len(points)-1 {
				thinned = append(thinned, n)
			}
		}
		points, randoms, minRuns = thinned, 1, 5
	}
	for _, k := range []string{"write INDEX.gz", "fsync INDEX.gz", "write file.*", "rename segment into segments/",
		"rename version into versions/", "rename ACTIVE", "prune *", "sweep *.seg", "sweep *.gz"} {
		if _, ok := kinds[k]; !ok {
			t.Fatalf("the import took no step %q: %q", k, slices.Sorted(maps.Keys(kinds)))
		}
	}
	newID := mustID(t, ref)
	runs := 0
	check := func(t *testing.T, dir string) {
		st := openStore(t, dir)
		// As a server starts: the active version's edition, checked, and
		// every body of every route read from its segments.
		p, _, index, why, err := store.ResolveWith(st, st.ReadIndex)
		if err != nil || why != "" {
			t.Fatalf("store does not open cleanly: %v %s", err, why)
		}
		w, ok := want[p.ManifestID]
		if !ok {
			t.Fatalf("active version %s is neither the old nor the new one", p.ManifestID)
		}
		if !bytes.Equal(index, w) {
			t.Fatalf("active version %s has another edition index (%d bytes, want %d)", p.ManifestID, len(index), len(w))
		}
		ed, err := decodeFrom(st, index)
		if err != nil {
			t.Fatalf("active version %s: %v", p.ManifestID, err)
		}
		apitest.SameEdition(t, wantEd[p.ManifestID], ed)

		// Leftovers of the crash must not block the next import.
		rep, err := pipeline.Import(st, snap, pipeline.Options{Retain: 1, Effort: crashEffort, Bulk: true})
		if err != nil {
			t.Fatalf("import after the crash: %v", err)
		}
		if p, _, index, _, err := store.ResolveWith(st, st.ReadIndex); err != nil || p.ManifestID != newID || !bytes.Equal(index, want[newID]) {
			t.Fatalf("after re-import (%s) the active version is %s (%v), its index the uninterrupted import's: %v", rep.Outcome, p.ManifestID, err, bytes.Equal(index, want[newID]))
		}
		rep, err = pipeline.Import(st, next, pipeline.Options{Retain: 1, Effort: crashEffort, Bulk: true})
		if err != nil || rep.Outcome != "published" || rep.ManifestID != nextID {
			t.Fatalf("the next import: %s %q, %v", rep.ManifestID, rep.Outcome, err)
		}
		if extra, missing := storetest.Unreferenced(t, st); len(extra) > 0 || len(missing) > 0 {
			t.Fatalf("after the next import's sweep: %d unreferenced %.3q, %d missing %.3q", len(extra), extra, len(missing), missing)
		}
		ed, _, err = loadEdition(st, nextID)
		if err != nil {
			t.Fatal(err)
		}
		apitest.Complete(t, ed)
	}
	for _, n := range points {
		runs++
		t.Run(fmt.Sprintf("step%d", n), func(t *testing.T) {
			t.Parallel()
			dir := filepath.Join(t.TempDir(), "store")
			copyDir(t, base, dir)
			crashChild(t, dir, snap, fmt.Sprint(n), 0)
			check(t, dir)
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
			check(t, dir)
		})
	}
	if runs < minRuns {
		t.Errorf("only %d crash runs", runs)
	}
}

// crashEffort is what the crash test's imports compress at, in every tier:
// it crashes between write steps, which compressing harder does not change,
// and at the served levels each import in a child (a process of its own,
// compressing every body again) took most of the test's time.
var crashEffort = representation.Fast

// stepKind is a write step's name without the names it writes (hexadecimal
// sums, manifest IDs, random suffixes) or the directory it syncs.
func stepKind(name string) string {
	k := hexRun.ReplaceAllString(name, "*")
	if strings.HasPrefix(k, "fsync dir ") && !slices.Contains([]string{"files", "segments", "versions", "diffs"}, k[len("fsync dir "):]) {
		return "fsync dir *"
	}
	return k
}

var hexRun = regexp.MustCompile(`[0-9A-Fa-f]{12,}(\.[0-9a-f]{12})?`)

// plantOrphans puts into a store a segment and a snapshot file no version
// names, as an import killed before it published leaves them.
func plantOrphans(t *testing.T, dir string) {
	t.Helper()
	w, err := blob.NewWriter(filepath.Join(dir, "tmp"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := w.Append([]byte(`{"status":200,"data":"a body of an import that never published"}`)); err != nil {
		t.Fatal(err)
	}
	seg, err := w.Finish()
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(seg.Path, blob.Path(filepath.Join(dir, "segments"), seg.Sum)); err != nil {
		t.Fatal(err)
	}
	file := []byte(`{"status":200,"data":"a file of an import that never published"}`)
	if err := os.WriteFile(filepath.Join(dir, "files", store.Sum(file)+".gz"), store.CompressFile(file), 0o644); err != nil {
		t.Fatal(err)
	}
	if extra, _ := storetest.Unreferenced(t, openStore(t, dir)); len(extra) != 2 {
		t.Fatalf("planted orphans: %q", extra)
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
	effort, err := json.Marshal(crashEffort)
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
