package main

import (
	"context"
	"fmt"
	"io"
	iofs "io/fs"
	"log/slog"
	"os"
	"time"

	"github.com/refdata/refdata/pipeline"
)

// importCmd validates a snapshot and publishes it.
func importCmd(ctx context.Context, c *cli) error {
	fs := c.fs
	c.section("Store")
	data := storeFlags(c, "data", "")
	retain := fs.Int("retain", pipeline.DefaultRetain, "versions to keep, the new one included")
	lockTimeout := fs.Duration("lock-timeout", pipeline.DefaultLockTimeout, "how long to wait for another import's store lock")
	force := fs.Bool("force", false, "re-validate and re-publish a manifestId already stored (replacing its files; it becomes the active version)")
	c.section("Import")
	names := fs.String("names", "", "a directory of name files (<catalog>/<locale>.json, arrays of {uuid, displayName, …}) to take as translations where the snapshot has none")
	allowShrink := fs.Bool("allow-shrink", false, "publish even when a catalog is emptied or loses more than --shrink-limit of its items")
	shrinkLimit := fs.Float64("shrink-limit", pipeline.DefaultShrinkLimit, "share of a catalog's items a version may remove (0.2 = 20%)")
	maxFile := fs.Int64("max-file-bytes", pipeline.DefaultMaxFileBytes, "largest snapshot file read")
	maxSnap := fs.Int64("max-snapshot-bytes", pipeline.DefaultMaxSnapshotBytes, "most bytes read from one snapshot")
	maxDepth := fs.Int("max-json-depth", pipeline.DefaultMaxJSONDepth, "deepest JSON nesting accepted in a snapshot file")
	timeout := fs.Duration("timeout", 0, "give up the whole import after this long, store untouched (0: no deadline)")
	bulk := fs.Bool("bulk-files", false, "also make the version's bulk files (GET /v1/versions/{id}/bulk, NDJSON per language); each changes whole with any item, so a version stores about a third more")
	var mf mediaFlags
	mf.register(fs, false)
	args, err := c.parse(1)
	switch {
	case err != nil:
		return err
	case checkStore(data()) != nil:
		return checkStore(data())
	case mf.check(data()) != nil:
		return mf.check(data())
	case *retain < 1:
		return usagef("--retain %d: keep at least 1 version", *retain)
	case c.dryRun:
		c.would("import %s into %s, keeping %d versions", args[0], describeStore(data()), *retain)
		return nil
	}
	st, closeStore, err := openBackend(ctx, data(), false)
	if err != nil {
		return err
	}
	defer closeStore()
	if *timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, *timeout)
		defer cancel()
	}
	lib, err := mf.open(data())
	if err != nil {
		return err
	}
	var nameFiles iofs.FS // --names, nil when not given
	if *names != "" {
		nameFiles = os.DirFS(*names)
	}
	rep, err := pipeline.Import(st, args[0], pipeline.Options{
		Retain: *retain, Progress: progress(c.stderr), Context: ctx,
		LockTimeout: *lockTimeout, MaxFileBytes: *maxFile, MaxSnapshotBytes: *maxSnap, MaxJSONDepth: *maxDepth,
		AllowShrink: *allowShrink, ShrinkLimit: *shrinkLimit, Force: *force, Names: nameFiles, MediaURL: mf.rewrite(lib),
		Bulk: *bulk,
	})
	endProgress(c.stderr)
	out := c.stdout
	if err != nil {
		out = c.stderr
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
