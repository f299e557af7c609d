package pipeline_test

import (
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/refdata/refdata/pipeline"
)

// TestScanInbox: a folder is imported once READY appears; done ones move to
// .done/, failed ones to .failed/ with their report.
func TestScanInbox(t *testing.T) {
	t.Parallel()
	inbox := t.TempDir()
	st := openStore(t, t.TempDir())
	copyDir(t, fixtureDir(t, "14"), filepath.Join(inbox, "a-good"))
	copyDir(t, fixtureDir(t, "15"), filepath.Join(inbox, "b-bad"))
	copyDir(t, fixtureDir(t, "15"), filepath.Join(inbox, "c-not-ready"))
	write(t, filepath.Join(inbox, "b-bad"), "en-US/maps.json", `{"status":200,"data":[`)
	for _, d := range []string{"a-good", "b-bad"} {
		write(t, filepath.Join(inbox, d), "READY", "")
	}
	published := 0
	logger := slog.New(slog.NewTextHandler(io.Discard, nil))
	for _, d := range []string{".done", ".failed"} {
		if err := os.MkdirAll(filepath.Join(inbox, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := pipeline.ScanInbox(inbox, st, options(), logger, func() { published++ }); err != nil {
		t.Fatal(err)
	}
	if published != 1 {
		t.Errorf("published %d, want 1", published)
	}
	for _, p := range []string{".done/a-good/version.json", ".failed/b-bad/version.json", "c-not-ready/version.json"} {
		if _, err := os.Stat(filepath.Join(inbox, p)); err != nil {
			t.Errorf("%s: %v", p, err)
		}
	}
	rep, err := os.ReadFile(filepath.Join(inbox, ".failed", "b-bad.report.txt"))
	if err != nil || !strings.Contains(string(rep), "truncated file") {
		t.Errorf("failed folder's report: %v\n%s", err, rep)
	}
	if p, _, err := st.Active(); err != nil || p.ManifestID != "376A04CC95974716" {
		t.Errorf("active %s, %v", p.ManifestID, err)
	}
}
