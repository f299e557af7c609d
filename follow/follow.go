// Package follow keeps a version store current from an upstream: when its
// /v1/version changed, it fetches a consistent snapshot of every catalog in
// every locale from an upstream in the public API's shape (fetch.go), or the
// export of another refdata (refdata.go), optionally mirrors the media it
// names (media.go), and imports it through the pipeline. Nothing is published
// unless the whole snapshot was fetched and passed validation and the shrink
// guard. Each sync's state goes into the store, which every server of the
// store exports (statemetrics.go).
package follow

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
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
	// Progress is told each step's progress: "fetch", the requests answered
	// out of the total; "media", the media URLs done out of those to fetch.
	Progress func(step string, done, total int)
	Now      func() time.Time
	// Media, when set, mirrors the media a snapshot references before its import.
	Media *MediaOptions
	// SpoolDir is where a fetch writes the upstream's answers and the
	// snapshot made of them, in a directory of its own removed after the
	// import ("": the system's temporary directory, $TMPDIR).
	SpoolDir string
}

// Result is what one sync did.
type Result struct {
	// Outcome: "unchanged", "published", "already stored" (a version the store
	// holds, left as it is: a rollback is not undone) or "held" (content changed
	// under a manifestId that is not active: the operator rolled back).
	Outcome string
	// Reason is a failed sync's reason class (ReasonStatus, …); "" otherwise.
	Reason     string
	ManifestID string
	Requests   int64
	Bytes      int64
	Duration   time.Duration
	Restarts   int
	Lacking    []string // catalogs the upstream does not serve (Report.CarriedFrom says whence they came)
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

// saveState writes s into the store, unless the sync failed and the store
// does not exist yet: a failed first sync creates no store (the log and the
// exit status say it failed).
func (f *Follower) saveState(s State, failed bool) error {
	if l, ok := f.opt.Store.(store.Lazy); ok && failed {
		if exists, err := l.Exists(); err != nil || !exists {
			f.opt.Logger.Warn("the failure is not recorded in the store: it does not exist yet (its first publish creates it)", "store", f.opt.Store.Location())
			return err
		}
	}
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
// active version is untouched on every error. How it ended is written into
// the store's sync state (State), failures included.
func (f *Follower) Sync(ctx context.Context) (res *Result, err error) {
	start := time.Now()
	startReq := f.opt.Client.Requests()
	res = &Result{}
	ctx, cancel := context.WithTimeoutCause(ctx, f.opt.Timeout, fmt.Errorf("%w of %s", errDeadline, f.opt.Timeout))
	defer cancel()
	st := f.state()
	now := f.opt.Now()
	err = f.sync(ctx, &st, res, now)
	if err != nil {
		res.Reason = reasonOf(ctx, err)
	}
	record(&st, res, err, res.Reason, now)
	if serr := f.saveState(st, err != nil); serr != nil {
		serr = fmt.Errorf("record the sync state in %s: %w", f.opt.Store.Location(), serr)
		if err == nil {
			err = failed(ReasonStore, serr)
		} else {
			f.opt.Logger.Error("the sync state is not recorded", "err", serr)
		}
	}
	res.Duration = time.Since(start)
	res.Requests = f.opt.Client.Requests() - startReq
	f.opt.Metrics.synced(res, err)
	return res, err
}

// classed is err with the reason class def, unless it has one.
func classed(err error, def string) error {
	if _, ok := errors.AsType[*failure](err); ok || err == nil {
		return err
	}
	return failed(def, err)
}

// sync is one sync, recording in st where it leaves off.
func (f *Follower) sync(ctx context.Context, st *State, res *Result, now time.Time) error {
	etag := st.ETag
	if st.ManifestID == "" {
		etag = ""
	}
	v, err := f.opt.Client.Version(ctx, etag)
	if err != nil {
		return fetchFailed(fmt.Errorf("check the upstream's version: %w", err))
	}
	if !v.NotModified {
		st.UpstreamManifestID = v.ManifestID
	}
	due := now.Sub(st.CheckedAt) >= f.opt.ContentCheck
	if (v.NotModified || v.ManifestID == st.ManifestID) && !due {
		res.Outcome, res.ManifestID = "unchanged", st.ManifestID
		st.ETag = v.ETag
		return nil
	}

	if v.Refdata {
		// Another refdata (it sends X-Data-Version): its export, not its
		// rendered catalog routes (refdata.go says why).
		return f.syncRefdata(ctx, st, v.ManifestID, v.ETag, res, now)
	}
	all := f.languageAll(ctx)
	var snap *fetched
	defer func() { snap.close() }()
	for attempt := 0; ; attempt++ {
		snap.close()
		snap, err = fetchSnapshot(ctx, f.opt.Client, v, all, f.opt.Import.MaxSnapshotBytes, f.opt.Progress, f.opt.SpoolDir)
		if err != nil {
			return classed(fmt.Errorf("fetch the upstream's catalogs: %w", err), ReasonInvalid)
		}
		after, err := f.opt.Client.Version(ctx, "")
		if err != nil {
			return fetchFailed(fmt.Errorf("re-check the upstream's version: %w", err))
		}
		st.UpstreamManifestID = after.ManifestID
		if after.ManifestID == snap.manifestID && bytes.Equal(after.Body, snap.version) {
			break
		}
		res.Restarts++
		v = after
		f.opt.Logger.Warn("the upstream published while we fetched; starting over", "was", snap.manifestID, "now", after.ManifestID, "restart", res.Restarts)
		if res.Restarts > maxRestarts {
			return failed(ReasonMoving, fmt.Errorf("the upstream's version moved during %d fetches in a row (last %s → %s); nothing published", res.Restarts, snap.manifestID, after.ManifestID))
		}
	}
	res.ManifestID, res.Lacking, res.Notes, res.Bytes = snap.manifestID, snap.lacking, snap.notes, snap.bytes
	if f.opt.Media != nil {
		res.Media = f.syncMedia(ctx, os.DirFS(snap.dir), now)
		if res.Media != nil {
			st.Media = mediaState(res.Media, now)
		}
	}
	if snap.manifestID == st.ManifestID && snap.contentHash == st.ContentHash {
		res.Outcome = "unchanged"
		st.ETag, st.CheckedAt = snap.etag, now
		return nil
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
				return nil
			}
			force = true
			f.opt.Logger.Info("the upstream's content changed under an unchanged manifestId; re-publishing it", "manifest_id", snap.manifestID)
		}
	}
	opt := f.opt.Import
	opt.Context, opt.Force = ctx, force
	rep, err := pipeline.Import(f.opt.Store, snap.dir, opt)
	rep.Source = f.opt.Client.BaseURL() // the report names the upstream, not the spool
	res.Report = rep
	if err != nil {
		return importFailed(err)
	}
	f.logLacking(res)
	res.Outcome = rep.Outcome
	st.ManifestID, st.ETag, st.ContentHash = snap.manifestID, snap.etag, snap.contentHash
	st.CheckedAt = now
	return nil
}

// logLacking says what became of the catalogs the upstream does not serve:
// carried over from the version active before, or empty when there was none.
func (f *Follower) logLacking(res *Result) {
	switch {
	case len(res.Lacking) == 0 || res.Report == nil:
	case res.Report.CarriedFrom != "":
		f.opt.Logger.Info("the upstream does not serve these catalogs; they are carried over", "from", res.Report.CarriedFrom, "catalogs", strings.Join(res.Lacking, ", "))
	default:
		f.opt.Logger.Info("the upstream does not serve these catalogs, and no version was active to carry them over from: they are empty", "catalogs", strings.Join(res.Lacking, ", "))
	}
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
			f.opt.Logger.Error("sync failed; the active version is unchanged", "upstream", f.opt.Client.BaseURL(), "reason", res.Reason, "err", err)
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
