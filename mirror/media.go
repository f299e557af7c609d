package mirror

import (
	"context"
	"errors"
	"fmt"
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
}

// MediaResult is what one media pass did.
type MediaResult struct {
	URLs    int // media URLs the snapshot references
	Known   int // already mirrored: not fetched
	Fetched int // fetched and stored now
	Skipped []MediaSkip
	// Dropped were in the mirror but are not served: their files fail the
	// type check, or their URLs the host policy. The index no longer names
	// them (media.Dir.Prune); those the snapshot references are in Skipped too.
	Dropped []MediaSkip
	Took    time.Duration
}

// MediaSkip is a URL not mirrored, the class of its reason (a MediaError's)
// and the reason: it is tried again at the next pass.
type MediaSkip struct{ URL, Class, Reason string }

// String is the URL, its password hidden, and the reason, for a report.
func (s MediaSkip) String() string { return redact(s.URL) + ": " + s.Reason }

// The classes of a MediaError, which are also outcomes of
// refdata_sync_media_total.
const (
	MediaRefused     = "refused"     // the host policy: host, port, user:password@, redirect, address
	MediaType        = "type"        // a type not served, or bytes not of the declared type
	MediaStatus      = "status"      // a final answer other than 200
	MediaUnreachable = "unreachable" // no whole answer: connection, timeout, a body cut off
	MediaTooBig      = "too big"     // over the size cap
	MediaDeadline    = "deadline"    // the pass's deadline came first
	MediaStore       = "store"       // fetched but not written
)

// MediaClasses are the classes, in the order a report lists them.
var MediaClasses = []string{MediaRefused, MediaType, MediaStatus, MediaUnreachable, MediaTooBig, MediaDeadline, MediaStore}

// MediaError is why one URL was not mirrored.
type MediaError struct {
	Class string // one of MediaClasses
	Err   error
}

func (e *MediaError) Error() string { return e.Err.Error() }
func (e *MediaError) Unwrap() error { return e.Err }

// syncMedia mirrors the media files references. It never fails: what it
// cannot fetch is reported in the result and skipped.
func (f *Follower) syncMedia(ctx context.Context, files map[string][]byte) *MediaResult {
	mo := f.opt.Media
	start := time.Now()
	urls := media.URLs(files, f.opt.Client.BaseURL()+"/v1/")
	res := &MediaResult{URLs: len(urls)}
	defer func() { res.Took = time.Since(start) }()
	f.pruneMedia(res)
	var todo []string
	for _, u := range urls {
		if _, ok := mo.Dir.Lookup(u); ok {
			res.Known++
		} else {
			todo = append(todo, u)
		}
	}
	if len(todo) == 0 {
		f.opt.Metrics.mediaDone(res)
		return res
	}
	// Half the sync's deadline, so the import keeps the rest; the files left
	// are fetched by the next pass.
	timeout := f.opt.Timeout / 2
	ctx, cancel := context.WithTimeoutCause(ctx, timeout, fmt.Errorf("the media pass's deadline of %s passed; the rest is fetched next time", timeout))
	defer cancel()
	var mu sync.Mutex
	var g errgroup.Group
	g.SetLimit(max(mo.Concurrency, 1))
	for _, u := range todo {
		g.Go(func() error {
			err := fetchMedia(ctx, mo, u)
			mu.Lock()
			defer mu.Unlock()
			if err != nil {
				res.Skipped = append(res.Skipped, MediaSkip{URL: u, Class: err.Class, Reason: err.Error()})
			} else {
				res.Fetched++
			}
			return nil
		})
	}
	_ = g.Wait()
	slices.SortFunc(res.Skipped, func(a, b MediaSkip) int { return strings.Compare(a.URL, b.URL) })
	for _, s := range res.Skipped {
		f.opt.Logger.Warn("media not mirrored", "url", redact(s.URL), "class", s.Class, "reason", s.Reason)
	}
	f.opt.Logger.Info("media", "urls", res.URLs, "known", res.Known, "fetched", res.Fetched, "skipped", len(res.Skipped),
		"dropped", len(res.Dropped), "duration_seconds", time.Since(start).Seconds())
	f.opt.Metrics.mediaDone(res)
	return res
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
		f.opt.Logger.Warn("media removed from the mirror", "url", redact(d.URL), "class", class, "reason", d.Reason)
	}
}

var mediaAccept = http.Header{"Accept": {"image/*, video/*"}}

// fetchMedia fetches one file and stores it: only a 200 of an image or video
// of a type served (media.Check), from where the client's policy allows.
func fetchMedia(ctx context.Context, mo *MediaOptions, u string) *MediaError {
	if ctx.Err() != nil {
		return &MediaError{MediaDeadline, context.Cause(ctx)}
	}
	resp, err := mo.Client.GetURL(ctx, u, mediaAccept, nil)
	var (
		refused *upstream.RefusedError
		status  *upstream.StatusError
		size    *upstream.SizeError
	)
	switch {
	case err == nil:
	case errors.As(err, &refused):
		return &MediaError{MediaRefused, refused}
	case errors.As(err, &status):
		return &MediaError{MediaStatus, fmt.Errorf("status %d", status.Status)}
	case errors.As(err, &size):
		return &MediaError{MediaTooBig, fmt.Errorf("larger than the limit of %d bytes", size.Limit)}
	case ctx.Err() != nil:
		return &MediaError{MediaDeadline, err}
	default:
		return &MediaError{MediaUnreachable, err}
	}
	if resp.Status != http.StatusOK {
		return &MediaError{MediaStatus, fmt.Errorf("status %d", resp.Status)}
	}
	if _, err := mo.Dir.Put(u, resp.Header.Get("Content-Type"), resp.Body); err != nil {
		var te *media.TypeError
		if errors.As(err, &te) {
			return &MediaError{MediaType, te}
		}
		return &MediaError{MediaStore, fmt.Errorf("store: %w", err)}
	}
	return nil
}

// redact hides a URL's password, for logs and reports.
func redact(u string) string {
	if p, err := url.Parse(u); err == nil {
		return p.Redacted()
	}
	return u
}
