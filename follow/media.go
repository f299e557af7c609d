package follow

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"sync"
	"time"

	"golang.org/x/sync/errgroup"

	"github.com/refdata/refdata/media"
	"github.com/refdata/refdata/upstream"
)

// MediaOptions configure the media pass of a sync (Options.Media): before a
// fetched snapshot is imported, every media URL its catalogs reference that
// the mirror lacks is fetched and stored.
type MediaOptions struct {
	// Client fetches the files: its HostPolicy is where from
	// (upstream.Config.MediaHosts), its MaxBodyBytes the size cap (a larger
	// file is skipped), and its timeouts, retries and User-Agent apply.
	Client *upstream.Client
	Dir    *media.Dir
	// Concurrency bounds the files fetched at once.
	Concurrency int
	// HostFailures is how many failed connections in a row (no such name,
	// refused, unreachable) take a host down for the rest of a pass: its
	// other URLs are skipped as unreachable without a request
	// (0: DefaultMediaHostFailures).
	HostFailures int
	// LogEvery is how often a running pass logs its counts when the sync
	// has no Options.Progress (0: DefaultMediaLogEvery).
	LogEvery time.Duration
}

// Defaults of MediaOptions, and the backoff of the URLs that failed for good.
const (
	DefaultMediaHostFailures = 3
	DefaultMediaLogEvery     = 30 * time.Second
	// A URL that failed for good (MediaError.Permanent) is tried again
	// MediaRetryFirst after, then after twice as long each time it fails
	// again, at most MediaRetryMax.
	MediaRetryFirst = time.Hour
	MediaRetryMax   = 7 * 24 * time.Hour
)

// MediaResult is what one media pass did.
type MediaResult struct {
	URLs    int // media URLs the snapshot references
	Known   int // already mirrored: not fetched
	Fetched int // fetched and stored now
	// Skipped were tried in this pass, or not for their host was down, and
	// are not mirrored.
	Skipped []MediaSkip
	// Deferred failed for good in an earlier pass and were not tried in
	// this one: they wait out their backoff (Retry).
	Deferred []MediaSkip
	// Dropped were in the mirror but are not served: their files fail the
	// type check, or their URLs the host policy. The index no longer names
	// them (media.Dir.Prune); those the snapshot references are in Skipped too.
	Dropped []MediaSkip
	// Down are the hosts taken down in this pass (MediaOptions.HostFailures).
	Down []*upstream.HostDownError
	Took time.Duration
}

// MediaSkip is a URL not mirrored, the class of its reason (a MediaError's)
// and the reason.
type MediaSkip struct {
	URL, Class, Reason string
	// Retry is when a URL that failed for good is tried again; zero for the
	// others, tried at the next pass.
	Retry time.Time

	permanent bool // MediaError.Permanent
}

// String is the URL, its password hidden, and the reason, for a report.
func (s MediaSkip) String() string { return redact(s.URL) + ": " + s.Reason }

// Host is the URL's host, as a report groups by it (upstream.HostOf).
func (s MediaSkip) Host() string { return cmp.Or(upstream.HostOf(s.URL), "(not a URL)") }

// The classes of a MediaError, which are also outcomes of
// refdata_sync_media_total and refdata_sync_media_files.
const (
	MediaRefused     = "refused"     // the host policy: host, port, user:password@, redirect, address
	MediaType        = "type"        // a type not served, or bytes not of the declared type
	MediaStatus      = "status"      // a final answer other than 200
	MediaUnreachable = "unreachable" // no whole answer: connection, timeout, a body cut off; its host down
	MediaTooBig      = "too big"     // over the size cap
	MediaDeadline    = "deadline"    // the pass's deadline came first
	MediaStore       = "store"       // fetched but not written
)

// MediaClasses are the classes, in the order a report lists them.
var MediaClasses = []string{MediaRefused, MediaType, MediaStatus, MediaUnreachable, MediaTooBig, MediaDeadline, MediaStore}

// MediaDeferred is the outcome of the URLs a pass did not try: they failed
// for good before and wait out their backoff.
const MediaDeferred = "deferred"

// Counts are the pass's URLs by outcome: known, fetched, deferred and each of
// MediaClasses, every one present.
func (r *MediaResult) Counts() map[string]int {
	c := map[string]int{"known": r.Known, "fetched": r.Fetched, MediaDeferred: len(r.Deferred)}
	for _, class := range MediaClasses {
		c[class] = 0
	}
	for _, s := range r.Skipped {
		c[s.Class]++
	}
	return c
}

// MediaError is why one URL was not mirrored.
type MediaError struct {
	Class string // one of MediaClasses
	// Permanent: the next pass would fail the same way (a 404 or 410, a
	// type not served, too big, the host policy), so the URL waits out a
	// backoff; every other failure is tried again at the next pass.
	Permanent bool
	Err       error
}

func (e *MediaError) Error() string { return e.Err.Error() }
func (e *MediaError) Unwrap() error { return e.Err }

// syncMedia mirrors the media a snapshot's files reference. It never fails:
// what it cannot fetch is reported in the result and skipped (nil when the
// snapshot cannot be read).
func (f *Follower) syncMedia(ctx context.Context, snapshot fs.FS, now time.Time) *MediaResult {
	mo := f.opt.Media
	start := time.Now()
	urls, err := media.URLs(snapshot, f.opt.Client.BaseURL()+"/v1/")
	if err != nil {
		f.opt.Logger.Error("media: the snapshot's URLs cannot be read; no media pass", "err", err)
		return nil
	}
	res := &MediaResult{URLs: len(urls)}
	defer func() { res.Took = time.Since(start) }()
	f.pruneMedia(res)
	failures, err := mo.Dir.Failures()
	if err != nil {
		f.opt.Logger.Error("media mirror: its record of failures cannot be read; every URL not mirrored is tried", "err", err)
	}
	// A failure under other settings (media hosts, size cap) is tried again
	// at once: the operator changed what decided it.
	settings := fmt.Sprintf("hosts %s; at most %d bytes", mo.Client.MediaHosts(), mo.Client.MaxBodyBytes())
	kept := map[string]media.Failure{} // the record after this pass
	var todo []string
	for _, u := range urls {
		if _, ok := mo.Dir.Lookup(u); ok {
			res.Known++
			continue
		}
		if fl, ok := failures[u]; ok && fl.Settings == settings && now.Before(fl.Next) {
			res.Deferred = append(res.Deferred, MediaSkip{URL: u, Class: fl.Class, Reason: fl.Reason, Retry: fl.Next})
			kept[u] = fl
			continue
		}
		todo = append(todo, u)
	}
	if len(todo) > 0 {
		f.fetchAll(ctx, todo, res)
	}
	for i, s := range res.Skipped {
		if !s.permanent {
			continue
		}
		fl, ok := failures[s.URL]
		if !ok || fl.Settings != settings {
			fl = media.Failure{URL: s.URL, Since: now, Settings: settings}
		}
		fl.Class, fl.Reason, fl.At = s.Class, s.Reason, now
		fl.Tries++
		fl.Next = now.Add(retryAfter(fl.Tries))
		kept[s.URL] = fl
		res.Skipped[i].Retry = fl.Next
	}
	if !maps.EqualFunc(kept, failures, func(a, b media.Failure) bool { return a == b }) {
		if err := mo.Dir.WriteFailures(slices.Collect(maps.Values(kept))); err != nil {
			f.opt.Logger.Error("media mirror: its record of failures is not written; they are tried at the next pass", "err", err)
		}
	}
	f.logSkips("media not mirrored", res.Skipped)
	if n := len(res.Deferred); n > 0 {
		next := slices.MinFunc(res.Deferred, func(a, b MediaSkip) int { return a.Retry.Compare(b.Retry) }).Retry
		f.opt.Logger.Info("media not tried: they failed for good before, and are tried again after their backoff", "urls", n, "next", next.Format(time.RFC3339))
	}
	counts := res.Counts()
	attrs := []any{"urls", res.URLs, "known", res.Known, "fetched", res.Fetched, "skipped", len(res.Skipped), "deferred", len(res.Deferred), "dropped", len(res.Dropped), "hosts_down", len(res.Down)}
	for _, class := range MediaClasses {
		if counts[class] > 0 {
			attrs = append(attrs, class, counts[class])
		}
	}
	f.opt.Logger.Info("media", append(attrs, "duration_seconds", time.Since(start).Seconds())...)
	f.opt.Metrics.mediaDone(res)
	return res
}

// fetchAll fetches todo into the mirror, adding to res what it fetched and
// skipped. Progress is told each URL done; without it, the counts are logged
// every LogEvery. A host that fails to connect HostFailures times in a row is
// not tried again in the pass.
func (f *Follower) fetchAll(ctx context.Context, todo []string, res *MediaResult) {
	mo := f.opt.Media
	// Half the sync's deadline, so the import keeps the rest; the files left
	// are fetched by the next pass.
	timeout := f.opt.Timeout / 2
	ctx, cancel := context.WithTimeoutCause(ctx, timeout, fmt.Errorf("the media pass's deadline of %s passed; the rest is fetched next time", timeout))
	defer cancel()
	hosts := upstream.NewHostBreaker(cmp.Or(mo.HostFailures, DefaultMediaHostFailures), func(e *upstream.HostDownError) {
		f.opt.Logger.Warn("media host unreachable: its other URLs are not tried in this pass", "host", e.Host, "failures", e.Failures, "err", e.Last)
	})
	var mu sync.Mutex
	done := 0
	if f.opt.Progress == nil {
		stop := make(chan struct{})
		defer close(stop)
		go func() {
			t := time.NewTicker(cmp.Or(mo.LogEvery, DefaultMediaLogEvery))
			defer t.Stop()
			for {
				select {
				case <-stop:
					return
				case <-t.C:
					mu.Lock()
					f.opt.Logger.Info("media pass", "done", done, "of", len(todo), "fetched", res.Fetched, "skipped", len(res.Skipped), "hosts_down", len(hosts.Down()))
					mu.Unlock()
				}
			}
		}()
	}
	var g errgroup.Group
	g.SetLimit(max(mo.Concurrency, 1))
	for _, u := range todo {
		g.Go(func() error {
			err := fetchMedia(ctx, mo, u, hosts)
			mu.Lock()
			defer mu.Unlock()
			if err == nil {
				res.Fetched++
			} else {
				res.Skipped = append(res.Skipped, MediaSkip{URL: u, Class: err.Class, Reason: err.Error(), permanent: err.Permanent})
			}
			done++
			if f.opt.Progress != nil {
				f.opt.Progress("media", done, len(todo))
			}
			return nil
		})
	}
	_ = g.Wait()
	slices.SortFunc(res.Skipped, func(a, b MediaSkip) int { return strings.Compare(a.URL, b.URL) })
	res.Down = hosts.Down()
	slices.SortFunc(res.Down, func(a, b *upstream.HostDownError) int { return strings.Compare(a.Host, b.Host) })
}

// retryAfter is the backoff after a URL's tries-th failure for good.
func retryAfter(tries int) time.Duration {
	d := MediaRetryFirst << min(max(tries-1, 0), 20)
	return min(d, MediaRetryMax)
}

// logSkips logs skips one line per host and class, with their count and the
// first URL and its reason: an unreachable host's thousands of URLs are one
// line.
func (f *Follower) logSkips(msg string, skips []MediaSkip) {
	type group struct{ host, class string }
	first := map[group]MediaSkip{}
	n := map[group]int{}
	var order []group
	for _, s := range skips {
		g := group{s.Host(), s.Class}
		if n[g] == 0 {
			first[g] = s
			order = append(order, g)
		}
		n[g]++
	}
	slices.SortFunc(order, func(a, b group) int {
		return cmp.Or(strings.Compare(a.host, b.host), strings.Compare(a.class, b.class))
	})
	for _, g := range order {
		f.opt.Logger.Warn(msg, "host", g.host, "class", g.class, "urls", n[g], "first", redact(first[g].URL), "reason", first[g].Reason)
	}
}

// pruneMedia takes out of the mirror what it must not serve (media.Dir.Prune):
// files that fail the type check, and URLs the host policy now refuses.
func (f *Follower) pruneMedia(res *MediaResult) {
	mo := f.opt.Media
	dropped, err := mo.Dir.Prune(mo.Client.CheckURL)
	if err != nil {
		f.opt.Logger.Error("media mirror: pruning its index failed", "err", err)
	}
	for _, d := range dropped {
		class := MediaType
		if mo.Client.CheckURL(d.URL) != nil {
			class = MediaRefused
		}
		res.Dropped = append(res.Dropped, MediaSkip{URL: d.URL, Class: class, Reason: d.Reason})
	}
	f.logSkips("media removed from the mirror", res.Dropped)
}

var mediaAccept = http.Header{"Accept": {"image/*, video/*"}}

// fetchMedia fetches one file and stores it: only a 200 of an image or video
// of a type served (media.Check), from where the client's policy allows, from
// a host hosts does not hold down.
func fetchMedia(ctx context.Context, mo *MediaOptions, u string, hosts *upstream.HostBreaker) *MediaError {
	if ctx.Err() != nil {
		return &MediaError{Class: MediaDeadline, Err: context.Cause(ctx)}
	}
	resp, err := mo.Client.GetURL(ctx, u, mediaAccept, hosts)
	var (
		down    *upstream.HostDownError
		refused *upstream.RefusedError
		status  *upstream.StatusError
		size    *upstream.SizeError
	)
	switch {
	case err == nil:
	case errors.As(err, &down):
		return &MediaError{Class: MediaUnreachable, Err: down}
	case errors.As(err, &refused):
		return &MediaError{Class: MediaRefused, Permanent: true, Err: refused}
	case errors.As(err, &status):
		return statusError(status.Status)
	case errors.As(err, &size):
		return &MediaError{Class: MediaTooBig, Permanent: true, Err: fmt.Errorf("larger than the limit of %d bytes", size.Limit)}
	case ctx.Err() != nil:
		return &MediaError{Class: MediaDeadline, Err: err}
	default:
		return &MediaError{Class: MediaUnreachable, Err: err}
	}
	if resp.Status != http.StatusOK {
		return statusError(resp.Status)
	}
	if _, err := mo.Dir.Put(u, resp.Header.Get("Content-Type"), resp.Body); err != nil {
		var te *media.TypeError
		if errors.As(err, &te) {
			return &MediaError{Class: MediaType, Permanent: true, Err: te}
		}
		return &MediaError{Class: MediaStore, Err: fmt.Errorf("store: %w", err)}
	}
	return nil
}

// statusError is a final answer other than 200: for good when it says the
// file is gone (404, 410).
func statusError(code int) *MediaError {
	gone := code == http.StatusNotFound || code == http.StatusGone
	return &MediaError{Class: MediaStatus, Permanent: gone, Err: fmt.Errorf("status %d", code)}
}

// redact hides a URL's password, for logs and reports.
func redact(u string) string {
	if p, err := url.Parse(u); err == nil {
		return p.Redacted()
	}
	return u
}
