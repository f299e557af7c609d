package pipeline_test

import (
	"context"
	"errors"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/refdata/refdata/pipeline"
	"github.com/refdata/refdata/router/apitest"
	"github.com/refdata/refdata/store"
)

// TestHostileSnapshots: files an attacker or a careless operator leaves in a
// snapshot are refused with a report naming them, within the limits, and the
// store — every byte, the active pointer included — is unchanged.
func TestHostileSnapshots(t *testing.T) {
	t.Parallel()
	base, _ := baseStore(t, "14")
	good := fixtureDir(t, "15")
	outside := filepath.Join(t.TempDir(), "maps.json")
	b, _ := os.ReadFile(filepath.Join(good, "en-US/maps.json"))
	if err := os.WriteFile(outside, b, 0o644); err != nil {
		t.Fatal(err)
	}
	replace := func(t *testing.T, d, file string, make func(p string) error) {
		p := filepath.Join(d, file)
		os.Remove(p)
		if err := make(p); err != nil {
			t.Fatal(err)
		}
	}
	cases := []struct {
		name   string
		break_ func(t *testing.T, dir string)
		opt    pipeline.Options
		want   string
	}{
		{"invalid UTF-8", func(t *testing.T, d string) {
			write(t, d, "en-US/maps.json", "{\"status\":200,\"data\":[{\"uuid\":\"x\",\"displayName\":\"Asc\xffent\"}]}")
		}, options(), "en-US/maps.json at /: invalid UTF-8 at byte 52"},
		{"symlink to /dev/zero", func(t *testing.T, d string) {
			replace(t, d, "en-US/maps.json", func(p string) error { return os.Symlink("/dev/zero", p) })
		}, options(), "en-US/maps.json at /: refused"},
		{"symlink out of the snapshot", func(t *testing.T, d string) {
			replace(t, d, "en-US/maps.json", func(p string) error { return os.Symlink(outside, p) })
		}, options(), "symlinks must stay inside the snapshot"},
		{"FIFO", func(t *testing.T, d string) {
			replace(t, d, "en-US/maps.json", func(p string) error { return syscall.Mkfifo(p, 0o644) })
		}, options(), "not a regular file"},
		{"oversize file", func(t *testing.T, d string) {}, pipeline.Options{Effort: apitest.Effort(), MaxFileBytes: 4096}, "larger than the per-file limit of 4096 bytes"},
		{"oversize snapshot", func(t *testing.T, d string) {}, pipeline.Options{Effort: apitest.Effort(), MaxSnapshotBytes: dirSize(t, good) / 2}, "exceeds its limit"},
		{"too deep JSON", func(t *testing.T, d string) {
			write(t, d, "en-US/flex.json", `{"status":200,"data":[`+strings.Repeat("[", 100)+strings.Repeat("]", 100)+`]}`)
		}, options(), "nested deeper than 64 levels"},
		{"emptied catalog", func(t *testing.T, d string) {
			write(t, d, "en-US/weapons.json", `{"status":200,"data":[]}`)
			dropTranslations(t, d, "weapons.json")
		}, options(), "weapons at /: emptied"},
		{"halved catalog", func(t *testing.T, d string) {
			edit(t, d, "en-US/maps.json", func(v any) any { a := v.([]any); return a[:len(a)/2] })
			dropTranslations(t, d, "maps.json")
		}, options(), "maps at /: removes"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			storeDir := filepath.Join(t.TempDir(), "store")
			copyDir(t, base, storeDir)
			before := treeHash(t, storeDir)
			snap := filepath.Join(t.TempDir(), "snap")
			copyDir(t, good, snap)
			tc.break_(t, snap)

			st := openStore(t, storeDir)
			active, _, _ := st.Active()
			rep, err := pipeline.Import(st, snap, tc.opt)
			if !errors.Is(err, pipeline.ErrRejected) {
				t.Fatalf("err = %v, want a rejection", err)
			}
			var b strings.Builder
			rep.Write(&b)
			if rep.Outcome != "rejected" || !strings.Contains(b.String(), tc.want) {
				t.Errorf("report does not say %q:\n%s", tc.want, b.String())
			}
			if after := treeHash(t, storeDir); !maps.Equal(before, after) {
				t.Errorf("the store changed:\nbefore %v\nafter  %v", before, after)
			}
			if now, _, _ := st.Active(); now != active {
				t.Errorf("active version %v, want %v", now, active)
			}
		})
	}
}

// TestShrinkAllowed: --allow-shrink publishes what the guard refused, and says so.
func TestShrinkAllowed(t *testing.T) {
	t.Parallel()
	st := openStore(t, storeFrom(t, "14"))
	snap := fixtureDir(t, "15")
	edit(t, snap, "en-US/maps.json", func(v any) any { a := v.([]any); return a[:len(a)/2] })
	dropTranslations(t, snap, "maps.json")
	rep, err := pipeline.Import(st, snap, pipeline.Options{Effort: apitest.Effort(), AllowShrink: true})
	if err != nil || rep.Outcome != "published" {
		t.Fatalf("outcome %q, err %v", rep.Outcome, err)
	}
	var b strings.Builder
	rep.Write(&b)
	if !strings.Contains(b.String(), "allowed by --allow-shrink: maps removes") {
		t.Errorf("report does not name the allowed shrink:\n%s", b.String())
	}
}

// TestLockHeld: an import or an activate waits for another's lock, says
// whose it is, gives up at its timeout, and leaves the store as it was.
func TestLockHeld(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name    string
		run     func(st *store.Store, progress func(pipeline.Stage, string)) error
		wantErr string
	}{
		{"import", func(st *store.Store, progress func(pipeline.Stage, string)) error {
			_, err := pipeline.Import(st, fixtureDir(t, "15"), pipeline.Options{
				Effort: apitest.Effort(), LockTimeout: 100 * time.Millisecond, Progress: progress})
			return err
		}, "--lock-timeout"},
		{"activate", func(st *store.Store, _ func(pipeline.Stage, string)) error {
			ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
			defer cancel()
			_, err := pipeline.Activate(ctx, st, mustID(t, st.Dir()), time.Now())
			return err
		}, "gave up waiting for the store lock"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			dir := storeFrom(t, "14")
			before := treeHash(t, dir)
			other := openStore(t, dir)
			unlock, err := other.Lock(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			defer unlock()
			var said []string
			err = tc.run(openStore(t, dir), func(_ pipeline.Stage, d string) { said = append(said, d) })
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) || !strings.Contains(err.Error(), "held by pid ") {
				t.Errorf("err = %v, want a lock timeout naming the holder", err)
			}
			if tc.name == "import" && !strings.Contains(strings.Join(said, "\n"), "waiting for the store lock held by pid ") {
				t.Errorf("progress did not report the wait: %q", said)
			}
			if after := treeHash(t, dir); !maps.Equal(before, after) {
				t.Error("the store changed")
			}
		})
	}
}

// TestCancelled: an import whose context has ended (SIGINT, SIGTERM, deadline)
// stops and leaves the store as it was.
func TestCancelled(t *testing.T) {
	t.Parallel()
	dir := storeFrom(t, "14")
	before := treeHash(t, dir)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err := pipeline.Import(openStore(t, dir), fixtureDir(t, "15"), pipeline.Options{Effort: apitest.Effort(), Context: ctx})
	if !errors.Is(err, context.Canceled) {
		t.Errorf("err = %v, want context.Canceled", err)
	}
	if after := treeHash(t, dir); !maps.Equal(before, after) {
		t.Error("the store changed")
	}
}

// dropTranslations removes a catalog's translations, so a gutted en-US file is
// the snapshot's only problem.
func dropTranslations(t *testing.T, dir, file string) {
	t.Helper()
	ms, _ := filepath.Glob(filepath.Join(dir, "*", file))
	for _, m := range ms {
		if filepath.Base(filepath.Dir(m)) != "en-US" {
			if err := os.Remove(m); err != nil {
				t.Fatal(err)
			}
		}
	}
}

// dirSize sums the sizes of the files under dir.
func dirSize(t *testing.T, dir string) int64 {
	t.Helper()
	var n int64
	err := filepath.WalkDir(dir, func(_ string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		fi, err := d.Info()
		n += fi.Size()
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return n
}
