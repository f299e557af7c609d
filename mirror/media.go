package mirror

import (
	"context"
	"errors"
	"fmt"
	"mime"
	"net/http"
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
	// Client fetches the files; its MaxBodyBytes is the size cap (a larger file
	// is skipped), and its timeouts, retries and User-Agent apply.
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
	Took    time.Duration
}

// MediaSkip is a URL not mirrored, and why: it is tried again at the next pass.
type MediaSkip struct{ URL, Reason string }

// syncMedia mirrors the media files references. It never fails: what it
// cannot fetch is reported in the result and skipped.
func (f *Follower) syncMedia(ctx context.Context, files map[string][]byte) *MediaResult {
	mo := f.opt.Media
	start := time.Now()
	urls := media.URLs(files, f.opt.Client.BaseURL()+"/v1/")
	res := &MediaResult{URLs: len(urls)}
	defer func() { res.Took = time.Since(start) }()
	var todo []string
	for _, u := range urls {
		if _, ok := mo.Dir.Lookup(u); ok {
			res.Known++
		} else {
			todo = append(todo, u)
		}
	}
	if len(todo) == 0 {
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
				res.Skipped = append(res.Skipped, MediaSkip{URL: u, Reason: err.Error()})
			} else {
				res.Fetched++
			}
			return nil
		})
	}
	_ = g.Wait()
	for _, s := range res.Skipped {
		f.opt.Logger.Warn("media not mirrored", "url", s.URL, "reason", s.Reason)
	}
	f.opt.Logger.Info("media", "urls", res.URLs, "known", res.Known, "fetched", res.Fetched, "skipped", len(res.Skipped),
		"duration_seconds", time.Since(start).Seconds())
	f.opt.Metrics.mediaDone(res)
	return res
}

var mediaAccept = http.Header{"Accept": {"image/*, video/*"}}

// fetchMedia fetches one file and stores it: only a 200 of an image or video.
func fetchMedia(ctx context.Context, mo *MediaOptions, u string) error {
	if ctx.Err() != nil {
		return context.Cause(ctx)
	}
	resp, err := mo.Client.GetURL(ctx, u, mediaAccept)
	if err != nil {
		var se *upstream.StatusError
		if errors.As(err, &se) {
			return fmt.Errorf("status %d", se.Status)
		}
		return err
	}
	if resp.Status != http.StatusOK {
		return fmt.Errorf("status %d", resp.Status)
	}
	ct, _, err := mime.ParseMediaType(resp.Header.Get("Content-Type"))
	if err != nil || !strings.HasPrefix(ct, "image/") && !strings.HasPrefix(ct, "video/") {
		return fmt.Errorf("content type %q is not an image or a video", resp.Header.Get("Content-Type"))
	}
	if _, err := mo.Dir.Put(u, ct, resp.Body); err != nil {
		return fmt.Errorf("store: %w", err)
	}
	return nil
}
