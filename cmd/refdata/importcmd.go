package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	iofs "io/fs"
	"log/slog"
	"os"
	"strconv"
	"time"

	"github.com/refdata/refdata/pipeline"
)

// importCmd runs `refdata import [--data DIR] [--retain N] SNAPSHOT_DIR`.
func importCmd(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("import", flag.ContinueOnError)
	fs.SetOutput(stderr)
	data := storeFlag(fs, "data", dataUsage)
	retain := fs.Int("retain", envInt("REFDATA_RETAIN", pipeline.DefaultRetain), "versions to keep, the new one included (env REFDATA_RETAIN)")
	lockTimeout := fs.Duration("lock-timeout", pipeline.DefaultLockTimeout, "how long to wait for another import's store lock")
	timeout := fs.Duration("timeout", 0, "give up the whole import after this long, store untouched (0: no deadline)")
	maxFile := fs.Int64("max-file-bytes", pipeline.DefaultMaxFileBytes, "largest snapshot file read")
	maxSnap := fs.Int64("max-snapshot-bytes", pipeline.DefaultMaxSnapshotBytes, "most bytes read from one snapshot")
	maxDepth := fs.Int("max-json-depth", pipeline.DefaultMaxJSONDepth, "deepest JSON nesting accepted in a snapshot file")
	allowShrink := fs.Bool("allow-shrink", false, "publish even when a catalog is emptied or loses more than --shrink-limit of its items")
	force := fs.Bool("force", false, "re-validate and re-publish a manifestId already stored (replacing its files; it becomes the active version)")
	names := fs.String("names", "", "a directory of name files (<catalog>/<locale>.json, arrays of {uuid, displayName, …}) to take as translations where the snapshot has none")
	shrinkLimit := fs.Float64("shrink-limit", pipeline.DefaultShrinkLimit, "share of a catalog's items a version may remove (0.2 = 20%)")
	fs.Usage = func() {
		fmt.Fprintln(stderr, "usage: refdata import [--data DIR] [--retain N] [--lock-timeout D] [--allow-shrink] [--max-file-bytes N] … SNAPSHOT_DIR")
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() != 1 {
		fs.Usage()
		return errors.New("want exactly one SNAPSHOT_DIR")
	}
	if *retain < 1 {
		return fmt.Errorf("--retain %d: keep at least 1 version", *retain)
	}
	st, closeStore, err := openBackend(ctx, data())
	if err != nil {
		return err
	}
	defer closeStore()
	if *timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, *timeout)
		defer cancel()
	}
	var nameFiles iofs.FS // --names, nil when not given
	if *names != "" {
		nameFiles = os.DirFS(*names)
	}
	rep, err := pipeline.Import(st, fs.Arg(0), pipeline.Options{
		Retain: *retain, Progress: progress(stderr), Context: ctx,
		LockTimeout: *lockTimeout, MaxFileBytes: *maxFile, MaxSnapshotBytes: *maxSnap, MaxJSONDepth: *maxDepth,
		AllowShrink: *allowShrink, ShrinkLimit: *shrinkLimit, Force: *force, Names: nameFiles,
	})
	endProgress(stderr)
	out := stdout
	if err != nil {
		out = stderr
	}
	rep.Write(out)
	return err
}

// progress shows the stage on one rewritten line on a terminal, and as plain log
// lines otherwise (so CI logs and files stay readable).
func progress(w io.Writer) func(pipeline.Stage, string) {
	if isTerminal(w) {
		start := time.Now()
		return func(s pipeline.Stage, detail string) {
			fmt.Fprintf(w, "\r\033[K[%6.2fs] %-8s %s", time.Since(start).Seconds(), s, detail)
		}
	}
	logger := slog.New(slog.NewTextHandler(w, nil))
	return func(s pipeline.Stage, detail string) {
		logger.Info("import", "stage", string(s), "detail", detail)
	}
}

func endProgress(w io.Writer) {
	if isTerminal(w) {
		fmt.Fprint(w, "\r\033[K")
	}
}

func envInt(name string, def int) int {
	if v, err := strconv.Atoi(os.Getenv(name)); err == nil {
		return v
	}
	return def
}
