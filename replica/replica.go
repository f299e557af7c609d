// Package replica serves a version store to the API: an edition.Repository with
// the active version's edition behind one atomic pointer, swapped when the
// store's active pointer changes (Reload, Poll), replicas on a shared store
// switching together. Swapping to a version reads its edition index, never
// renders: the bodies stay in the store's segments, read through one bounded
// cache, and segments versions share are opened once.
package replica

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"os"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"weak"

	"golang.org/x/sync/singleflight"

	"github.com/refdata/refdata/blob"
	"github.com/refdata/refdata/catalog"
	"github.com/refdata/refdata/edition"
	"github.com/refdata/refdata/gen"
	"github.com/refdata/refdata/representation"
	"github.com/refdata/refdata/store"
)

// state is one served version, read once per request, so a request never
// sees two versions.
type state struct {
	ed     *edition.Edition
	ptr    store.Pointer
	rawPtr []byte // the pointer revision this state came from
	latest atomic.Pointer[representation.Body]
	// versions is /v1/versions as the store stood when this state was made
	// (versions change only by a publish, which moves the pointer).
	versions *edition.VersionList
}

// movedTo is s for the same version under another pointer (a rescheduled switch).
func (s *state) movedTo(ptr store.Pointer, raw []byte) *state {
	m := &state{ed: s.ed, ptr: ptr, rawPtr: raw, versions: s.versions}
	m.latest.Store(s.latest.Load())
	return m
}

// Repository is the store-backed edition.Repository.
type Repository struct {
	st      store.Backend
	log     *slog.Logger
	metrics *Metrics

	cur       atomic.Pointer[state]
	reload    sync.Mutex // one reload at a time
	badPtr    []byte     // a pointer revision that failed to load, retried after badRetry
	badAt     time.Time  // when badPtr failed
	diffs     sync.Mutex // one on-demand diff computation at a time
	diffCache sync.Map   // "FROM-TO" → *representation.Body
	// next is a version staged to be served from a scheduled instant.
	next atomic.Pointer[pending]
	// swap orders installs, so a promoted staged version and a newer reloaded
	// one cannot land in the wrong order and step the replica back.
	swap   sync.Mutex
	onSwap []func() // guarded by swap
	// replica names this process to a Coordinator store.
	replica string
	seen    atomic.Pointer[seen]
	// beat orders heartbeats, so an older report never overwrites a newer one.
	beat           sync.Mutex
	heartbeatEvery time.Duration
	// badRetry: the failure may have been passing (a database being restored).
	badRetry time.Duration
	// kept holds up to keptEditions editions other than the active one that
	// RetainedEdition read, most recent first. loads shares one read of a
	// version among the requests that ask for it meanwhile; readMu makes reads
	// of different versions one at a time, so at most one pack is decoded at
	// once; keptMu guards kept alone, so a kept version answers while another
	// is read.
	loads  singleflight.Group
	readMu sync.Mutex
	keptMu sync.Mutex
	kept   []*edition.Edition
	// cache keeps the bodies read last; segs, the segments open, by sha256,
	// while an edition names them.
	cache *blob.Cache
	segMu sync.Mutex
	segs  map[string]weak.Pointer[blob.Segment]
	// now is the clock the switch instants and the retry of a failed
	// pointer are read against (WithClock); the waits between polls and
	// heartbeats are timers.
	now func() time.Time
}

// Option tunes Open.
type Option func(*Repository)

// WithCache reads bodies through c (by default one of blob.DefaultCacheBytes).
func WithCache(c *blob.Cache) Option { return func(r *Repository) { r.cache = c } }

// WithClock reads the time from now instead of time.Now: a test moves it to
// a switch instant, or past the retry of a failed version, rather than
// sleeping until then.
func WithClock(now func() time.Time) Option { return func(r *Repository) { r.now = now } }

const (
	// keptEditions: an edition is its index (a few MB at the public API's
	// size; its bodies stay in the segments), and three is a cycle of pinned
	// reads over three old versions without a read per request.
	keptEditions    = 3
	defaultBadRetry = time.Minute
	// defaultHeartbeat is well inside postgres.DefaultReplicaTTL (10 s).
	defaultHeartbeat = 2 * time.Second
	// stagedPoll is how often a replica with a staged version reads the pointer.
	stagedPoll = 50 * time.Millisecond
)

var (
	_ edition.Repository = (*Repository)(nil)
	_ edition.Readiness  = (*Repository)(nil)
	_ edition.Swapping   = (*Repository)(nil)
	_ edition.Exporter   = (*Repository)(nil)
)

// pending is a staged version and the instant it becomes the served one.
type pending struct {
	s           *state
	at          time.Time
	publishedAt time.Time
}

// seen is what Reload last read of the store: the last pointer it read
// (kept through a failed read) and the last read's error.
type seen struct {
	ptr store.Pointer
	err error
}

// Open loads the version to serve: the active one when intact, else the
// newest intact one (logging why). A store with no intact version serves
// fallback until a version is published; a nil fallback is edition.None, not
// ready (NoVersion), answering 503.
func Open(st store.Backend, logger *slog.Logger, m *Metrics, fallback *edition.Edition, opts ...Option) (*Repository, error) {
	r := &Repository{st: st, log: logger, metrics: m, replica: replicaName(), heartbeatEvery: defaultHeartbeat, badRetry: defaultBadRetry,
		segs: map[string]weak.Pointer[blob.Segment]{}, now: time.Now}
	for _, o := range opts {
		o(r)
	}
	r.badAt = r.now()
	if r.cache == nil {
		r.cache = blob.NewCache(blob.DefaultCacheBytes)
	}
	if fallback == nil {
		fallback = edition.None()
	}
	// The pointer as it was before the version is read: a publish meanwhile
	// leaves it older than what is read, so the first Reload sees the change
	// (rather than taking the new pointer for the version read and staying
	// behind until the next publish).
	active, raw, _ := st.Active()
	ptr, man, ed, why, err := store.ResolveWith(st, r.read)
	if err == nil && why == "" && ptr.Previous != "" && r.now().Before(ptr.ActivateAt) {
		// The replicas have not switched to the newest version yet: serve the
		// one they serve, and stage the new one at the first Reload.
		if pm, prev, perr := r.read(ptr.Previous, ""); perr == nil {
			r.start(&state{ed: prev, ptr: store.Pointer{ManifestID: ptr.Previous, Previous: ptr.PreviousBefore}}, pm.PublishedAt)
			r.heartbeat()
			return r, nil
		}
	}
	switch {
	case errors.Is(err, store.ErrNotFound):
		serving := "serving the embedded sample data"
		if fallback.IsNone() {
			serving = "not ready, answering 503"
		}
		what, attrs := "no version yet", []any{"store", st.Location()}
		if vs, verr := st.Versions(); verr != nil || len(vs) > 0 {
			what, attrs = "no intact version", append(attrs, "err", err) // each one's damage
		}
		logger.Warn("the store holds "+what+"; "+serving+" until one is imported", attrs...)
		r.cur.Store(&state{ed: fallback, versions: r.listVersions(fallback)})
		r.badPtr = raw
		m.Active(fallback, time.Time{})
		return r, nil
	case err != nil:
		return nil, err
	}
	if why != "" {
		logger.Error("the active version is not served: it fails its checks; serving the newest intact version", "reason", why, "serving", ptr.ManifestID)
		r.badPtr, raw = raw, nil
		r.seen.Store(&seen{ptr: active}) // not ready: not the active version
	}
	r.start(&state{ed: ed, ptr: ptr, rawPtr: raw}, man.PublishedAt)
	r.heartbeat()
	return r, nil
}

// read reads a version's edition from the store, its manifest checked against
// manifestSHA when not "".
func (r *Repository) read(id, manifestSHA string) (store.Manifest, *edition.Edition, error) {
	m, index, err := r.st.ReadIndex(id, manifestSHA)
	if err != nil {
		return m, nil, err
	}
	ed, err := edition.Decode(index, r.segment)
	if err != nil {
		return m, nil, fmt.Errorf("version %s: %w", id, err)
	}
	return m, ed, nil
}

// segment opens a segment an index names, or returns it already open: the
// versions that share it share its cached bodies.
func (r *Repository) segment(sum string, size int64) (*blob.Segment, error) {
	r.segMu.Lock()
	defer r.segMu.Unlock()
	if s := r.segs[sum].Value(); s != nil {
		return s, nil
	}
	s, err := r.st.Segment(sum, size, r.cache)
	if err != nil {
		return nil, err
	}
	for k, wp := range r.segs {
		if wp.Value() == nil {
			delete(r.segs, k) // closed once no edition named it
		}
	}
	r.segs[sum] = weak.Make(s)
	return s, nil
}

// Cache is the cache the bodies are read through.
func (r *Repository) Cache() *blob.Cache { return r.cache }

// replicaName names this process to the other replicas: host, pid and a random
// part, so a restarted process is a new replica.
func replicaName() string {
	host, _ := os.Hostname()
	return fmt.Sprintf("%s/%d/%08x", host, os.Getpid(), rand.Uint32())
}

// heartbeat tells a Coordinator store what this replica serves and has staged.
func (r *Repository) heartbeat() {
	c, ok := r.st.(store.Coordinator)
	if !ok {
		return
	}
	r.beat.Lock()
	defer r.beat.Unlock()
	staged := ""
	if n := r.next.Load(); n != nil {
		staged = n.s.ed.ManifestID
	}
	if err := c.Heartbeat(r.replica, r.cur.Load().ed.ManifestID, staged); err != nil {
		r.log.Warn("could not report to the store", "err", err)
	}
}

// Forget takes this replica out of a Coordinator store's list (at shutdown), so
// publishes stop waiting for it.
func (r *Repository) Forget() {
	if f, ok := r.st.(interface{ Forget(string) error }); ok {
		_ = f.Forget(r.replica)
	}
}

// keepAlive reports to a Coordinator store every r.heartbeatEvery until ctx
// ends: a replica loading a version for longer than the store's ReplicaTTL
// must still count as live, or the publisher stops waiting for it.
func (r *Repository) keepAlive(ctx context.Context) {
	t := time.NewTicker(r.heartbeatEvery)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			r.heartbeat()
		}
	}
}

// overtaken promotes a staged version the store's pointer has moved past:
// publishers move a pointer only once its switch instant has come, so the
// other replicas serve it already, and skipping it would step back.
func (r *Repository) overtaken(ptr store.Pointer) {
	if n := r.next.Load(); n != nil && n.s.ed.ManifestID != ptr.ManifestID {
		r.promote(n)
	}
}

// promoteDue makes a staged version the served one once its instant has come;
// every reader calls it first, so no request after the instant sees the old one.
func (r *Repository) promoteDue() {
	if n := r.next.Load(); n != nil && !r.now().Before(n.at) {
		r.promote(n)
	}
}

// promote installs n unless another goroutine has promoted or replaced it.
func (r *Repository) promote(n *pending) {
	r.swap.Lock()
	defer r.swap.Unlock()
	if r.next.CompareAndSwap(n, nil) {
		r.install(n.s, n.publishedAt)
	}
}

// current is the served state, after any due switch.
func (r *Repository) current() *state {
	r.promoteDue()
	return r.cur.Load()
}

// start makes s the served state at start-up.
func (r *Repository) start(s *state, publishedAt time.Time) {
	s.versions = r.listVersions(s.ed)
	r.install(s, publishedAt)
}

// install makes a loaded state the served one.
func (r *Repository) install(s *state, publishedAt time.Time) {
	r.cur.Store(s)
	r.diffCache.Clear()
	for _, f := range r.onSwap {
		f()
	}
	r.metrics.Active(s.ed, publishedAt)
	r.log.Info("serving version", "manifest_id", s.ed.ManifestID, "version", s.ed.Version.Version, "previous", s.ptr.Previous)
}

// OnSwap has f called right after each swap, so what keeps answers of the
// version served until then (the edge's memo) lets go of them at once. f runs
// while installs wait, so it must not call r.
func (r *Repository) OnSwap(f func()) {
	r.swap.Lock()
	defer r.swap.Unlock()
	r.onSwap = append(r.onSwap, f)
}

// Store is the store the repository serves.
func (r *Repository) Store() store.Backend { return r.st }

// Active returns the edition being served.
func (r *Repository) Active() *edition.Edition { return r.current().ed }

// Reload swaps to the version the active pointer names when that changed, and
// reports whether it did. Requests in flight keep the edition they loaded.
func (r *Repository) Reload() (bool, error) {
	r.reload.Lock()
	defer r.reload.Unlock()
	defer r.heartbeat()
	r.current()
	ptr, raw, err := r.st.Active()
	if err != nil {
		if last := r.seen.Load(); last != nil {
			ptr = last.ptr // what the store last said is active, until it says again
		}
	}
	r.seen.Store(&seen{ptr: ptr, err: err})
	if err == nil {
		r.overtaken(ptr)
	}
	cur := r.cur.Load()
	if err != nil && !errors.Is(err, store.ErrNotFound) {
		r.log.Warn("cannot read the store's active pointer; serving what is loaded", "serving", cur.ed.ManifestID, "err", err)
		return false, err
	}
	if errors.Is(err, store.ErrNotFound) && cur.rawPtr == nil ||
		raw != nil && (bytes.Equal(raw, cur.rawPtr) || bytes.Equal(raw, r.badPtr) && r.now().Sub(r.badAt) < r.badRetry) {
		r.metrics.checked(r.now()) // nothing new, or a pointer that failed
		return false, nil
	}
	if err == nil && ptr.ManifestID == cur.ed.ManifestID && ptr.ManifestSHA256 == cur.ptr.ManifestSHA256 && cur.rawPtr != nil {
		// The pointer changed but not the version (a rescheduled switch);
		// another manifest is a replace (import --force): read it.
		r.cur.CompareAndSwap(cur, cur.movedTo(ptr, raw))
		r.metrics.checked(r.now())
		return false, nil
	}
	if n := r.next.Load(); err == nil && n != nil && n.s.ed.ManifestID == ptr.ManifestID {
		// Staged already: take the store's instant.
		r.next.CompareAndSwap(n, &pending{s: n.s.movedTo(ptr, raw), at: ptr.ActivateAt, publishedAt: n.publishedAt})
		r.metrics.checked(r.now())
		return false, nil
	}
	if err == nil {
		began := r.now()
		var ed *edition.Edition
		var man store.Manifest
		ptr, man, ed, err = store.ReadPointed(ptr, r.read)
		if err == nil {
			r.badPtr = nil
			s := &state{ed: ed, ptr: ptr, rawPtr: raw}
			s.versions = r.listVersions(ed)
			// Read with the version, so it answers from its instant even if
			// the store cannot be read then; a failure is tried again when asked.
			if _, err := r.latestDiff(s); err != nil && catalog.ErrorCode(err) != catalog.ENOTFOUND {
				r.log.Warn("cannot read the latest diff of the version read; reading it again when asked", "manifest_id", ed.ManifestID, "err", err)
			}
			r.log.Info("read version", "manifest_id", ed.ManifestID, "load_seconds", r.now().Sub(began).Seconds())
			r.metrics.checked(r.now())
			if r.now().Before(ptr.ActivateAt) {
				r.next.Store(&pending{s: s, at: ptr.ActivateAt, publishedAt: man.PublishedAt})
				r.log.Info("staged version", "manifest_id", ed.ManifestID, "switch_at", ptr.ActivateAt)
				return false, nil
			}
			r.swap.Lock()
			r.next.Store(nil)
			r.install(s, man.PublishedAt)
			r.swap.Unlock()
			return true, nil
		}
	}
	r.badPtr, r.badAt = raw, r.now()
	r.metrics.reloadFailed()
	r.log.Error("the active pointer names a version that cannot be served; keeping the current one", "serving", cur.ed.ManifestID, "retry_in_seconds", r.badRetry.Seconds(), "err", err)
	return false, err
}

// Poll calls Reload every interval until ctx ends; on a Coordinator store it
// also reports to the store every r.heartbeatEvery, whatever Reload is doing.
func (r *Repository) Poll(ctx context.Context, interval time.Duration) {
	if _, ok := r.st.(store.Coordinator); ok {
		go r.keepAlive(ctx)
	}
	for {
		wait := interval
		if r.next.Load() != nil {
			wait = min(interval, stagedPoll) // in case the notification is late or lost
		}
		select {
		case <-ctx.Done():
			return
		case <-time.After(wait):
			_, _ = r.Reload()
		}
	}
}

// LatestDiff serves the diff stored when the active version was published.
func (r *Repository) LatestDiff() (*representation.Body, error) { return r.latestDiff(r.current()) }

// latestDiff is s's latest diff, read from the store once and kept in s.
func (r *Repository) latestDiff(s *state) (*representation.Body, error) {
	if b := s.latest.Load(); b != nil {
		return b, nil
	}
	if s.ptr.ManifestID == "" {
		return nil, catalog.Errorf(catalog.ENOTFOUND, "the embedded sample data's version %s is served until a version is imported into the store; it has no diff", s.ed.ManifestID)
	}
	if s.ptr.Previous == "" {
		return nil, catalog.Errorf(catalog.ENOTFOUND, "version %s was the first one imported (or was recovered after damage), so it has no diff; use /v1/diff/{from}/{to} with two retained versions", s.ed.ManifestID)
	}
	body, err := r.st.ReadDiff(s.ptr.Previous, s.ed.ManifestID)
	switch {
	case errors.Is(err, store.ErrNotFound):
		return nil, catalog.Errorf(catalog.ENOTFOUND, "the diff %s → %s is no longer stored (the previous version was pruned by retention)", s.ptr.Previous, s.ed.ManifestID)
	case err != nil:
		return nil, err
	}
	b := representation.Encode(body, "", representation.Best)
	s.latest.Store(b)
	return b, nil
}

// Diff serves the diff between two retained versions: the stored one when
// intact, otherwise computed from both versions and stored.
func (r *Repository) Diff(from, to string) (*representation.Body, error) {
	f, err := r.st.Lookup(from)
	if err != nil {
		return nil, notFound(from, err)
	}
	t, err := r.st.Lookup(to)
	if err != nil {
		return nil, notFound(to, err)
	}
	key := f + "-" + t
	if b, ok := r.diffCache.Load(key); ok {
		return b.(*representation.Body), nil
	}
	r.diffs.Lock()
	defer r.diffs.Unlock()
	if b, ok := r.diffCache.Load(key); ok {
		return b.(*representation.Body), nil
	}
	body, err := r.st.ReadDiff(f, t)
	switch {
	case err == nil:
		b := representation.Encode(body, "", representation.Best)
		r.diffCache.Store(key, b)
		return b, nil
	case errors.Is(err, store.ErrCorrupt):
		r.log.Warn("stored diff is damaged; computing it again", "from", f, "to", t, "err", err)
	case !errors.Is(err, store.ErrNotFound):
		return nil, err
	}
	b, err := r.compute(f, t)
	if err != nil {
		return nil, err
	}
	r.diffCache.Store(key, b)
	if unlock, ok := r.st.TryLock(); ok {
		body, _ := b.JSON() // made here, in memory
		if err := r.st.WriteDiff(f, t, body); err != nil {
			r.log.Warn("could not store a computed diff", "from", f, "to", t, "err", err)
		}
		unlock()
	}
	return b, nil
}

// compute diffs two stored versions, stamped with the newer one's publication
// so every replica makes the same bytes.
func (r *Repository) compute(from, to string) (*representation.Body, error) {
	ms, err := r.st.Versions()
	if err != nil {
		return nil, err
	}
	var newest store.Manifest
	for _, m := range ms {
		if (m.ManifestID == from || m.ManifestID == to) && m.Seq > newest.Seq {
			newest = m
		}
	}
	eds := make([]*edition.Edition, 2)
	for i, id := range []string{from, to} {
		if eds[i], err = r.RetainedEdition(id); err != nil {
			return nil, fmt.Errorf("load version %s for a diff: %w", id, err)
		}
	}
	return edition.DiffBody(eds[0], eds[1], newest.PublishedAt)
}

func notFound(id string, err error) error {
	if errors.Is(err, store.ErrNotFound) {
		return catalog.Errorf(catalog.ENOTFOUND, "version %s is not retained; /v1/versions lists the ones that are", id)
	}
	return err
}

// listVersions lists the store's versions newest first from their manifests,
// marking active; active alone when the store cannot be listed or active is
// not stored (the embedded fallback).
func (r *Repository) listVersions(active *edition.Edition) *edition.VersionList {
	ms, err := r.st.Versions()
	if err != nil {
		r.log.Error("list the store's versions for /v1/versions; listing the active one alone", "err", err)
	}
	vs := make([]gen.RetainedVersion, 0, len(ms)+1)
	found := false
	for i := len(ms) - 1; i >= 0; i-- {
		m := ms[i]
		at := m.PublishedAt.UTC().Format(time.RFC3339)
		isActive := m.ManifestID == active.ManifestID
		found = found || isActive
		v := gen.RetainedVersion{
			ManifestId: m.ManifestID, Version: m.Version, Branch: m.Branch,
			PublishedAt: &at, ContentHash: catalog.ContentHash(m.Files), Active: isActive,
		}
		if m.Bulk != nil {
			bulk := make(map[string]gen.BulkFile, len(m.Bulk))
			for lang, f := range m.Bulk {
				bulk[lang] = gen.BulkFile{Sha256: f.SHA256, Size: f.Size}
			}
			v.Bulk = &bulk
		}
		vs = append(vs, v)
	}
	if !found && !active.IsNone() {
		vs = append([]gen.RetainedVersion{edition.RetainedVersion(active, nil, true)}, vs...)
	}
	l, err := edition.NewVersionList(vs)
	if err != nil {
		r.log.Error("render /v1/versions", "err", err)
		return nil
	}
	return l
}

// Versions lists the retained versions, newest first.
func (r *Repository) Versions() *edition.VersionList { return r.current().versions }

// NoVersion is why a replica on a store with no version yet is not ready.
const NoVersion = "no version imported yet"

// Ready: a version is loaded, the store answered the last Reload, and the
// version served is the one the store says every replica serves now.
func (r *Repository) Ready() (gen.ProbeStatus, bool, string) {
	cur := r.current()
	st := gen.ProbeStatus{Serving: cur.ed.ManifestID}
	if n := r.next.Load(); n != nil {
		id := n.s.ed.ManifestID
		st.Staged = &id
	}
	if cur.ed.IsNone() {
		return st, false, NoVersion
	}
	switch sn := r.seen.Load(); {
	case sn == nil: // not polled yet: what Open loaded is the store's
	case sn.err != nil && !errors.Is(sn.err, store.ErrNotFound) && sn.ptr.ManifestID == "":
		return st, false, "the store cannot be read (the replica's log says why); serving " + cur.ed.ManifestID
	case errors.Is(sn.err, store.ErrNotFound): // an empty store: serving the embedded sample data
	default:
		// Also while the store cannot be read: nothing is published
		// meanwhile, so the version it last said is active still is, and a
		// database restart does not take every replica out of its balancer
		// (refdata_store_up says the store is down).
		due := sn.ptr.ManifestID
		now := r.now()
		if now.Before(sn.ptr.ActivateAt) && sn.ptr.Previous != "" {
			due = sn.ptr.Previous
		}
		st.Active = &due
		if due != cur.ed.ManifestID {
			behind := float32(0)
			if !sn.ptr.ActivateAt.IsZero() {
				behind = float32(now.Sub(sn.ptr.ActivateAt).Seconds())
			}
			st.SecondsBehind = &behind
			return st, false, fmt.Sprintf("serving %s, the store's active version is %s (loading it)", cur.ed.ManifestID, due)
		}
		zero := float32(0)
		st.SecondsBehind = &zero
	}
	// Every route answers, the latest diff too: it is read (and kept) now.
	if _, err := r.LatestDiff(); err != nil && catalog.ErrorCode(err) != catalog.ENOTFOUND {
		return st, false, "the latest diff of " + cur.ed.ManifestID + " cannot be read from the store"
	}
	return st, true, ""
}

// RetainedEdition returns a retained version's edition: the active one as
// served, any other from kept or read from the store (and kept).
func (r *Repository) RetainedEdition(id string) (*edition.Edition, error) {
	cur := r.current()
	if strings.EqualFold(cur.ed.ManifestID, id) {
		return cur.ed, nil
	}
	if ed := r.keptEdition(cur.versions, id); ed != nil {
		return ed, nil
	}
	v, err, _ := r.loads.Do(strings.ToUpper(id), func() (any, error) {
		r.readMu.Lock()
		defer r.readMu.Unlock()
		if ed := r.keptEdition(cur.versions, id); ed != nil {
			return ed, nil // read by a load that ended as this one began
		}
		return r.load(id)
	})
	if err != nil {
		return nil, err
	}
	return v.(*edition.Edition), nil
}

// load reads a retained version's edition from the store and keeps it.
func (r *Repository) load(id string) (*edition.Edition, error) {
	found, err := r.st.Lookup(id)
	if err != nil {
		return nil, notFound(id, err)
	}
	_, ed, err := r.read(found, "")
	if errors.Is(err, store.ErrCorrupt) || errors.Is(err, edition.ErrBadPack) {
		return nil, catalog.Internal("version "+found+" cannot be read", err)
	}
	if err != nil {
		return nil, err
	}
	r.keptMu.Lock()
	r.kept = append([]*edition.Edition{ed}, r.kept[:min(len(r.kept), keptEditions-1)]...)
	r.keptMu.Unlock()
	return ed, nil
}

// keptEdition returns version id from kept, moved to the front, or nil; a
// kept version versions no longer lists is dropped.
func (r *Repository) keptEdition(versions *edition.VersionList, id string) *edition.Edition {
	r.keptMu.Lock()
	defer r.keptMu.Unlock()
	for i, ed := range r.kept {
		if strings.EqualFold(ed.ManifestID, id) {
			if !listed(versions, ed.ManifestID) {
				r.kept = slices.Delete(r.kept, i, i+1) // no longer retained
				return nil
			}
			copy(r.kept[1:i+1], r.kept[:i])
			r.kept[0] = ed
			return ed
		}
	}
	return nil
}

// listed reports whether l (nil: unknown) lists the version id.
func listed(l *edition.VersionList, id string) bool {
	return l == nil || slices.ContainsFunc(l.Versions, func(v gen.RetainedVersion) bool { return v.ManifestId == id })
}

// storeUp: the last read of the store's active pointer succeeded (or found none).
func (r *Repository) storeUp() bool {
	sn := r.seen.Load()
	return sn == nil || sn.err == nil || errors.Is(sn.err, store.ErrNotFound)
}

// Snapshot returns a retained version's files ("" for the active one), each
// checked against its manifest, for /v1/export.
func (r *Repository) Snapshot(id string) (*edition.Snapshot, error) {
	if id == "" {
		s := r.current()
		if s.ptr.ManifestID == "" {
			return nil, catalog.Errorf(catalog.ENOTFOUND, "the embedded sample data is served until a version is imported; it has no stored files")
		}
		id = s.ptr.ManifestID
	}
	found, err := r.st.Lookup(id)
	if err != nil {
		return nil, notFound(id, err)
	}
	m, files, err := r.st.ReadVersion(found)
	if err != nil {
		return nil, fmt.Errorf("export version %s: %w", found, err)
	}
	return &edition.Snapshot{ManifestID: m.ManifestID, ContentHash: catalog.ContentHash(m.Files), Files: files}, nil
}
