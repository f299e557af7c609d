package pipeline

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/refdata/refdata/store"
)

// readyFile marks an inbox folder as complete: a folder is imported only once
// it appears, so a half-copied snapshot is never read.
const readyFile = "READY"

// Inbox subdirectories for folders that were handled.
const (
	doneDir   = ".done"
	failedDir = ".failed"
)

// Watch imports snapshot folders dropped into inbox until ctx ends: every
// interval it looks for folders holding a READY file, imports them oldest name
// first, and moves each to inbox/.done/ or, with its report as NAME.report.txt,
// to inbox/.failed/. published is called after each successful publish.
func Watch(ctx context.Context, inbox string, st store.Backend, opt Options, interval time.Duration, logger *slog.Logger, published func()) error {
	for _, d := range []string{doneDir, failedDir} {
		if err := os.MkdirAll(filepath.Join(inbox, d), 0o755); err != nil {
			return fmt.Errorf("watch %s: %w", inbox, err)
		}
	}
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		if err := ScanInbox(inbox, st, opt, logger, published); err != nil {
			logger.Error("inbox scan failed", "inbox", inbox, "err", err)
		}
		select {
		case <-ctx.Done():
			return nil
		case <-t.C:
		}
	}
}

// ScanInbox imports every ready folder of inbox once.
func ScanInbox(inbox string, st store.Backend, opt Options, logger *slog.Logger, published func()) error {
	entries, err := os.ReadDir(inbox)
	if err != nil {
		return err
	}
	var ready []string
	for _, e := range entries {
		if !e.IsDir() || strings.HasPrefix(e.Name(), ".") {
			continue
		}
		if _, err := os.Stat(filepath.Join(inbox, e.Name(), readyFile)); err == nil {
			ready = append(ready, e.Name())
		}
	}
	for _, name := range ready {
		src := filepath.Join(inbox, name)
		rep, err := Import(st, src, opt)
		var buf bytes.Buffer
		rep.Write(&buf)
		dest := filepath.Join(inbox, doneDir, name)
		if err != nil {
			dest = filepath.Join(inbox, failedDir, name)
		}
		if _, serr := os.Stat(dest); serr == nil {
			dest += "." + time.Now().UTC().Format("20060102T150405.000000000")
		}
		if err != nil {
			fmt.Fprintf(&buf, "error: %v\n", err)
			logger.Error("inbox import failed", "folder", name, "err", err, "report", buf.String())
			if werr := os.WriteFile(dest+".report.txt", buf.Bytes(), 0o644); werr != nil {
				return werr
			}
		} else {
			logger.Info("inbox import", "folder", name, "outcome", rep.Outcome, "manifest_id", rep.ManifestID)
			if rep.Outcome == "published" && published != nil {
				published()
			}
		}
		if err := os.Rename(src, dest); err != nil {
			return fmt.Errorf("move %s aside: %w", name, err)
		}
	}
	return nil
}
