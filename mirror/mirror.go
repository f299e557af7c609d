// Package mirror keeps a version store current from an upstream in the public
// API's shape: when its /v1/version changed, it fetches a consistent snapshot
// of every catalog in every locale and imports it through the pipeline.
// Nothing is published unless the whole snapshot was fetched and passed
// validation and the shrink guard.
package mirror

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"time"

	"github.com/refdata/refdata/pipeline"
	"github.com/refdata/refdata/store"
	"github.com/refdata/refdata/upstream"
)

// Defaults for Options' zero fields.
const (
	DefaultContentCheck = time.Hour
	DefaultTimeout      = 15 * time.Minute
)

// maxRestarts bounds the fetches started over because the upstream's version
// moved while fetching.
const maxRestarts = 3

// Options configure a Follower.
type Options struct {
	Client *upstream.Client
	Store  store.Backend
	// Import is passed to the pipeline (retain, limits, shrink guard, metrics);
	// its Context and Force are set per sync.
	Import pipeline.Options
	// ContentCheck is how often the whole snapshot is fetched and hashed even
	// when /v1/version is unchanged: its record has lagged the data (0: DefaultContentCheck).
	ContentCheck time.Duration
	// Timeout is the total deadline of one sync (0: DefaultTimeout).
	Timeout time.Duration
	// LanguageAll: "auto" asks ?language=all only when the upstream's
	// /openapi.json advertises it; "always"/"never" force the choice.
	LanguageAll string
	Logger      *slog.Logger
	Metrics     *Metrics
	Progress    func(done, total int) // told the requests answered out of the total
	Now         func() time.Time
	// Media, when set, mirrors the media a snapshot references before its import.
	Media *MediaOptions
}

// State is what the follower remembers between syncs (DIR/SYNC.json).
type State struct {
	Upstream    string    `json:"upstream"`
	ManifestID  string    `json:"manifestId"`
	ETag        string    `json:"etag,omitempty"`
	ContentHash string    `json:"contentHash"`
	CheckedAt   time.Time `json:"checkedAt"` // the last whole fetch
	SyncedAt    time.Time `json:"syncedAt"`  // the last sync that ended well
}

// Result is what one sync did.
type Result struct {
	// Outcome: "unchanged", "published", "already stored" (a version the store
	// holds, left as it is: a rollback is not undone) or "held" (content changed
	// under a manifestId that is not active: the operator rolled back).
	Outcome    string
	ManifestID string
	Requests   int64
	Bytes      int64
	Duration   time.Duration
	Restarts   int
	Lacking    []string // catalogs the upstream does not serve, carried over
	Notes      []string
	Report     *pipeline.Report // nil when nothing was imported
	Media      *MediaResult     // nil without Options.Media or a whole fetch
}

// Follower syncs one store from one upstream. One Sync at a time.
type Follower struct {
	opt Options
	all *bool
}

// New checks opt and fills defaults.
func New(opt Options) (*Follower, error) {
	if opt.Client == nil || opt.Store == nil {
		return nil, errors.New("follow: a client and a store are needed")
	}
	orDefault(&opt.ContentCheck, DefaultContentCheck)
	orDefault(&opt.Timeout, DefaultTimeout)
	opt.Logger = cmp.Or(opt.Logger, slog.New(slog.DiscardHandler))
	if opt.Now == nil {
		opt.Now = time.Now
	}
	if !slices.Contains([]string{"", "auto", "always", "never"}, opt.LanguageAll) {
		return nil, fmt.Errorf("follow: language-all %q: want auto, always or never", opt.LanguageAll)
	}
	return &Follower{opt: opt}, nil
}

// orDefault sets *v to def when it is not positive.
func orDefault[T ~int | ~int64](v *T, def T) {
	if *v <= 0 {
		*v = def
	}
}

func (f *Follower) state() State {
	var s State
	b, err := f.opt.Store.SyncState()
	if err == nil && b != nil {
		_ = json.Unmarshal(b, &s)
	}
	if s.Upstream != f.opt.Client.BaseURL() {
		return State{Upstream: f.opt.Client.BaseURL()}
	}
	return s
}

func (f *Follower) saveState(s State) error {
	b, err := json.MarshalIndent(s, "", "  ")
	if err != nil {
		return err
	}
	wait := f.opt.Import.LockTimeout
	orDefault(&wait, pipeline.DefaultLockTimeout)
	ctx, cancel := context.WithTimeout(context.Background(), wait)
	defer cancel()
	unlock, err := f.opt.Store.Lock(ctx)
	if err != nil {
		return err
	}
	defer unlock()
	return f.opt.Store.WriteSyncState(b)
}

// Sync checks the upstream once and, when it changed, fetches and imports it.
// The error wraps pipeline.ErrRejected when the snapshot was refused; the
// active version is untouched on every error.
func (f *Follower) Sync(ctx context.Context) (res *Result, err error) {
	start := time.Now()
	startReq := f.opt.Client.Requests()
	res = &Result{}
	ctx, cancel := context.WithTimeoutCause(ctx, f.opt.Timeout,
		fmt.Errorf("sync gave up after its deadline of %s", f.opt.Timeout))
	defer cancel()
	defer func() {
		res.Duration = time.Since(start)
		res.Requests = f.opt.Client.Requests() - startReq
		f.opt.Metrics.synced(res, err, f.opt.Now())
	}()

	st := f.state()
	now := f.opt.Now()
	etag := st.ETag
	if st.ManifestID == "" {
		etag = ""
	}
	v, err := f.opt.Client.Version(ctx, etag)
	if err != nil {
		return res, fmt.Errorf("check the upstream's version: %w", err)
	}
	due := now.Sub(st.CheckedAt) >= f.opt.ContentCheck
	if !v.NotModified {
		f.opt.Metrics.upstream(f.opt.Client.BaseURL(), v.ManifestID)
	}
	if (v.NotModified || v.ManifestID == st.ManifestID) && !due {
		res.Outcome, res.ManifestID = "unchanged", st.ManifestID
		st.ETag, st.SyncedAt = v.ETag, now
		return res, f.saveState(st)
	}

	if v.Refdata {
		// Another refdata (it sends X-Data-Version): its export, not its
		// rendered catalog routes (refdata.go says why).
		return res, f.syncRefdata(ctx, st, v.ManifestID, v.ETag, res)
	}
	all := f.languageAll(ctx)
	var snap *fetched
	for attempt := 0; ; attempt++ {
		snap, err = fetchSnapshot(ctx, f.opt.Client, v, all, f.opt.Import.MaxSnapshotBytes, f.opt.Progress)
		if err != nil {
			return res, fmt.Errorf("fetch the upstream's catalogs: %w", err)
		}
		after, err := f.opt.Client.Version(ctx, "")
		if err != nil {
			return res, fmt.Errorf("re-check the upstream's version: %w", err)
		}
		if after.ManifestID == snap.manifestID && bytes.Equal(after.Body, snap.files["version.json"]) {
			break
		}
		res.Restarts++
		v = after
		f.opt.Logger.Warn("the upstream published while we fetched; starting over", "was", snap.manifestID, "now", after.ManifestID, "restart", res.Restarts)
		if res.Restarts > maxRestarts {
			return res, fmt.Errorf("the upstream's version moved during %d fetches in a row (last %s → %s); nothing published", res.Restarts, snap.manifestID, after.ManifestID)
		}
	}
	f.opt.Metrics.upstream(f.opt.Client.BaseURL(), snap.manifestID)
	res.ManifestID, res.Lacking, res.Notes = snap.manifestID, snap.lacking, snap.notes
	for _, n := range snap.files {
		res.Bytes += int64(len(n))
	}
	if f.opt.Media != nil {
		res.Media = f.syncMedia(ctx, snap.files)
	}
	if len(snap.lacking) > 0 {
		f.opt.Logger.Info("the upstream does not serve these catalogs; they are carried over", "catalogs", strings.Join(snap.lacking, ", "))
	}
	if snap.manifestID == st.ManifestID && snap.contentHash == st.ContentHash {
		res.Outcome = "unchanged"
		st.ETag, st.CheckedAt, st.SyncedAt = snap.etag, now, now
		return res, f.saveState(st)
	}

	// Same manifestId, new content: re-publish it (--force), but only while it
	// is the active version; an operator's rollback is not undone.
	force := false
	if snap.manifestID == st.ManifestID {
		if _, err := f.opt.Store.Lookup(snap.manifestID); err == nil {
			active, _, aerr := f.opt.Store.Active()
			if aerr != nil || !strings.EqualFold(active.ManifestID, snap.manifestID) {
				res.Outcome = "held"
				f.opt.Logger.Warn("the upstream's content changed under a version that is not active (rolled back?); not re-publishing it",
					"manifest_id", snap.manifestID, "active", active.ManifestID)
				return res, nil
			}
			force = true
			f.opt.Logger.Info("the upstream's content changed under an unchanged manifestId; re-publishing it", "manifest_id", snap.manifestID)
		}
	}
	opt := f.opt.Import
	opt.Context, opt.Force = ctx, force
	rep, err := pipeline.ImportFiles(f.opt.Store, f.opt.Client.BaseURL(), snap.files, opt)
	res.Report = rep
	if err != nil {
		return res, err
	}
	res.Outcome = rep.Outcome
	st.ManifestID, st.ETag, st.ContentHash = snap.manifestID, snap.etag, snap.contentHash
	st.CheckedAt, st.SyncedAt = now, now
	return res, f.saveState(st)
}

func (f *Follower) languageAll(ctx context.Context) bool {
	switch f.opt.LanguageAll {
	case "always":
		return true
	case "never":
		return false
	}
	if f.all == nil {
		a := f.opt.Client.AdvertisesAllLanguages(ctx)
		f.all = &a
	}
	return *f.all
}

// Run syncs now and then every interval until ctx ends, logging each outcome;
// published is called after each sync that published a version.
func (f *Follower) Run(ctx context.Context, every time.Duration, published func()) {
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		res, err := f.Sync(ctx)
		switch {
		case ctx.Err() != nil:
			return
		case err != nil:
			f.opt.Logger.Error("sync failed; the active version is unchanged", "upstream", f.opt.Client.BaseURL(), "err", err)
		default:
			f.opt.Logger.Info("sync", "upstream", f.opt.Client.BaseURL(), "outcome", res.Outcome, "manifest_id", res.ManifestID,
				"requests", res.Requests, "duration_seconds", res.Duration.Seconds())
			if res.Outcome == "published" && published != nil {
				published()
			}
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}
