// Command refdata serves game reference data over HTTP and imports new versions.
// main only parses flags and wires packages together.
package main

import (
	"cmp"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/pprof"
	"os"
	"os/signal"
	"runtime/debug"
	"syscall"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/refdata/refdata/api"
	"github.com/refdata/refdata/edge"
	"github.com/refdata/refdata/edition"
	"github.com/refdata/refdata/fixtures"
	"github.com/refdata/refdata/impl"
	"github.com/refdata/refdata/pipeline"
	"github.com/refdata/refdata/replica"
	"github.com/refdata/refdata/representation"
)

const usage = `usage:
  refdata serve [--addr 127.0.0.1:8080] [--data DIR [--watch INBOX] [--poll 1s]]
                                                      serve the API (env REFDATA_ADDR, REFDATA_DATA, REFDATA_WATCH)
  refdata import [--data DIR] [--retain N] [--force] SNAPSHOT_DIR|EXPORT.tar.gz
                                                      validate a snapshot and publish it as the active version
  refdata sync --from URL [--data DIR] [--once | --every 5m] [--contact URL]
                                                      fetch an upstream's version in 18 locales and import it
  refdata activate [--data DIR] MANIFEST_ID           roll back or forward to a retained version
  refdata serve --data DIR --sync URL [--sync-every 5m]
                                                      serve and follow an upstream in the same process
`

// defaultGOGC applies when GOGC is not set: a server's heap is mostly the
// served version's bodies, live until the next swap, so the default 100 %
// would let garbage grow to their size; 25 % keeps RSS under twice the
// rendered bytes with every target memoized (BENCHMARKS.md).
const defaultGOGC = 25

func main() {
	if os.Getenv("GOGC") == "" {
		debug.SetGCPercent(defaultGOGC)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	os.Exit(run(ctx, os.Args[1:], os.Stdout, os.Stderr))
}

func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		fmt.Fprint(stderr, usage)
		return 2
	}
	var err error
	switch args[0] {
	case "serve":
		err = serve(ctx, args[1:], process{stderr: stderr, sampleEffort: representation.Best})
	case "import":
		err = importCmd(ctx, args[1:], stdout, stderr)
	case "sync":
		err = syncCmd(ctx, args[1:], stdout, stderr)
	case "activate":
		err = activateCmd(ctx, args[1:], stdout, stderr)
	case "-h", "--help", "help":
		fmt.Fprint(stdout, usage)
		return 0
	default:
		fmt.Fprintf(stderr, "refdata: unknown command %q\n%s", args[0], usage)
		return 2
	}
	if errors.Is(err, flag.ErrHelp) {
		return 0
	}
	if err != nil {
		fmt.Fprintf(stderr, "refdata %s: %v\n", args[0], err)
		return 1
	}
	return 0
}

// dataUsage describes --data.
const dataUsage = "version store: a directory, or a postgres:// URL shared by replicas (env REFDATA_DATA)"

// storeFlag registers --data, defaulting to def, and --store, its other name
// for a database URL, and returns the store they name.
func storeFlag(fs *flag.FlagSet, def, usage string) func() string {
	data := fs.String("data", env("REFDATA_DATA", def), usage)
	store := fs.String("store", env("REFDATA_STORE", ""), "the same as --data, named for a database URL: postgres://… (env REFDATA_STORE)")
	return func() string { return cmp.Or(*store, *data) }
}

func env(name, def string) string { return cmp.Or(os.Getenv(name), def) }

func newLogger(w io.Writer, level slog.Level) *slog.Logger {
	opts := &slog.HandlerOptions{Level: level}
	if isTerminal(w) {
		return slog.New(slog.NewTextHandler(w, opts))
	}
	return slog.New(slog.NewJSONHandler(w, opts))
}

// isTerminal reports whether w is a terminal (progress rewrites one line).
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	st, err := f.Stat()
	return err == nil && st.Mode()&os.ModeCharDevice != 0
}

// process is what serve takes from the process beyond its arguments.
type process struct {
	stderr io.Writer
	// ready, when set, receives the bound address (tests listen on :0).
	ready chan<- string
	// sampleEffort is what the embedded sample is compressed at
	// (representation.Best; tests lower it).
	sampleEffort representation.Effort
}

// serve runs the HTTP server until ctx ends.
func serve(ctx context.Context, args []string, p process) error {
	stderr := p.stderr
	fs := flag.NewFlagSet("serve", flag.ContinueOnError)
	fs.SetOutput(stderr)
	addr := fs.String("addr", env("REFDATA_ADDR", "127.0.0.1:8080"), "listen address (env REFDATA_ADDR)")
	data := storeFlag(fs, "", dataUsage+"; empty serves the embedded sample data")
	inbox := fs.String("watch", env("REFDATA_WATCH", ""), "with --data: import snapshot folders dropped into this directory once they hold a READY file (env REFDATA_WATCH)")
	poll := fs.Duration("poll", time.Second, "with --data: how often to check the active pointer and the inbox")
	pprofAddr := fs.String("pprof", env("REFDATA_PPROF", ""), "serve net/http/pprof on this separate address, e.g. 127.0.0.1:6060 (env REFDATA_PPROF); off when empty")
	logLevel := fs.String("log-level", env("REFDATA_LOG_LEVEL", "info"), "debug logs every request; info logs 4xx and 5xx (env REFDATA_LOG_LEVEL)")
	syncFrom := fs.String("sync", env("REFDATA_SYNC_FROM", ""), "with --data: follow this upstream (env REFDATA_SYNC_FROM)")
	syncEvery := fs.Duration("sync-every", 5*time.Minute, "with --sync: how often to check the upstream's /v1/version")
	var sf syncFlags
	sf.register(fs)
	fs.IntVar(&sf.retain, "retain", envInt("REFDATA_RETAIN", 10), "with --watch: versions to keep (env REFDATA_RETAIN)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	var level slog.Level
	if err := level.UnmarshalText([]byte(*logLevel)); err != nil {
		return fmt.Errorf("--log-level: %w", err)
	}
	logger := newLogger(stderr, level)

	reg := prometheus.NewRegistry()
	reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	var repo edition.Repository
	var err error
	switch {
	case data() != "":
		repo, err = storeRepository(ctx, dataOptions{dir: data(), inbox: *inbox, poll: *poll,
			syncFrom: *syncFrom, syncEvery: *syncEvery, sync: &sf}, reg, logger)
	case *inbox != "":
		err = errors.New("--watch needs --data: imports go into a version store")
	case *syncFrom != "":
		err = errors.New("--sync needs --data: synced versions go into a version store")
	default:
		repo, err = embeddedRepository(logger, p.sampleEffort)
		if err == nil {
			// The same metric names with or without a store, so dashboards need no cases.
			replica.NewMetrics(reg, processStart).Active(repo.Active(), time.Time{})
			pipeline.NewMetrics(reg)
		}
	}
	if err != nil {
		return err
	}
	api.RegisterEditionMetrics(reg, repo.Active)
	if rd, ok := repo.(edition.Readiness); ok {
		replica.RegisterReplicaMetrics(reg, rd)
	}
	srv := &impl.Server{Repo: repo, Metrics: promhttp.HandlerFor(reg, promhttp.HandlerOpts{})}
	httpMetrics := api.NewHTTPMetrics(reg)
	router, err := api.New(srv, logger, httpMetrics)
	if err != nil {
		return err
	}
	if *pprofAddr != "" {
		go servePprof(ctx, *pprofAddr, logger)
	}
	es := edge.New(edge.Config{Router: router, Active: repo.Active, Metrics: httpMetrics, Logger: logger})
	if sw, ok := repo.(edition.Swapping); ok {
		sw.OnSwap(es.ActiveChanged)
	}
	return listenAndServe(ctx, *addr, es, logger, p.ready)
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

// embeddedRepository serves the embedded sample data, compressed at effort,
// and says so in the log.
func embeddedRepository(logger *slog.Logger, effort representation.Effort) (edition.Repository, error) {
	s, err := fixtures.Sample(effort, func(err error) {
		if err != nil {
			logger.Error("the embedded sample data stays uncompressed", "err", err)
		}
	})
	if err != nil {
		return nil, err
	}
	ed := s.Active()
	logger.Info("serving the embedded sample data (real captures of 2021 plus authored sample catalogs; see fixtures/README.md)",
		"version", ed.Version.Version, "manifestId", ed.ManifestID,
		"realData", "import snapshots with 'refdata import --data DIR SNAPSHOT_DIR', then 'refdata serve --data DIR'")
	return s, nil
}

// embeddedEdition is the newest embedded sample version, uncompressed: what a
// store with no intact version serves until one is imported.
func embeddedEdition() (*edition.Edition, error) {
	r, err := fixtures.Newest()
	if err != nil {
		return nil, err
	}
	return edition.New(r), nil
}

func listenAndServe(ctx context.Context, addr string, es *edge.Server, logger *slog.Logger, ready chan<- string) error {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return err
	}
	logger.Info("serving", "addr", ln.Addr().String())
	if ready != nil {
		ready <- ln.Addr().String()
	}
	errc := make(chan error, 1)
	go func() { errc <- es.Serve(ln) }()
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
	}
	logger.Info("shutting down")
	shutdownCtx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
	defer cancel()
	if err := es.Shutdown(shutdownCtx); err != nil {
		return fmt.Errorf("shutdown: %w", err)
	}
	return nil
}
