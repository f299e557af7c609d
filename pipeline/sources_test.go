package pipeline_test

import (
	"context"
	"encoding/json"
	"log/slog"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/refdata/refdata/fixtures"
	"github.com/refdata/refdata/pipeline"
	"github.com/refdata/refdata/router/apitest"
)

// TestWatch: the watcher picks up a folder that becomes ready after it started,
// reports the publish, and returns when its context ends.
func TestWatch(t *testing.T) {
	t.Parallel()
	inbox := t.TempDir()
	st := openStore(t, t.TempDir())
	ctx, cancel := context.WithCancel(context.Background())
	published := make(chan struct{}, 1)
	done := make(chan error, 1)
	go func() {
		done <- pipeline.Watch(ctx, inbox, st, options(), 5*time.Millisecond, slog.New(slog.DiscardHandler), func() { published <- struct{}{} })
	}()
	copyDir(t, fixtureDir(t, "14"), filepath.Join(inbox, "v14"))
	write(t, filepath.Join(inbox, "v14"), "READY", "")
	select {
	case <-published:
	case err := <-done:
		t.Fatalf("Watch returned %v before it imported the ready folder", err)
	}
	cancel()
	if err := <-done; err != nil {
		t.Errorf("Watch returned %v after its context ended", err)
	}
	if _, err := os.Stat(filepath.Join(inbox, ".done", "v14", "version.json")); err != nil {
		t.Errorf("the imported folder is not in .done: %v", err)
	}
	if p, _, err := st.Active(); err != nil || p.ManifestID != "376A04CC95974716" {
		t.Errorf("active %q, %v", p.ManifestID, err)
	}

	// An inbox that cannot be made is an error, not a silent loop.
	file := filepath.Join(t.TempDir(), "not-a-dir")
	write(t, filepath.Dir(file), "not-a-dir", "")
	if err := pipeline.Watch(context.Background(), file, st, options(), time.Hour, slog.New(slog.DiscardHandler), nil); err == nil || !strings.Contains(err.Error(), file) {
		t.Errorf("Watch on a file: %v", err)
	}
}

// readTree reads every file under dir, keyed by slash path.
func readTree(t *testing.T, dir string) map[string][]byte {
	t.Helper()
	out := map[string][]byte{}
	for rel := range treeHash(t, dir) {
		b, err := os.ReadFile(filepath.Join(dir, rel))
		if err != nil {
			t.Fatal(err)
		}
		out[filepath.ToSlash(rel)] = b
	}
	return out
}

// TestImportFiles: files handed over in memory (as sync builds them) publish
// the same version as the directory they came from; paths the layout does not
// name are ignored and reported; over a limit, nothing is stored.
func TestImportFiles(t *testing.T) {
	t.Parallel()
	dir := fixtureDir(t, "15")
	files := readTree(t, dir)

	base, _ := baseStore(t, "15")
	want := openStore(t, base)
	_, wantManifest, err := loadEdition(want, "05E83EB5E32657B9")
	if err != nil {
		t.Fatal(err)
	}

	st := openStore(t, t.TempDir())
	extra := maps.Clone(files)
	extra["en-US/unknown.json"] = []byte(`{}`)
	extra["../escape.json"] = []byte(`{}`)
	rep, err := pipeline.ImportFiles(st, "upstream test", extra, options())
	if err != nil || rep.Outcome != "published" || rep.Source != "upstream test" {
		t.Fatalf("ImportFiles: %v, %+v", err, rep)
	}
	for _, p := range []string{"en-US/unknown.json", "../escape.json"} {
		if !slices.Contains(rep.Ignored, p) {
			t.Errorf("%s is not reported ignored: %q", p, rep.Ignored)
		}
	}
	_, got, err := loadEdition(st, rep.ManifestID)
	if err != nil {
		t.Fatal(err)
	}
	if !maps.Equal(got.Files, wantManifest.Files) {
		t.Error("the files imported from memory differ from the directory's import")
	}

	empty := t.TempDir()
	small := openStore(t, empty)
	before := treeHash(t, empty)
	rep, err = pipeline.ImportFiles(small, "upstream test", files, pipeline.Options{Effort: apitest.Effort(), MaxFileBytes: 1024})
	if err == nil || rep.Outcome != "rejected" {
		t.Errorf("over the file limit: %v, outcome %q", err, rep.Outcome)
	}
	if after := treeHash(t, empty); !maps.Equal(before, after) {
		t.Error("a rejected import changed the store")
	}
}

// TestCaptureWithLocaleFolder: a capture whose en-US payloads sit in an en-US/
// folder imports as the same version as the flat capture; a top-level file wins
// over the folder's copy, which is reported, as is anything else in the folder.
func TestCaptureWithLocaleFolder(t *testing.T) {
	t.Parallel()
	root := fixtures.SharedData(t, "upstream-en-US")
	caps, _ := filepath.Glob(filepath.Join(root, "15_*"))
	if len(caps) != 1 {
		t.Fatalf("%d captures 15 in %s, want 1", len(caps), root)
	}
	flat := openStore(t, t.TempDir())
	want := mustImport(t, flat, caps[0])
	_, wantManifest, err := loadEdition(flat, want.ManifestID)
	if err != nil {
		t.Fatal(err)
	}

	dir := filepath.Join(t.TempDir(), "capture")
	copyDir(t, caps[0], dir)
	if err := os.Mkdir(filepath.Join(dir, "en-US"), 0o755); err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{"maps.json", "agents.json", "skins.json"} {
		if err := os.Rename(filepath.Join(dir, f), filepath.Join(dir, "en-US", f)); err != nil {
			t.Fatal(err)
		}
	}
	// A stale copy in the folder: the top-level weapons.json must win.
	write(t, filepath.Join(dir, "en-US"), "weapons.json", `{"status":200,"data":[]}`)
	write(t, filepath.Join(dir, "en-US"), "notes.txt", "captured by hand")

	st := openStore(t, t.TempDir())
	rep := mustImport(t, st, dir)
	if rep.Layout != pipeline.CaptureLayout || rep.Outcome != "published" {
		t.Fatalf("layout %q, outcome %q", rep.Layout, rep.Outcome)
	}
	for _, p := range []string{"en-US/weapons.json", "en-US/notes.txt"} {
		if !slices.Contains(rep.Ignored, p) {
			t.Errorf("%s is not reported ignored: %q", p, rep.Ignored)
		}
	}
	_, got, err := loadEdition(st, rep.ManifestID)
	if err != nil {
		t.Fatal(err)
	}
	if !maps.Equal(got.Files, wantManifest.Files) {
		for f, sum := range wantManifest.Files {
			if got.Files[f] != sum {
				t.Errorf("%s differs from the flat capture's", f)
			}
		}
		t.Errorf("the capture with an en-US folder stored other files than the flat capture: %d files, want %d; report %+v", len(got.Files), len(wantManifest.Files), rep)
	}
}

// TestWeaponsWithSkins: sync's view of the capture rule — the dedicated skins
// endpoint replaces the weapons' nested skins, and the weapons file is what
// importing the two answers as a capture would write.
func TestWeaponsWithSkins(t *testing.T) {
	t.Parallel()
	weapons := `{"status":200,"data":[{"uuid":"00000000-0000-0000-0000-000000000001","displayName":"W",
		"skins":[{"uuid":"00000000-0000-0000-0000-0000000000a1","displayName":"old"}]}]}`
	skins := `{"status":200,"data":[{"uuid":"00000000-0000-0000-0000-0000000000a1","displayName":"new"}]}`
	b, notes, err := pipeline.WeaponsWithSkins([]byte(weapons), []byte(skins))
	if err != nil {
		t.Fatal(err)
	}
	var env struct {
		Data []struct {
			Skins []struct{ DisplayName string }
		}
	}
	if err := json.Unmarshal(b, &env); err != nil || len(env.Data) != 1 || len(env.Data[0].Skins) != 1 || env.Data[0].Skins[0].DisplayName != "new" {
		t.Errorf("weapons file %s (%v)", b, err)
	}
	if len(notes) == 0 {
		t.Error("a disagreement between the endpoints was not reported")
	}
	for _, tc := range []struct{ weapons, skins, want string }{
		{`{"status":200,"data":[`, skins, "weapons"},
		{weapons, `[1,2`, "weapons/skins"},
	} {
		if _, _, err := pipeline.WeaponsWithSkins([]byte(tc.weapons), []byte(tc.skins)); err == nil || !strings.HasPrefix(err.Error(), tc.want+":") {
			t.Errorf("bad %s answer: %v", tc.want, err)
		}
	}
}
