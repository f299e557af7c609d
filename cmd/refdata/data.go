package main

import (
	"context"
	"errors"
	"log/slog"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/refdata/refdata/catalog"
	"github.com/refdata/refdata/follow"
	"github.com/refdata/refdata/impl"
	"github.com/refdata/refdata/live"
	"github.com/refdata/refdata/pipeline"
	"github.com/refdata/refdata/store"
)

// dataOptions are serve's flags for the version store.
type dataOptions struct {
	dir    string        // --data
	inbox  string        // --watch
	poll   time.Duration // --poll
	retain int           // --retain, for imports from the inbox
	// --sync, --sync-every and the sync flags: follow an upstream.
	syncFrom  string
	syncEvery time.Duration
	sync      *syncFlags
}

// storeRepository serves the store in opts.dir: it polls the active pointer and,
// with an inbox, imports the folders dropped there. Goroutines end with ctx.
func storeRepository(ctx context.Context, opts dataOptions, reg prometheus.Registerer, logger *slog.Logger) (impl.Repository, error) {
	metrics := pipeline.NewMetrics(reg, processStart)
	st, err := store.Open(opts.dir)
	if err != nil {
		return nil, err
	}
	// The embedded sample data is built only for a store with no intact version:
	// building (and compressing) it beside the real one would slow start-up and
	// hold memory for nothing.
	repo, err := live.Open(st, logger, metrics, nil)
	if errors.Is(err, store.ErrNotFound) {
		var fallback *catalog.Edition
		if fallback, err = embeddedEdition(); err != nil {
			return nil, err
		}
		repo, err = live.Open(st, logger, metrics, fallback)
	}
	if err != nil {
		return nil, err
	}
	go repo.Poll(ctx, opts.poll)
	if opts.inbox != "" {
		go func() {
			opt := pipeline.Options{Retain: opts.retain, Metrics: metrics}
			reload := func() { _, _ = repo.Reload() }
			if err := pipeline.Watch(ctx, opts.inbox, st, opt, opts.poll, logger, reload); err != nil {
				logger.Error("inbox watcher stopped", "inbox", opts.inbox, "err", err)
			}
		}()
	}
	if opts.syncFrom != "" {
		f, err := opts.sync.follower(opts.syncFrom, st, logger, follow.NewMetrics(reg), metrics, nil)
		if err != nil {
			return nil, err
		}
		go f.Run(ctx, opts.syncEvery, func() { _, _ = repo.Reload() })
	}
	return repo, nil
}

var processStart = time.Now()
