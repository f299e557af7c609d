package main

import (
	"context"
	"errors"
	"log/slog"
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/refdata/refdata/edition"
	"github.com/refdata/refdata/mirror"
	"github.com/refdata/refdata/pipeline"
	"github.com/refdata/refdata/replica"
	"github.com/refdata/refdata/store"
	"github.com/refdata/refdata/store/postgres"
)

// dataOptions are serve's flags for the version store.
type dataOptions struct {
	dir   string        // --data
	inbox string        // --watch
	poll  time.Duration // --poll
	// --sync, --sync-every and the sync flags (--retain too, for imports from
	// the inbox): follow an upstream.
	syncFrom  string
	syncEvery time.Duration
	sync      *syncFlags
}

// storeRepository serves the store in opts.dir: it polls the active pointer and,
// with an inbox, imports the folders dropped there. Goroutines end with ctx.
func storeRepository(ctx context.Context, opts dataOptions, reg prometheus.Registerer, logger *slog.Logger) (edition.Repository, error) {
	served := replica.NewMetrics(reg, processStart)
	metrics := pipeline.NewMetrics(reg) // imports from the inbox and syncs
	// open opens the store, closed when ctx ends.
	open := func(ctx context.Context) (store.Backend, error) {
		st, closeStore, err := openBackend(ctx, opts.dir)
		if err == nil {
			context.AfterFunc(ctx, closeStore)
		}
		return st, err
	}
	st, err := open(ctx)
	if err != nil && isDatabase(opts.dir) {
		// A replica may start before its database: serve the sample data, not
		// ready, and keep trying (replica.Eventually).
		logger.Warn("the store cannot be reached; retrying", "err", err)
		fallback, ferr := embeddedEdition()
		if ferr != nil {
			return nil, ferr
		}
		return replica.OpenEventually(ctx, open, logger, served, fallback, 2*time.Second, func(repo *replica.Repository) {
			if err := keepCurrent(ctx, repo, opts, reg, logger, metrics); err != nil {
				logger.Error("cannot follow the store", "err", err)
			}
		}), nil
	}
	if err != nil {
		return nil, err
	}
	// The embedded sample data is built only for a store with no intact version:
	// building (and compressing) it beside the real one would slow start-up and
	// hold memory for nothing.
	repo, err := replica.Open(st, logger, served, nil)
	if errors.Is(err, store.ErrNotFound) {
		var fallback *edition.Edition
		if fallback, err = embeddedEdition(); err != nil {
			return nil, err
		}
		repo, err = replica.Open(st, logger, served, fallback)
	}
	if err != nil {
		return nil, err
	}
	if err := keepCurrent(ctx, repo, opts, reg, logger, metrics); err != nil {
		return nil, err
	}
	return repo, nil
}

// keepCurrent keeps a repository on its store's active version: polling, the
// store's notifications when it has them, the inbox when one is watched, and the
// upstream with --sync.
func keepCurrent(ctx context.Context, repo *replica.Repository, opts dataOptions, reg prometheus.Registerer, logger *slog.Logger, metrics *pipeline.Metrics) error {
	go repo.Poll(ctx, opts.poll)
	if n, ok := repo.Store().(store.Notifier); ok {
		// A shared store says when a publish commits: swap then, not at the next poll.
		go func() {
			for range n.Changes(ctx) {
				_, _ = repo.Reload()
			}
		}()
	}
	go func() { <-ctx.Done(); repo.Forget() }()
	if opts.inbox != "" {
		go func() {
			opt := pipeline.Options{Retain: opts.sync.retain, Metrics: metrics}
			reload := func() { _, _ = repo.Reload() }
			if err := pipeline.Watch(ctx, opts.inbox, repo.Store(), opt, opts.poll, logger, reload); err != nil {
				logger.Error("inbox watcher stopped", "inbox", opts.inbox, "err", err)
			}
		}()
	}
	if opts.syncFrom != "" {
		f, err := opts.sync.follower(opts.syncFrom, repo.Store(), logger, mirror.NewMetrics(reg), metrics, nil)
		if err != nil {
			return err
		}
		go f.Run(ctx, opts.syncEvery, func() { _, _ = repo.Reload() })
	}
	return nil
}

func isDatabase(spec string) bool {
	return strings.HasPrefix(spec, "postgres://") || strings.HasPrefix(spec, "postgresql://")
}

var processStart = time.Now()

// openBackend opens the store an operator named: a PostgreSQL URL
// (postgres:// or postgresql://, shared by replicas) or a directory (the file
// store). close releases it.
func openBackend(ctx context.Context, spec string) (store.Backend, func(), error) {
	if isDatabase(spec) {
		st, err := postgres.Open(ctx, spec)
		if err != nil {
			return nil, nil, err
		}
		return st, st.Close, nil
	}
	st, err := store.Open(spec)
	if err != nil {
		return nil, nil, err
	}
	return st, func() {}, nil
}
