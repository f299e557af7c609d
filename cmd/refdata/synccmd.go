package main

import (
	"cmp"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"net"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/refdata/refdata/catalog"
	"github.com/refdata/refdata/follow"
	"github.com/refdata/refdata/media"
	"github.com/refdata/refdata/pipeline"
	"github.com/refdata/refdata/store"
	"github.com/refdata/refdata/upstream"
)

// syncFlags are the flags sync and serve --sync share.
type syncFlags struct {
	contact, languageAll         string
	concurrency, retries, retain int
	requestTimeout, timeout      time.Duration
	contentCheck                 time.Duration
	allowShrink                  bool
	bulk                         bool // --bulk-files
	maxBody, maxSnapshot         int64
	media                        mediaFlags
	mediaDir                     *media.Dir // opened from media before follower
}

func (sf *syncFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&sf.contact, "contact", "", "your URL or mail address, sent in the User-Agent so the upstream's operator can reach you")
	fs.StringVar(&sf.languageAll, "language-all", "auto", "ask ?language=all: auto (when the upstream's /openapi.json advertises it), always, never")
	fs.IntVar(&sf.concurrency, "concurrency", upstream.DefaultConcurrency, "requests to the upstream in flight at once")
	fs.IntVar(&sf.retries, "retries", upstream.DefaultRetries, "retries of a failed request (backoff with jitter; Retry-After honoured)")
	fs.DurationVar(&sf.requestTimeout, "request-timeout", upstream.DefaultRequestTimeout, "timeout of one request")
	fs.DurationVar(&sf.timeout, "sync-timeout", follow.DefaultTimeout, "deadline of one whole sync")
	fs.DurationVar(&sf.contentCheck, "content-check", follow.DefaultContentCheck, "fetch and hash everything this often even when /v1/version is unchanged")
	fs.Int64Var(&sf.maxBody, "max-body-bytes", upstream.DefaultMaxBodyBytes, "largest answer read from the upstream")
	fs.Int64Var(&sf.maxSnapshot, "max-snapshot-bytes", pipeline.DefaultMaxSnapshotBytes, "most bytes of answers held for one snapshot")
	fs.BoolVar(&sf.allowShrink, "allow-shrink", false, "publish even when the shrink guard refuses (an emptied or halved catalog)")
	fs.BoolVar(&sf.bulk, "bulk-files", false, "also make the version's bulk files (GET /v1/versions/{id}/bulk, NDJSON per language); each changes whole with any item, so a version stores about a third more")
	sf.media.register(fs, true)
}

// check holds the upstream a flag names, and the sync flags, to what a sync
// takes, as a dry run does.
func (sf *syncFlags) check(flag, from string) error {
	if _, err := upstream.New(upstream.Config{BaseURL: from}); err != nil {
		return usagef("%s: %v", flag, err)
	}
	if !slices.Contains([]string{"auto", "always", "never"}, sf.languageAll) {
		return usagef("--language-all %q: want auto, always or never", sf.languageAll)
	}
	return nil
}

func (sf *syncFlags) follower(from string, st store.Backend, logger *slog.Logger, m *follow.Metrics, im *pipeline.Metrics, progress func(string, int, int)) (*follow.Follower, error) {
	cfg := upstream.Config{
		BaseURL: from, UserAgent: upstream.UserAgent(readBuild().userAgentVersion, sf.contact),
		Concurrency: sf.concurrency, RequestTimeout: sf.requestTimeout, Retries: sf.retries,
		MaxBodyBytes: sf.maxBody, Observe: m.Observe,
	}
	c, err := upstream.New(cfg)
	if err != nil {
		return nil, err
	}
	var mo *follow.MediaOptions // the media pass, with --media
	if sf.media.fetch && sf.mediaDir != nil {
		// Its base URL is the upstream's: the media host policy starts there.
		cfg.MaxBodyBytes, cfg.Observe, cfg.MediaHosts = sf.media.maxBytes, nil, sf.media.hosts.values
		mc, err := upstream.New(cfg)
		if err != nil {
			return nil, err
		}
		mo = &follow.MediaOptions{Client: mc, Dir: sf.mediaDir, Concurrency: sf.concurrency}
	}
	return follow.New(follow.Options{
		Client: c, Store: st, Logger: logger, Metrics: m, Progress: progress,
		ContentCheck: sf.contentCheck, Timeout: sf.timeout, LanguageAll: sf.languageAll, Media: mo,
		Import: pipeline.Options{Retain: sf.retain, AllowShrink: sf.allowShrink, Bulk: sf.bulk, Metrics: im, MaxSnapshotBytes: sf.maxSnapshot,
			MediaURL: sf.media.rewrite(sf.mediaDir)},
	})
}

// syncCmd syncs from an upstream, once or every interval.
func syncCmd(ctx context.Context, c *cli) error {
	fs := c.fs
	c.section("Sync")
	from := fs.String("from", "", "the upstream's root URL, e.g. https://valorant-api.com (required)")
	once := fs.Bool("once", false, "sync once and exit (the default without --every)")
	every := fs.Duration("every", 0, "sync now and then at this interval until interrupted, e.g. 5m")
	metricsAddr := fs.String("metrics-addr", "", "with --every: serve this process's sync metrics and the store's sync state at /metrics on this address, e.g. :9100")
	var sf syncFlags
	sf.register(fs)
	c.section("Store")
	data := storeFlags(c, "data", "")
	fs.IntVar(&sf.retain, "retain", pipeline.DefaultRetain, "versions to keep")
	c.section("Logging")
	level := logLevel(c)
	if _, err := c.parse(0); err != nil {
		return err
	}
	lvl, err := level()
	switch {
	case err != nil:
		return err
	case *once && *every > 0:
		return usagef("--once and --every exclude each other")
	case *metricsAddr != "" && *every <= 0:
		return usagef("--metrics-addr serves while sync --every runs: give --every")
	case *metricsAddr != "":
		if err := checkAddr("metrics-addr", *metricsAddr); err != nil {
			return err
		}
	}
	if err := cmp.Or(sf.check("--from", *from), checkStore(data()), sf.media.check(data())); err != nil {
		return err
	}
	if c.dryRun {
		how := "once"
		if *every > 0 {
			how = "every " + every.String()
		}
		if *metricsAddr != "" {
			how += ", with its metrics on " + *metricsAddr
		}
		c.would("sync %s into %s, %s", *from, describeStore(data()), how)
		return nil
	}
	var ln net.Listener
	if *metricsAddr != "" {
		if ln, err = net.Listen("tcp", *metricsAddr); err != nil {
			return fmt.Errorf("--metrics-addr: %w", err)
		}
		defer ln.Close()
	}
	st, closeStore, err := openBackend(ctx, data(), false)
	if err != nil {
		return err
	}
	defer closeStore()
	if sf.mediaDir, err = sf.media.open(data()); err != nil {
		return err
	}
	logger := newLogger(c.stderr, lvl)
	var metrics *follow.Metrics
	var imports *pipeline.Metrics
	if ln != nil {
		reg := prometheus.NewRegistry()
		reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}), readBuild().collector())
		metrics, imports = follow.NewMetrics(reg), pipeline.NewMetrics(reg)
		follow.RegisterStateMetrics(reg, st, nil)
		go serveMetrics(ctx, ln, reg, logger)
	}
	f, err := sf.follower(*from, st, logger, metrics, imports, syncProgress(c.stderr))
	if err != nil {
		return err
	}
	if *every > 0 {
		f.Run(ctx, *every, nil)
		return nil
	}
	res, err := f.Sync(ctx)
	endProgress(c.stderr)
	return writeSync(c, *from, res, err)
}

// writeSync reports a sync from upstream once (sync --once): the import's
// report, then a line of what the sync did, its media pass and its notes;
// a failed sync's report goes to stderr and its error, with the reason, is
// returned.
func writeSync(c *cli, from string, res *follow.Result, err error) error {
	if res != nil && res.Report != nil {
		out := c.stdout
		if err != nil {
			out = c.stderr
		}
		res.Report.Write(out)
	}
	if err != nil {
		return fmt.Errorf("%w (reason: %s)", err, res.Reason)
	}
	fmt.Fprintf(c.stdout, "sync: %s %s from %s in %s, %s", res.Outcome, res.ManifestID, from, plural(int(res.Requests), "request"), res.Duration.Round(time.Millisecond))
	switch {
	case len(res.Lacking) == 0:
	case res.Report == nil:
		fmt.Fprintf(c.stdout, "; the upstream lacks %v", res.Lacking)
	case res.Report.CarriedFrom != "":
		fmt.Fprintf(c.stdout, "; the upstream lacks (carried over from %s): %v", res.Report.CarriedFrom, res.Lacking)
	default:
		fmt.Fprintf(c.stdout, "; the upstream lacks (empty: no version to carry them over from): %v", res.Lacking)
	}
	fmt.Fprintln(c.stdout)
	if m := res.Media; m != nil {
		writeMedia(c.stdout, m)
	}
	for _, n := range res.Notes {
		fmt.Fprintln(c.stdout, "note:", n)
	}
	return nil
}

// maxMediaListed caps the URLs a media report lists one by one: an
// unreachable host has thousands, which its host line counts.
const maxMediaListed = 20

// writeMedia reports a media pass: the counts, skips by class; then per host
// its URLs not mirrored by class (and why a host was not tried); then the
// first maxMediaListed URLs skipped and dropped from the mirror, each with its
// reason, and how many more. The URLs of a host that was down are only
// counted: its line says why, for all of them.
func writeMedia(w io.Writer, m *follow.MediaResult) {
	fmt.Fprintf(w, "media: %d URLs, %d already mirrored, %d fetched, %d skipped", m.URLs, m.Known, m.Fetched, len(m.Skipped))
	counts := m.Counts()
	var classes []string
	for _, class := range follow.MediaClasses {
		if n := counts[class]; n > 0 {
			classes = append(classes, fmt.Sprintf("%s %d", class, n))
		}
	}
	if len(classes) > 0 {
		fmt.Fprintf(w, " (%s)", strings.Join(classes, ", "))
	}
	if len(m.Deferred) > 0 {
		fmt.Fprintf(w, ", %d deferred (failed for good before: tried again after a backoff)", len(m.Deferred))
	}
	if len(m.Dropped) > 0 {
		fmt.Fprintf(w, ", %d dropped from the mirror", len(m.Dropped))
	}
	fmt.Fprintln(w)
	byHost := map[string]map[string]int{}
	for _, s := range m.Skipped {
		countClass(byHost, s.Host(), s.Class)
	}
	for _, s := range m.Deferred {
		countClass(byHost, s.Host(), follow.MediaDeferred)
	}
	down := map[string]string{}
	for _, d := range m.Down {
		down[d.Host] = fmt.Sprintf("; not tried after %d failed connections: %v", d.Failures, d.Last)
	}
	for _, host := range slices.Sorted(maps.Keys(byHost)) {
		var parts []string
		for _, class := range append(slices.Clone(follow.MediaClasses), follow.MediaDeferred) {
			if n := byHost[host][class]; n > 0 {
				parts = append(parts, fmt.Sprintf("%s %d", class, n))
			}
		}
		fmt.Fprintf(w, "media host %s: %s%s\n", host, strings.Join(parts, ", "), down[host])
	}
	list := func(what string, skips []follow.MediaSkip) {
		for _, s := range skips[:min(len(skips), maxMediaListed)] {
			fmt.Fprintf(w, "media %s: %s\n", what, s)
		}
		if n := len(skips) - maxMediaListed; n > 0 {
			fmt.Fprintf(w, "media %s: … and %d more\n", what, n)
		}
	}
	list("skipped", slices.DeleteFunc(slices.Clone(m.Skipped), func(s follow.MediaSkip) bool { return down[s.Host()] != "" }))
	list("dropped", m.Dropped)
}

func countClass(m map[string]map[string]int, key, class string) {
	if m[key] == nil {
		m[key] = map[string]int{}
	}
	m[key][class]++
}

// serveMetrics serves reg at /metrics (and /v1/metrics, as serve does) on ln
// until ctx ends.
func serveMetrics(ctx context.Context, ln net.Listener, reg *prometheus.Registry, logger *slog.Logger) {
	mux := http.NewServeMux()
	h := promhttp.HandlerFor(reg, promhttp.HandlerOpts{})
	mux.Handle("GET /metrics", h)
	mux.Handle("GET /v1/metrics", h)
	hs := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	go func() { <-ctx.Done(); _ = hs.Close() }()
	logger.Info("metrics", "addr", ln.Addr().String())
	if err := hs.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
		logger.Error("the metrics listener stopped", "err", err)
	}
}

// syncProgress rewrites one line on a terminal; elsewhere it says nothing
// (the log has each sync's outcome, and a media pass's counts every 30 s).
func syncProgress(w io.Writer) func(step string, done, total int) {
	if !isTerminal(w) {
		return nil
	}
	start := time.Now()
	return func(step string, done, total int) {
		unit := "requests"
		if step == "media" {
			unit = "files"
		}
		fmt.Fprintf(w, "\r\033[K[%6.2fs] %s %d/%d %s", time.Since(start).Seconds(), step, done, total, unit)
	}
}

// activateCmd makes a retained version the active one.
func activateCmd(ctx context.Context, c *cli) error {
	c.section("Store")
	data := storeFlags(c, "data", "")
	args, err := c.parse(1)
	switch {
	case err != nil:
		return err
	case !catalog.IsManifestID(args[0]):
		return usagef("%q is not a manifest ID: want 16 hexadecimal digits, as /v1/versions lists them", args[0])
	case checkStore(data()) != nil:
		return checkStore(data())
	case c.dryRun:
		c.would("make %s the active version of %s", args[0], describeStore(data()))
		return nil
	}
	if err := (dataOptions{dir: data()}).checkDir(); err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(ctx, pipeline.DefaultLockTimeout)
	defer cancel()
	st, closeStore, err := openBackend(ctx, data(), false)
	if err != nil {
		return err
	}
	defer closeStore()
	p, err := pipeline.Activate(ctx, st, args[0], time.Now())
	if err != nil {
		return err
	}
	fmt.Fprintf(c.stdout, "active: %s (previous %s); a running serve picks it up at its next poll\n", p.ManifestID, p.Previous)
	return nil
}
