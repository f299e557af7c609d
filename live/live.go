// Package live serves the version store to the API: it implements
// impl.Repository with the active edition behind one atomic pointer, swapped
// when the store's active pointer changes (Reload, Poll), and answers diffs from
// the store's precomputed files or computes and stores them.
//
// It sits between impl and store so that store knows nothing of HTTP errors.
package live

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/refdata/refdata/builder"
	"github.com/refdata/refdata/catalog"
	"github.com/refdata/refdata/cores"
	"github.com/refdata/refdata/gen"
	"github.com/refdata/refdata/impl"
	"github.com/refdata/refdata/representation"
	"github.com/refdata/refdata/store"
)

// state is one served version. Handlers read it once per request through the
// atomic pointer, so a request never sees two versions.
type state struct {
	ed     *catalog.Edition
	ptr    store.Pointer
	rawPtr []byte // the ACTIVE bytes this state came from
	latest atomic.Pointer[representation.Body]
	// versions is /v1/versions as the store stood when this state was made: the
	// store changes its versions only when it publishes, which moves the pointer.
	versions *impl.VersionList
	// brotliLater is ed.Bodies() when prepare made their gzip alone: install
	// starts their brotli. Kept, not walked again at the swap: that walk's
	// allocations set off a collection on serving's one proc (BENCHMARKS.md
	// § Stop 28).
	brotliLater []*representation.Body
}

// movedTo is s for the same version under another pointer (a rescheduled
// switch): one copy of every field, so a new one is not left behind.
func (s *state) movedTo(ptr store.Pointer, raw []byte) *state {
	m := &state{ed: s.ed, ptr: ptr, rawPtr: raw, versions: s.versions, brotliLater: s.brotliLater}
	m.latest.Store(s.latest.Load())
	return m
}

// Repository is the store-backed impl.Repository.
type Repository struct {
	st      store.Backend
	log     *slog.Logger
	metrics *Metrics

	cur       atomic.Pointer[state]
	reload    sync.Mutex // one reload at a time
	badPtr    []byte     // an ACTIVE content that failed to load, not retried until it changes
	diffs     sync.Mutex // one on-demand diff computation at a time
	diffCache sync.Map   // "FROM-TO" → *representation.Body
	// next is a version staged (loaded, rendered, compressed) to be served
	// from a scheduled instant, on a store shared by replicas.
	next atomic.Pointer[pending]
	// swap orders installs: a request that promotes a due staged version and
	// a reload that installs a newer one must not interleave, or the older one
	// could land last and the replica step back (seen under -race).
	swap sync.Mutex
	// onSwap runs after each install (OnSwap); guarded by swap.
	onSwap []func()
	// replica names this process to a Coordinator store.
	replica string
	// seen is what the last Reload read of the store: the pointer, or the
	// error reading it (for Ready).
	seen atomic.Pointer[seen]
	// beat orders heartbeats: each reports the state as it stands when it is
	// sent, so a keep-alive cannot overwrite a newer report with an older one.
	beat sync.Mutex
	// heartbeatEvery is how often keepAlive reports (defaultHeartbeat; the
	// tests shorten it with a shorter ReplicaTTL).
	heartbeatEvery time.Duration

	// background counts the work started to run beside serving (compressing a
	// version at start-up, a diff body on first use), so Wait can wait for it.
	background sync.WaitGroup
}

// Wait returns when the background work started so far is done: every body the
// repository has handed out is compressed. Tests call it instead of sleeping;
// a shutdown may call it to leave nothing half done.
func (r *Repository) Wait() { r.background.Wait() }

// inBackground runs f beside serving, counted for Wait. The compression f
// does borrows cores itself while it runs in this process (representation).
func (r *Repository) inBackground(f func()) {
	r.background.Add(1)
	go func() {
		defer r.background.Done()
		f()
	}()
}

var (
	_ impl.Repository = (*Repository)(nil)
	_ impl.Readiness  = (*Repository)(nil)
	_ impl.Swapping   = (*Repository)(nil)
)

// pending is a staged version and the instant it becomes the served one.
type pending struct {
	s           *state
	at          time.Time
	publishedAt time.Time
}

// seen is the store as the last Reload found it.
type seen struct {
	ptr store.Pointer
	err error
	at  time.Time
}

// Open loads the version to serve: the active one when intact, else the newest
// intact one (logging why). An empty store serves fallback, when given, until a
// version is published.
func Open(st store.Backend, logger *slog.Logger, m *Metrics, fallback *catalog.Edition) (*Repository, error) {
	giveBack := cores.Borrow() // loading: every core, as a swap has
	defer giveBack()
	r := &Repository{st: st, log: logger, metrics: m, replica: replicaName(), heartbeatEvery: defaultHeartbeat}
	ptr, why, err := store.ResolveIn(st)
	if err == nil && why == "" && ptr.Previous != "" && time.Now().Before(ptr.ActivateAt) {
		// The replicas have not switched to the newest version yet: serve the
		// one they serve, and stage the new one at the first Reload.
		if prev, _, perr := LoadEdition(st, ptr.Previous); perr == nil {
			r.start(&state{ed: prev, ptr: store.Pointer{ManifestID: ptr.Previous}}, ptr.PublishedAt)
			r.heartbeat()
			return r, nil
		}
	}
	switch {
	case errors.Is(err, store.ErrNotFound) && fallback != nil:
		logger.Warn("the store holds no intact version; serving the embedded sample data until one is imported", "store", st.Location(), "err", err)
		r.cur.Store(&state{ed: fallback, versions: r.listVersions(fallback)})
		_, raw, _ := st.Active()
		r.badPtr = raw
		m.Active(fallback, time.Time{})
		return r, nil
	case err != nil:
		return nil, err
	}
	if why != "" {
		logger.Error("the active version is not served: it fails its checks; serving the newest intact version", "reason", why, "serving", ptr.ManifestID)
	}
	ed, man, err := LoadEdition(st, ptr.ManifestID)
	if err != nil {
		return nil, err
	}
	_, raw, _ := st.Active()
	if why != "" {
		r.badPtr = raw
		raw = nil
	}
	r.start(&state{ed: ed, ptr: ptr, rawPtr: raw}, man.PublishedAt)
	r.heartbeat()
	return r, nil
}

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
// ends, beside Reload: a replica loading a large version for longer than the
// store's ReplicaTTL must still count as live, or the publisher stops waiting
// for it and schedules a switch it cannot make in time.
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

// defaultHeartbeat is well inside postgres.DefaultReplicaTTL (10 s).
const defaultHeartbeat = 2 * time.Second

// overtaken promotes a staged version the store's pointer has moved past.
// Publishers replace a pointer only once its switch instant has come (a
// Coordinator store waits for it), so the other replicas serve that version
// already; a replica that had not learned the instant (its reload ran late, a
// notification was lost) would otherwise drop it for the next one and step
// back while they serve it.
func (r *Repository) overtaken(ptr store.Pointer) {
	n := r.next.Load()
	if n == nil || n.s.ed.ManifestID == ptr.ManifestID {
		return
	}
	r.swap.Lock()
	defer r.swap.Unlock()
	if r.next.CompareAndSwap(n, nil) {
		r.install(n.s, n.publishedAt)
	}
}

// promoteDue makes a staged version the served one once its instant has come.
// Every reader calls it first, so no request after the instant is answered
// from the old version, whichever replica or goroutine it reaches.
func (r *Repository) promoteDue() {
	n := r.next.Load()
	if n == nil || time.Now().Before(n.at) {
		return
	}
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

// start makes s the served state at start-up: the edition is served at once and
// its bodies switch to their compressed representations as they are made
// (Body.Pick reads them atomically), so the first answer comes fast. Later
// versions are prepared first, while the previous version is still served:
// every body that changed gets its gzip representation before the swap and its
// brotli one beside serving after it, so a client that accepts gzip never gets
// a version's identity bodies, and brotli (most of the cost) does not hold up
// the swap.
func (r *Repository) start(s *state, publishedAt time.Time) {
	s.versions = r.listVersions(s.ed)
	r.inBackground(func() { representation.CompressAndRelease(s.ed.Bodies(), 0) })
	r.install(s, publishedAt)
}

// prepare readies a version to be swapped in: its list of versions, the
// compressed bodies of the served version where the bytes agree, and gzip for
// the rest; brotli follows once it is installed. It returns how many bodies it
// took from the served version.
func (r *Repository) prepare(s *state) (reused int) {
	s.versions = r.listVersions(s.ed)
	bodies := s.ed.Bodies() // walks every table: once
	if prev := r.cur.Load(); prev != nil {
		old := prev.ed.Bodies()
		// Bodies the build took from prev are counted as well as those Reuse
		// matches by bytes: a builder child's edition arrives with the first
		// kind only.
		reused = representation.Kept(bodies, old) + representation.Reuse(bodies, old)
	}
	representation.CompressGzipAll(bodies)
	s.brotliLater = bodies
	return reused
}

// backgroundWorkers is how many goroutines compress beside serving: all cores
// but one, so requests keep one, and one while requests come in (cores.Workers).
func backgroundWorkers() int { return min(cores.Workers(), max(1, cores.Procs()-1)) }

// install makes a prepared state the served one and starts its brotli beside
// serving. Not before: a staged version waits for its instant, and replicas
// that compressed while waiting slowed each other's reloads past it.
func (r *Repository) install(s *state, publishedAt time.Time) {
	r.cur.Store(s)
	if s.brotliLater != nil {
		// The next build's child starts once this swap is done with the CPU.
		r.inBackground(func() {
			representation.CompressAndRelease(s.brotliLater, backgroundWorkers())
			builder.Replenish()
		})
	}
	r.diffCache.Range(func(k, _ any) bool { r.diffCache.Delete(k); return true })
	for _, f := range r.onSwap {
		f()
	}
	r.metrics.Active(s.ed, publishedAt)
	r.log.Info("serving version", "manifest_id", s.ed.ManifestID, "version", s.ed.Version.Version, "previous", s.ptr.Previous)
}

// storedBrotli gives the bodies of a prepared version the brotli its import
// stored with it (store.Publication.Brotli, checked there by decoding and
// here against its checksum: representation.ApplyBrotli says why not both),
// so the compression after the swap has only the rest to do. A version
// stored without, or whose brotli fails its checks, is compressed as before:
// what is stored saves work, it is never needed.
//
// It runs before the swap, on the cores Reload borrowed: its reading,
// checksum and copies (21–32 ms for an 18-locale version) on serving's one
// proc held requests up (BENCHMARKS.md § Stop 42), and after the swap it gave
// the cores back with a collection of its own (§ Stop 44). So the version's
// first answers have brotli, and a staged version has it before its instant.
func (r *Repository) storedBrotli(s *state) {
	start := time.Now()
	blob, err := r.st.ReadBrotli(s.ed.ManifestID)
	if errors.Is(err, store.ErrNotFound) {
		return
	}
	if err != nil {
		r.log.Warn("the version's stored brotli is not used; compressing its bodies here", "manifest_id", s.ed.ManifestID, "err", err)
		return
	}
	applied, err := representation.ApplyBrotli(blob, s.brotliLater)
	if err != nil {
		r.log.Warn("the version's stored brotli is not used; compressing its bodies here", "manifest_id", s.ed.ManifestID, "err", err)
		return
	}
	r.log.Info("brotli from the store", "manifest_id", s.ed.ManifestID, "bodies", applied,
		"took", time.Since(start).Round(time.Millisecond))
}

// OnSwap has f called each time another version becomes the served one, right
// after it does: for what keeps answers of the version served until then (the
// edge's memo) to let go of them before the swap's collection, not at its
// next request. f runs while installs wait, so it must not call r.
func (r *Repository) OnSwap(f func()) {
	r.swap.Lock()
	defer r.swap.Unlock()
	r.onSwap = append(r.onSwap, f)
}

// Store is the store the repository serves.
func (r *Repository) Store() store.Backend { return r.st }

// Active returns the edition being served.
func (r *Repository) Active() *catalog.Edition { return r.current().ed }

// Reload checks the active pointer and swaps to the version it names when that
// changed. It reports whether it swapped. Requests in flight keep the edition
// they loaded.
func (r *Repository) Reload() (bool, error) {
	r.reload.Lock()
	defer r.reload.Unlock()
	defer r.heartbeat()
	r.current()
	ptr, raw, err := r.st.Active()
	r.seen.Store(&seen{ptr: ptr, err: err, at: time.Now()})
	if err == nil {
		r.overtaken(ptr)
	}
	cur := r.cur.Load()
	if err != nil && !errors.Is(err, store.ErrNotFound) {
		r.log.Warn("cannot read the store's active pointer; serving what is loaded", "serving", cur.ed.ManifestID, "err", err)
		return false, err
	}
	if errors.Is(err, store.ErrNotFound) && cur.rawPtr == nil {
		r.metrics.checked(time.Now())
		return false, nil
	}
	if raw != nil && (bytes.Equal(raw, cur.rawPtr) || bytes.Equal(raw, r.badPtr)) {
		r.metrics.checked(time.Now())
		return false, nil
	}
	if err == nil && ptr.ManifestID == cur.ed.ManifestID && cur.rawPtr != nil {
		// The pointer changed but not the version (a rescheduled switch).
		r.cur.CompareAndSwap(cur, cur.movedTo(ptr, raw))
		r.metrics.checked(time.Now())
		return false, nil
	}
	if n := r.next.Load(); err == nil && n != nil && n.s.ed.ManifestID == ptr.ManifestID {
		// Staged already: take the instant the store has now.
		r.next.CompareAndSwap(n, &pending{s: n.s.movedTo(ptr, raw), at: ptr.ActivateAt, publishedAt: n.publishedAt})
		r.metrics.checked(time.Now())
		return false, nil
	}
	if err == nil {
		var ed *catalog.Edition
		var man store.Manifest
		began := time.Now()
		var giveBack func()
		ed, man, giveBack, err = r.load(ptr, cur.ed)
		if err == nil {
			r.badPtr = nil
			s := &state{ed: ed, ptr: ptr, rawPtr: raw}
			loaded := time.Now()
			// The gzip left before the swap, the stored brotli and the swap,
			// on the cores load borrowed, and at LoadingGOGC. Without them the
			// second after an 18-locale load had a p99 of 31-33 ms against
			// 5-10: both versions are live, and serving on one proc shared it
			// with the collector's work over them (BENCHMARKS.md § Stop 27).
			defer giveBack()
			reused := r.prepare(s)
			r.storedBrotli(s)
			r.log.Info("prepared version", "manifest_id", ed.ManifestID, "load", loaded.Sub(began).Round(time.Millisecond),
				"compress", time.Since(loaded).Round(time.Millisecond), "reused", reused)
			r.metrics.checked(time.Now())
			if time.Now().Before(ptr.ActivateAt) {
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
	r.badPtr = raw
	r.metrics.reloadFailed()
	r.log.Error("the active pointer names a version that cannot be served; keeping the current one", "serving", cur.ed.ManifestID, "err", err)
	return false, err
}

// load reads and builds the version ptr names, after prev, and returns with
// every core borrowed (package cores) for the caller's gzip, stored brotli and
// swap; the caller gives them back. One borrow from the read to the swap:
// given back between the steps, the cores collected the heap each time, with
// the read's garbage and two editions in it (some 40–80 ms of marking each
// for 18 locales, BENCHMARKS.md § Stop 44). They are given back only while
// the builder child builds, since this process then only waits (package
// builder).
func (r *Repository) load(ptr store.Pointer, prev *catalog.Edition) (_ *catalog.Edition, _ store.Manifest, giveBack func(), err error) {
	giveBack = cores.Borrow()
	defer func() {
		if err != nil {
			giveBack()
		}
	}()
	m, files, err := r.st.Verify(ptr.ManifestID, ptr.ManifestSHA256)
	if err != nil {
		return nil, m, giveBack, err
	}
	ed, m, err := built(m, files, prev, func(files map[string][]byte, prev *catalog.Edition) (*catalog.Edition, error) {
		if ed := r.storedPart(m, files, prev); ed != nil {
			return ed, nil
		}
		giveBack()
		defer func() { giveBack = cores.Borrow() }()
		return builder.Build(files, prev)
	})
	return ed, m, giveBack, err
}

// storedPart reads the version m describes from the part its import built
// after the version before it (store.Publication.Part), when there is one and
// prev is that version: what the builder child would have rendered and
// gzipped, seconds of CPU for 18 locales, is then a read (BENCHMARKS.md
// § Stop 43). It returns nil when the version is to be built as before: none
// stored, another previous version (catalog.ErrPartMismatch), or bytes that
// fail their checksum or do not read. It runs on the cores load borrowed, as
// reading a child's part does.
func (r *Repository) storedPart(m store.Manifest, files map[string][]byte, prev *catalog.Edition) *catalog.Edition {
	if m.Part == "" || prev == nil {
		return nil
	}
	start := time.Now()
	b, err := r.st.ReadPart(m.ManifestID)
	var ed *catalog.Edition
	if err == nil {
		ed, err = catalog.ReadStoredPart(b, files, prev)
	}
	switch {
	case errors.Is(err, catalog.ErrPartMismatch):
		r.log.Info("building the version: its stored part is not for the version served", "manifest_id", m.ManifestID, "serving", prev.ManifestID, "why", err)
	case err != nil:
		r.log.Warn("building the version: its stored part cannot be used", "manifest_id", m.ManifestID, "err", err)
	default:
		r.log.Info("read the version from its stored part", "manifest_id", m.ManifestID, "bytes", len(b), "took", time.Since(start).Round(time.Millisecond))
	}
	return ed
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
			// A staged version waits for its instant: look for it often, in case
			// the store's notification is late or lost.
			wait = min(interval, stagedPoll)
		}
		select {
		case <-ctx.Done():
			return
		case <-time.After(wait):
			_, _ = r.Reload()
		}
	}
}

// stagedPoll is how often a replica with a staged version reads the pointer.
const stagedPoll = 50 * time.Millisecond

// LatestDiff serves the diff stored when the active version was published.
func (r *Repository) LatestDiff() (*representation.Body, error) {
	s := r.current()
	if b := s.latest.Load(); b != nil {
		return b, nil
	}
	if s.ptr.Previous == "" {
		return nil, impl.NotFound(fmt.Sprintf("version %s was the first one imported (or was recovered after damage), so it has no diff; use /v1/diff/{from}/{to} with two retained versions", s.ed.ManifestID))
	}
	body, err := r.st.ReadDiff(s.ptr.Previous, s.ed.ManifestID)
	switch {
	case errors.Is(err, store.ErrNotFound):
		return nil, impl.NotFound(fmt.Sprintf("the diff %s → %s is no longer stored (the previous version was pruned by retention)", s.ptr.Previous, s.ed.ManifestID))
	case err != nil:
		r.log.Error("stored latest diff is unreadable", "from", s.ptr.Previous, "to", s.ed.ManifestID, "err", err)
		return nil, err
	}
	b := representation.NewBody(body, "")
	r.inBackground(b.Compress)
	s.latest.Store(b)
	return b, nil
}

// Diff serves the diff between two retained versions: the stored file when there
// is an intact one, otherwise computed from both versions and stored. from and to
// are only compared with the store's listing, never used as paths.
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
		b := representation.NewBody(body, "")
		r.inBackground(b.Compress)
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
	r.inBackground(b.Compress)
	r.diffCache.Store(key, b)
	if unlock, ok := r.st.TryLock(); ok {
		if err := r.st.WriteDiff(f, t, b.JSON); err != nil {
			r.log.Warn("could not store a computed diff", "from", f, "to", t, "err", err)
		}
		unlock()
	}
	return b, nil
}

func (r *Repository) compute(from, to string) (*representation.Body, error) {
	load := func(id string) (*catalog.Edition, error) {
		if ed := r.Active(); ed.ManifestID == id {
			return ed, nil
		}
		ed, _, err := LoadEdition(r.st, id)
		if err != nil {
			return nil, fmt.Errorf("load version %s for a diff: %w", id, err)
		}
		return ed, nil
	}
	a, err := load(from)
	if err != nil {
		return nil, err
	}
	b, err := load(to)
	if err != nil {
		return nil, err
	}
	d, err := catalog.Diff(a, b, time.Now())
	if err != nil {
		return nil, err
	}
	return catalog.DiffBody(d)
}

func notFound(id string, err error) error {
	if errors.Is(err, store.ErrNotFound) {
		return impl.NotFound(fmt.Sprintf("version %s is not retained; /v1/version names the active one", id))
	}
	return err
}

// listVersions lists the store's versions newest first, from their manifests
// (no version is loaded), marking active. A store that cannot be listed, or holds
// no intact version (the embedded fallback is served), lists active alone.
func (r *Repository) listVersions(active *catalog.Edition) *impl.VersionList {
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
		vs = append(vs, gen.RetainedVersion{
			ManifestId: m.ManifestID, Version: m.Version, Branch: m.Branch,
			PublishedAt: &at, ContentHash: catalog.ContentHash(m.Files), Active: isActive,
		})
	}
	if !found {
		vs = append([]gen.RetainedVersion{impl.RetainedVersion(active, nil, true)}, vs...)
	}
	l, err := impl.NewVersionList(vs)
	if err != nil {
		r.log.Error("render /v1/versions", "err", err)
		return nil
	}
	l.Body.Compress()
	return l
}

// Versions lists the retained versions, newest first.
func (r *Repository) Versions() *impl.VersionList { return r.current().versions }

// Ready: a version is loaded, the store answered the last Reload, and the
// version served is the one the store says every replica serves now.
func (r *Repository) Ready() (gen.ProbeStatus, bool, string) {
	cur := r.current()
	st := gen.ProbeStatus{Serving: cur.ed.ManifestID}
	if n := r.next.Load(); n != nil {
		id := n.s.ed.ManifestID
		st.Staged = &id
	}
	sn := r.seen.Load()
	if sn == nil {
		return st, true, "" // not polled yet: what Open loaded is the store's
	}
	if sn.err != nil && !errors.Is(sn.err, store.ErrNotFound) {
		return st, false, "the store cannot be read (the replica's log says why); serving " + cur.ed.ManifestID
	}
	if sn.err != nil {
		return st, true, "" // an empty store: serving the embedded sample data
	}
	due := sn.ptr.ManifestID
	if time.Now().Before(sn.ptr.ActivateAt) && sn.ptr.Previous != "" {
		due = sn.ptr.Previous
	}
	st.Active = &due
	if due != cur.ed.ManifestID {
		behind := float32(0)
		if !sn.ptr.ActivateAt.IsZero() {
			behind = float32(time.Since(sn.ptr.ActivateAt).Seconds())
		}
		st.SecondsBehind = &behind
		return st, false, fmt.Sprintf("serving %s, the store's active version is %s (loading it)", cur.ed.ManifestID, due)
	}
	zero := float32(0)
	st.SecondsBehind = &zero
	return st, true, ""
}

// RetainedEdition returns a retained version's edition: the active one as
// served, any other loaded from the store (checksums verified). id is only
// compared with the store's listing, never used as a path.
func (r *Repository) RetainedEdition(id string) (*catalog.Edition, error) {
	if ed := r.Active(); strings.EqualFold(ed.ManifestID, id) {
		return ed, nil
	}
	found, err := r.st.Lookup(id)
	if err != nil {
		return nil, notFound(id, err)
	}
	ed, _, err := LoadEdition(r.st, found)
	if err != nil {
		return nil, fmt.Errorf("load version %s: %w", found, err)
	}
	return ed, nil
}

func isNotFound(err error) bool { return errors.Is(err, store.ErrNotFound) }

// LoadEdition reads a version from a store (checksums verified) and builds its
// edition, with the repairs an import applies. Stores keep bytes; building
// what is served from them is this package's part.
func LoadEdition(b store.Backend, id string) (*catalog.Edition, store.Manifest, error) {
	return LoadEditionAfter(b, id, nil)
}

// LoadEditionAfter is LoadEdition for a swap from prev: the catalogs whose files
// did not change are taken from prev rather than rendered again
// (catalog.BuildFilesReusing).
func LoadEditionAfter(b store.Backend, id string, prev *catalog.Edition) (*catalog.Edition, store.Manifest, error) {
	m, files, err := b.ReadVersion(id)
	if err != nil {
		return nil, m, err
	}
	return built(m, files, prev, catalog.BuildFilesReusing)
}

// built builds a read version's files after prev with build, and gives the
// edition the version's content hash.
func built(m store.Manifest, files map[string][]byte, prev *catalog.Edition, build func(map[string][]byte, *catalog.Edition) (*catalog.Edition, error)) (*catalog.Edition, store.Manifest, error) {
	ed, err := build(files, prev)
	if err != nil {
		return nil, m, fmt.Errorf("version %s: %w", m.ManifestID, err)
	}
	ed.ContentHash = catalog.ContentHash(m.Files)
	return ed, m, nil
}

// Snapshot returns a retained version's files ("" for the active one), each
// checked against its manifest, for /v1/export.
func (r *Repository) Snapshot(id string) (*impl.Snapshot, error) {
	if id == "" {
		s := r.current()
		if s.ptr.ManifestID == "" {
			return nil, impl.NotFound("the embedded sample data is served until a version is imported; it has no stored files")
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
	return &impl.Snapshot{ManifestID: m.ManifestID, ContentHash: catalog.ContentHash(m.Files), Files: files}, nil
}
