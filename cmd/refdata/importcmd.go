package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"strconv"
	"time"

	"github.com/refdata/refdata/pipeline"
	"github.com/refdata/refdata/store"
)

// importCmd runs `refdata import [--data DIR] [--retain N] SNAPSHOT_DIR`.
func importCmd(args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("import", flag.ContinueOnError)
	fs.SetOutput(stderr)
	data := fs.String("data", env("REFDATA_DATA", "data"), "version store directory (env REFDATA_DATA)")
	retain := fs.Int("retain", envInt("REFDATA_RETAIN", pipeline.DefaultRetain), "versions to keep, the new one included (env REFDATA_RETAIN)")
	fs.Usage = func() {
		fmt.Fprintln(stderr, "usage: refdata import [--data DIR] [--retain N] SNAPSHOT_DIR")
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
	st, err := store.Open(*data)
	if err != nil {
		return err
	}
	rep, err := pipeline.Import(st, fs.Arg(0), pipeline.Options{Retain: *retain, Progress: progress(stderr)})
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
	if f, ok := w.(*os.File); ok && isTerminal(f) {
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
	if f, ok := w.(*os.File); ok && isTerminal(f) {
		fmt.Fprint(w, "\r\033[K")
	}
}

func envInt(name string, def int) int {
	if v, err := strconv.Atoi(os.Getenv(name)); err == nil {
		return v
	}
	return def
}
