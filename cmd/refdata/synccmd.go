package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"time"

	"github.com/refdata/refdata/catalog"
	"github.com/refdata/refdata/mirror"
	"github.com/refdata/refdata/pipeline"
	"github.com/refdata/refdata/store"
	"github.com/refdata/refdata/upstream"
)

// version names this build in the User-Agent sent upstream.
var version = "dev"

// syncFlags are the flags sync and serve --sync share.
type syncFlags struct {
	contact, languageAll         string
	concurrency, retries, retain int
	requestTimeout, timeout      time.Duration
	contentCheck                 time.Duration
	allowShrink                  bool
	maxBody, maxSnapshot         int64
}

func (sf *syncFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&sf.contact, "contact", env("REFDATA_CONTACT", ""), "your URL or mail address, sent in the User-Agent so the upstream's operator can reach you (env REFDATA_CONTACT)")
	fs.StringVar(&sf.languageAll, "language-all", "auto", "ask ?language=all: auto (when the upstream's /openapi.json advertises it), always, never")
	fs.IntVar(&sf.concurrency, "concurrency", upstream.DefaultConcurrency, "requests to the upstream in flight at once")
	fs.IntVar(&sf.retries, "retries", upstream.DefaultRetries, "retries of a failed request (backoff with jitter; Retry-After honoured)")
	fs.DurationVar(&sf.requestTimeout, "request-timeout", upstream.DefaultRequestTimeout, "timeout of one request")
	fs.DurationVar(&sf.timeout, "sync-timeout", mirror.DefaultTimeout, "deadline of one whole sync")
	fs.DurationVar(&sf.contentCheck, "content-check", mirror.DefaultContentCheck, "fetch and hash everything this often even when /v1/version is unchanged")
	fs.Int64Var(&sf.maxBody, "max-body-bytes", upstream.DefaultMaxBodyBytes, "largest answer read from the upstream")
	fs.Int64Var(&sf.maxSnapshot, "max-snapshot-bytes", pipeline.DefaultMaxSnapshotBytes, "most bytes of answers held for one snapshot")
	fs.BoolVar(&sf.allowShrink, "allow-shrink", false, "publish even when the shrink guard refuses (an emptied or halved catalog)")
}

func (sf *syncFlags) follower(from string, st store.Backend, logger *slog.Logger, m *mirror.Metrics, im *pipeline.Metrics, progress func(int, int)) (*mirror.Follower, error) {
	c, err := upstream.New(upstream.Config{
		BaseURL: from, UserAgent: upstream.UserAgent(version, sf.contact),
		Concurrency: sf.concurrency, RequestTimeout: sf.requestTimeout, Retries: sf.retries,
		MaxBodyBytes: sf.maxBody, Observe: m.Observe,
	})
	if err != nil {
		return nil, err
	}
	return mirror.New(mirror.Options{
		Client: c, Store: st, Logger: logger, Metrics: m, Progress: progress,
		ContentCheck: sf.contentCheck, Timeout: sf.timeout, LanguageAll: sf.languageAll,
		Import: pipeline.Options{Retain: sf.retain, AllowShrink: sf.allowShrink, Metrics: im, MaxSnapshotBytes: sf.maxSnapshot},
	})
}

// syncCmd runs `refdata sync --from URL [--data DIR] [--once | --every 5m]`.
func syncCmd(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("sync", flag.ContinueOnError)
	fs.SetOutput(stderr)
	from := fs.String("from", env("REFDATA_SYNC_FROM", ""), "the upstream's root URL, e.g. https://valorant-api.com (env REFDATA_SYNC_FROM)")
	data := storeFlag(fs, "data", dataUsage)
	once := fs.Bool("once", false, "sync once and exit (the default without --every)")
	every := fs.Duration("every", 0, "sync now and then at this interval until interrupted, e.g. 5m")
	var sf syncFlags
	sf.register(fs)
	fs.IntVar(&sf.retain, "retain", envInt("REFDATA_RETAIN", pipeline.DefaultRetain), "versions to keep")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *from == "" || fs.NArg() != 0 {
		fs.Usage()
		return errors.New("want --from URL and no arguments")
	}
	if *once && *every > 0 {
		return errors.New("--once and --every exclude each other")
	}
	st, closeStore, err := openBackend(ctx, data())
	if err != nil {
		return err
	}
	defer closeStore()
	logger := newLogger(stderr, slog.LevelInfo)
	f, err := sf.follower(*from, st, logger, nil, nil, syncProgress(stderr))
	if err != nil {
		return err
	}
	if *every > 0 {
		f.Run(ctx, *every, nil)
		return nil
	}
	res, err := f.Sync(ctx)
	endProgress(stderr)
	if res != nil && res.Report != nil {
		out := stdout
		if err != nil {
			out = stderr
		}
		res.Report.Write(out)
	}
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "sync: %s %s from %s in %d requests, %s", res.Outcome, res.ManifestID, *from, res.Requests, res.Duration.Round(time.Millisecond))
	if len(res.Lacking) > 0 {
		fmt.Fprintf(stdout, "; the upstream lacks (carried over): %v", res.Lacking)
	}
	fmt.Fprintln(stdout)
	for _, n := range res.Notes {
		fmt.Fprintln(stdout, "note:", n)
	}
	return nil
}

// syncProgress rewrites one line on a terminal; elsewhere it says nothing
// (the log has each sync's outcome).
func syncProgress(w io.Writer) func(done, total int) {
	if !isTerminal(w) {
		return nil
	}
	start := time.Now()
	return func(done, total int) {
		fmt.Fprintf(w, "\r\033[K[%6.2fs] fetch %d/%d requests", time.Since(start).Seconds(), done, total)
	}
}

// activateCmd runs `refdata activate [--data DIR] MANIFEST_ID`.
func activateCmd(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("activate", flag.ContinueOnError)
	fs.SetOutput(stderr)
	data := storeFlag(fs, "data", dataUsage)
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() != 1 || !catalog.IsManifestID(fs.Arg(0)) {
		return errors.New("usage: refdata activate [--data DIR | --store URL] MANIFEST_ID (16 hex digits, from /v1/versions)")
	}
	ctx, cancel := context.WithTimeout(ctx, pipeline.DefaultLockTimeout)
	defer cancel()
	st, closeStore, err := openBackend(ctx, data())
	if err != nil {
		return err
	}
	defer closeStore()
	p, err := pipeline.Activate(ctx, st, fs.Arg(0), time.Now())
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "active: %s (previous %s); a running serve picks it up at its next poll\n", p.ManifestID, p.Previous)
	return nil
}
