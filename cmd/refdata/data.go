package main

import (
	"cmp"
	"context"
	"errors"
	"io/fs"
	"log/slog"
	"os"
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/refdata/refdata/blob"
	"github.com/refdata/refdata/edition"
	"github.com/refdata/refdata/follow"
	"github.com/refdata/refdata/pipeline"
	"github.com/refdata/refdata/replica"
	"github.com/refdata/refdata/store"
	"github.com/refdata/refdata/store/postgres"
)

// dataOptions are serve's flags for what it serves.
type dataOptions struct {
	dir    string // --data or --store; "" for the embedded sample data
	init   bool   // --init
	sample bool   // --sample-until-imported
	inbox  string
	poll   time.Duration
	// --sync, --sync-every and the sync flags (--retain too, for imports from
	// the inbox): follow an upstream.
	syncFrom   string
	syncEvery  time.Duration
	sync       *syncFlags
	sampleOpts sampleOptions // how the embedded sample's store is made
	// --cache-bytes, --cache-dir: the bodies kept in memory; where a
	// PostgreSQL replica keeps its segments.
	cacheBytes int64
	cacheDir   string
	// stores ends when the stores opened may close: after serve has taken
	// the replica out of its store's replicas (nil: with load's ctx).
	stores context.Context
}

// check holds the flags to each other, as a dry run does.
func (o dataOptions) check() error {
	if err := checkStore(o.dir); err != nil {
		return err
	}
	switch {
	case o.dir != "":
	case o.inbox != "", o.syncFrom != "", o.init, o.sample:
		return usagef("--watch, --sync, --init and --sample-until-imported need a version store: --data DIR or --store URL")
	}
	if o.poll <= 0 || o.syncEvery <= 0 {
		return usagef("--poll and --sync-every must be positive")
	}
	if o.cacheBytes < 0 {
		return usagef("--cache-bytes %d: give 0 (keep no body in memory) or more", o.cacheBytes)
	}
	return nil
}

// describe says what serve on addr would do, for a dry run.
func (o dataOptions) describe(addr string) string {
	if o.dir == "" {
		return "serve the embedded sample data on " + addr
	}
	d := "serve " + describeStore(o.dir) + " on " + addr
	if o.init && !isDatabase(o.dir) {
		d += ", creating it when missing (--init)"
	}
	if o.sample {
		d += ", with the embedded sample data until its first version"
	}
	if o.syncFrom != "" {
		d += ", syncing from " + o.syncFrom + " every " + o.syncEvery.String()
	}
	if o.inbox != "" {
		d += ", importing the snapshots dropped into " + o.inbox
	}
	return d
}

// checkDir holds --data to a directory that exists, unless --init asks for
// one: a mistyped path must not start an empty store.
func (o dataOptions) checkDir() error {
	if o.dir == "" || isDatabase(o.dir) || o.init {
		return nil
	}
	switch st, err := os.Stat(o.dir); {
	case errors.Is(err, fs.ErrNotExist):
		return usagef("--data %s: no such directory; --init creates it, as does an import into it", o.dir)
	case err != nil:
		return usagef("--data %s: %v", o.dir, err)
	case !st.IsDir():
		return usagef("--data %s is not a directory", o.dir)
	}
	return nil
}

// storeFlags registers --data, defaulting to def, and --store, its other
// name for a database URL, and returns the store they name.
func storeFlags(c *cli, def, none string) func() string {
	data := c.fs.String("data", def, "version store: a directory, or a postgres:// URL shared by replicas"+none)
	st := c.fs.String("store", "", "the same as --data, named for a database URL: postgres://…")
	return func() string { return cmp.Or(*st, *data) }
}

// load reads what serve serves into repo: the embedded sample data without a
// store; else the store's active version, then keeps to the store's (and the
// inbox's, and the upstream's). A database may not be up yet: loading waits
// for it. Goroutines end with ctx.
func load(ctx context.Context, o dataOptions, repo *replica.Pending, reg prometheus.Registerer, served *replica.Metrics, imports *pipeline.Metrics, logger *slog.Logger) error {
	if o.dir == "" {
		r, err := sampleRepository(ctx, o.sampleOpts, repo, served, logger)
		if err == nil {
			repo.Set(r)
		}
		return err
	}
	// open opens the store, closed when o.stores (or ctx) ends.
	// Replicas create refdata's tables in the database they are given; a
	// directory only with --init (else checkDir held it to one that exists).
	open := func(ctx context.Context) (store.Backend, error) {
		st, closeStore, err := openBackend(ctx, o.dir, o.init || isDatabase(o.dir))
		if err == nil {
			context.AfterFunc(cmp.Or(o.stores, ctx), closeStore)
			if pg, ok := st.(*postgres.Store); ok {
				pg.CacheDir = o.cacheDir
			}
		}
		return st, err
	}
	cache := replica.WithCache(blob.NewCache(o.cacheBytes))
	var fallback *edition.Edition // served while the store has no version
	if o.sample {
		r, err := sampleRepository(ctx, o.sampleOpts, repo, nil, logger)
		if err != nil {
			return err
		}
		fallback = r.Active()
	}
	var err error
	var r *replica.Repository
	if isDatabase(o.dir) {
		r, err = replica.OpenRetrying(ctx, open, logger, served, fallback, 2*time.Second, repo, cache)
	} else if st, oerr := open(ctx); oerr != nil {
		err = oerr
	} else {
		r, err = replica.Open(st, logger, served, fallback, cache)
	}
	if err != nil {
		return err
	}
	repo.Set(r)
	return keepCurrent(ctx, r, o, reg, logger, imports)
}

// keepCurrent keeps a repository on its store's active version: polling, the
// store's notifications when it has them, the inbox when one is watched, and the
// upstream with --sync.
func keepCurrent(ctx context.Context, repo *replica.Repository, o dataOptions, reg prometheus.Registerer, logger *slog.Logger, metrics *pipeline.Metrics) error {
	// The store's sync state, whichever process syncs it.
	follow.RegisterStateMetrics(reg, repo.Store(), func() string {
		if ed := repo.Active(); ed != nil && !ed.IsNone() {
			return ed.ManifestID
		}
		return ""
	})
	go repo.Poll(ctx, o.poll)
	if n, ok := repo.Store().(store.Notifier); ok {
		// A shared store says when a publish commits: swap then, not at the next poll.
		go func() {
			for range n.Changes(ctx) {
				_, _ = repo.Reload()
			}
		}()
	}
	if o.inbox != "" {
		go func() {
			opt := pipeline.Options{Retain: o.sync.retain, Bulk: o.sync.bulk, Metrics: metrics, MediaURL: o.sync.media.rewrite(o.sync.mediaDir)}
			reload := func() { _, _ = repo.Reload() }
			if err := pipeline.Watch(ctx, o.inbox, repo.Store(), opt, o.poll, logger, reload); err != nil {
				logger.Error("inbox watcher stopped", "inbox", o.inbox, "err", err)
			}
		}()
	}
	if o.syncFrom != "" {
		f, err := o.sync.follower(o.syncFrom, repo.Store(), logger, follow.NewMetrics(reg), metrics, nil)
		if err != nil {
			return err
		}
		go f.Run(ctx, o.syncEvery, func() { _, _ = repo.Reload() })
	}
	return nil
}

// sampleRepository serves the embedded sample data from its store
// (sampleStore), saying so in the log; until the store is made, repo says
// why it waits.
func sampleRepository(ctx context.Context, opt sampleOptions, repo *replica.Pending, served *replica.Metrics, logger *slog.Logger) (*replica.Repository, error) {
	repo.Wait("making the embedded sample data's store, once for this binary")
	dir, err := sampleStore(ctx, opt, logger)
	if err != nil {
		return nil, err
	}
	st, err := store.Open(dir)
	if err != nil {
		return nil, err
	}
	r, err := replica.Open(st, logger, served, nil)
	if err != nil {
		return nil, err
	}
	ed := r.Active()
	logger.Info("serving the embedded sample data (real captures of 2021 plus authored sample catalogs; see fixtures/README.md)",
		"version", ed.Version.Version, "manifestId", ed.ManifestID, "store", dir,
		"realData", "import snapshots with 'refdata import --data DIR SNAPSHOT_DIR', then 'refdata serve --data DIR'")
	return r, nil
}

func isDatabase(spec string) bool {
	return strings.HasPrefix(spec, "postgres://") || strings.HasPrefix(spec, "postgresql://")
}

// checkStore holds a --data or --store value to a directory or a postgres://
// URL: another scheme (mysql://…) is a mistake, never a directory of that name.
func checkStore(spec string) error {
	if scheme, _, ok := strings.Cut(spec, "://"); ok && !isDatabase(spec) && !strings.ContainsRune(scheme, '/') {
		return usagef("store %q: %s:// is not a store refdata knows; want a directory or a postgres:// URL", spec, scheme)
	}
	return nil
}

// describeStore names a store for a dry run: what it is and whether it
// exists, without connecting to a database.
func describeStore(spec string) string {
	if isDatabase(spec) {
		return "the PostgreSQL store " + spec
	}
	switch st, err := os.Stat(spec); {
	case err == nil && st.IsDir():
		return "the store directory " + spec
	case err == nil:
		return spec + " (not a directory)"
	}
	return "the store directory " + spec + " (not there yet)"
}

// openBackend opens the store an operator named: a PostgreSQL URL
// (postgres:// or postgresql://, shared by replicas) or a directory (the file
// store). With create the store is made now (serve --init, replicas' tables);
// without, a store that does not exist is made by its first write, so a
// rejected import or a failed sync leaves nothing behind. close releases it.
func openBackend(ctx context.Context, spec string, create bool) (store.Backend, func(), error) {
	if err := checkStore(spec); err != nil {
		return nil, nil, err
	}
	if isDatabase(spec) {
		open := postgres.OpenLazy
		if create {
			open = postgres.Open
		}
		st, err := open(ctx, spec)
		if err != nil {
			return nil, nil, err
		}
		return st, st.Close, nil
	}
	open := store.Open
	if create {
		open = store.Create
	}
	st, err := open(spec)
	if err != nil {
		return nil, nil, err
	}
	return st, func() {}, nil
}
