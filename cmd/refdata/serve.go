package main

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/http/pprof"
	"runtime"
	"runtime/debug"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/refdata/refdata/blob"
	"github.com/refdata/refdata/edge"
	"github.com/refdata/refdata/handler"
	"github.com/refdata/refdata/pipeline"
	"github.com/refdata/refdata/replica"
	"github.com/refdata/refdata/router"
)

// serve listens, then loads the data it serves, and serves until ctx ends.
func serve(ctx context.Context, c *cli) error {
	fs := c.fs
	c.section("Server")
	addr := fs.String("addr", "127.0.0.1:8080", "listen address, host:port")
	pprofAddr := fs.String("pprof", "", "serve net/http/pprof on this separate address, e.g. 127.0.0.1:6060")
	maxWaiters := fs.Int("max-waiters", handler.DefaultMaxWaiters, "requests held for a change at once (/v1/version?wait=, /v1/version/stream); past it 503")
	perClient := fs.Int("max-waiters-per-client", handler.DefaultMaxHeldPerClient, "of those, held for one client address (an IPv6 /64) at once; past it 429. Behind a proxy all clients share its address: raise it to --max-waiters")
	c.section("Store")
	data := storeFlags(c, "", "; none: the embedded sample data")
	opts := dataOptions{sampleOpts: c.sample}
	fs.BoolVar(&opts.init, "init", false, "create the --data directory when it does not exist")
	fs.BoolVar(&opts.sample, "sample-until-imported", false, "serve the embedded sample data, ready, while the store has no version")
	fs.Int64Var(&opts.cacheBytes, "cache-bytes", blob.DefaultCacheBytes, "bodies kept in memory, the most used (the rest are read from the store's segments as requests need them)")
	fs.StringVar(&opts.cacheDir, "cache-dir", "", "with a PostgreSQL store: where to keep the segments this replica serves from (default: a directory per store — server, database, schema — in the temporary directory)")
	fs.DurationVar(&opts.poll, "poll", time.Second, "how often to read the store's active pointer and the inbox; also the current catalog routes' max-age, rounded up to whole seconds")
	fs.StringVar(&opts.inbox, "watch", "", "import snapshot folders dropped into this directory once they hold a READY file")
	var sf syncFlags
	fs.IntVar(&sf.retain, "retain", 10, "versions to keep (--watch, --sync)")
	c.section("Sync")
	fs.StringVar(&opts.syncFrom, "sync", "", "follow this upstream: sync into the store and serve each new version")
	fs.DurationVar(&opts.syncEvery, "sync-every", 5*time.Minute, "how often --sync checks the upstream's /v1/version")
	sf.register(c.fs)
	c.section("Logging")
	level := logLevel(c)
	if _, err := c.parse(0); err != nil {
		return err
	}
	opts.dir, opts.sync = data(), &sf
	lvl, err := level()
	err = cmp.Or(err, checkAddr("addr", *addr), opts.check())
	if err == nil && *maxWaiters < 1 {
		err = usagef("--max-waiters %d: give at least 1", *maxWaiters)
	}
	if err == nil && *perClient < 1 {
		err = usagef("--max-waiters-per-client %d: give at least 1", *perClient)
	}
	if err == nil && *pprofAddr != "" {
		err = checkAddr("pprof", *pprofAddr)
	}
	if err == nil && opts.syncFrom != "" {
		err = sf.check("--sync", opts.syncFrom)
	}
	if err == nil {
		err = sf.media.check(opts.dir)
	}
	if err == nil && sf.media.fetch && opts.syncFrom == "" {
		err = usagef("--media fetches with --sync: name the upstream")
	}
	if err != nil {
		return err
	}
	if c.dryRun {
		c.would("%s", opts.describe(*addr))
		return nil
	}
	if err := opts.checkDir(); err != nil {
		return err
	}
	if sf.mediaDir, err = sf.media.open(opts.dir); err != nil {
		return err
	}
	ln, err := net.Listen("tcp", *addr)
	if err != nil {
		return fmt.Errorf("--addr: %w", err)
	}
	defer ln.Close()
	logger := newLogger(c.stderr, lvl)

	reg := prometheus.NewRegistry()
	reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}), readBuild().collector())
	// The same metric names with or without a store, so dashboards need no cases.
	served, imports := replica.NewMetrics(reg, processStart), pipeline.NewMetrics(reg)
	repo := replica.NewPending("loading the version to serve", opts.dir != "")
	router.RegisterEditionMetrics(reg, repo.Active)
	replica.RegisterReplicaMetrics(reg, repo)
	httpMetrics := router.NewHTTPMetrics(reg)
	// A replica may take a poll to see a new version: the current catalogs'
	// max-age (handler.CatalogCache).
	srv := &handler.Server{Repo: repo, Metrics: promhttp.HandlerFor(reg, promhttp.HandlerOpts{}), Fresh: opts.poll, MaxWaiters: *maxWaiters, MaxHeldPerClient: *perClient}
	if sf.mediaDir != nil {
		srv.Media = sf.mediaDir
		// Another process's sync --media adds files before it publishes.
		repo.OnSwap(func() { _ = sf.mediaDir.Reload() })
	}
	router.RegisterHeldMetric(reg, srv.Held)
	router, err := router.New(srv, logger, httpMetrics)
	if err != nil {
		return err
	}
	es := edge.New(edge.Config{Router: router, Active: repo.Active, Metrics: httpMetrics, Logger: logger, Hold: srv.HoldForChange})
	repo.OnSwap(es.ActiveChanged)
	if *pprofAddr != "" {
		go servePprof(ctx, *pprofAddr, logger)
	}
	loaded := make(chan error, 1)
	// The store stays open past ctx until the replica has left the store's
	// replicas, so publishes stop waiting for it at once, not once its
	// heartbeat ages out.
	stores, closeStores := context.WithCancel(context.WithoutCancel(ctx))
	defer closeStores()
	opts.stores = stores
	go func() { loaded <- load(ctx, opts, repo, reg, served, imports, logger) }()
	err = listenAndServe(ctx, ln, es, logger, c.ready, loaded)
	repo.Forget()
	return err
}

// servePprof exposes the profiler on its own listener, never on the API's.
func servePprof(ctx context.Context, addr string, logger *slog.Logger) {
	mux := http.NewServeMux()
	mux.HandleFunc("/debug/pprof/", pprof.Index)
	mux.HandleFunc("/debug/pprof/profile", pprof.Profile)
	mux.HandleFunc("/debug/pprof/symbol", pprof.Symbol)
	mux.HandleFunc("/debug/pprof/trace", pprof.Trace)
	hs := &http.Server{Addr: addr, Handler: mux, ReadHeaderTimeout: 5 * time.Second}
	go func() { <-ctx.Done(); _ = hs.Close() }()
	logger.Info("pprof", "addr", addr)
	if err := hs.ListenAndServe(); err != nil && !errors.Is(err, http.ErrServerClosed) {
		logger.Error("pprof listener stopped", "err", err)
	}
}

// listenAndServe serves on ln until ctx ends, or until loading the data
// fails (loaded).
func listenAndServe(ctx context.Context, ln net.Listener, es *edge.Server, logger *slog.Logger, ready chan<- string, loaded <-chan error) error {
	logger.Info("serving", "addr", ln.Addr().String())
	if ready != nil {
		ready <- ln.Addr().String()
	}
	errc := make(chan error, 1)
	go func() { errc <- es.Serve(ln) }()
	var failed error
	for failed == nil && ctx.Err() == nil {
		select {
		case err := <-errc:
			return err
		case err := <-loaded:
			loaded = nil // loading is over: never selected again
			if ctx.Err() == nil {
				failed = err
			}
		case <-ctx.Done():
		}
	}
	logger.Info("shutting down")
	shutdownCtx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
	defer cancel()
	if err := es.Shutdown(shutdownCtx); err != nil {
		return errors.Join(failed, fmt.Errorf("shutdown: %w", err))
	}
	return failed
}

// build is what this binary was built from.
type build struct {
	version, revision, goVersion, userAgentVersion string
	modified                                       bool
}

// version, when the linker sets it (-X main.version=…, as
// deploy/image/build.sh does with git describe), names this build instead of
// its module version.
var version string

func readBuild() build {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		bi = &debug.BuildInfo{GoVersion: runtime.Version()}
	}
	bi.Main.Version = cmp.Or(version, bi.Main.Version)
	return buildOf(bi)
}

func buildOf(bi *debug.BuildInfo) build {
	b := build{version: cmp.Or(bi.Main.Version, "(devel)"), revision: "unknown", goVersion: bi.GoVersion, userAgentVersion: "dev"}
	if b.version != "(devel)" {
		b.userAgentVersion = b.version
	}
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			b.revision = s.Value
		case "vcs.modified":
			b.modified = s.Value == "true"
		}
	}
	return b
}

func (b build) String() string {
	modified := ""
	if b.modified {
		modified = " (modified)"
	}
	return fmt.Sprintf("refdata %s\nrevision %s%s\n%s\n", b.version, b.revision, modified, b.goVersion)
}

// collector is refdata_build_info.
func (b build) collector() prometheus.Collector {
	return prometheus.NewGaugeFunc(prometheus.GaugeOpts{Namespace: "refdata", Name: "build_info",
		Help:        "The build serving: always 1; version, VCS revision and Go version in the labels.",
		ConstLabels: prometheus.Labels{"version": b.version, "revision": b.revision, "goversion": b.goVersion},
	}, func() float64 { return 1 })
}

var processStart = time.Now()
