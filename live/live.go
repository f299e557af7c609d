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
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/refdata/refdata/catalog"
	"github.com/refdata/refdata/gen"
	"github.com/refdata/refdata/impl"
	"github.com/refdata/refdata/pipeline"
	"github.com/refdata/refdata/store"
)

// state is one served version. Handlers read it once per request through the
// atomic pointer, so a request never sees two versions.
type state struct {
	ed     *catalog.Edition
	ptr    store.Pointer
	rawPtr []byte // the ACTIVE bytes this state came from
	latest atomic.Pointer[catalog.Body]
	// versions is /v1/versions as the store stood when this state was made: the
	// store changes its versions only when it publishes, which moves the pointer.
	versions *impl.VersionList
}

// Repository is the store-backed impl.Repository.
type Repository struct {
	st      *store.Store
	log     *slog.Logger
	metrics *pipeline.Metrics

	cur       atomic.Pointer[state]
	reload    sync.Mutex // one reload at a time
	badPtr    []byte     // an ACTIVE content that failed to load, not retried until it changes
	diffs     sync.Mutex // one on-demand diff computation at a time
	diffCache sync.Map   // "FROM-TO" → *catalog.Body
	// background counts the work started to run beside serving (compressing a
	// version at start-up, a diff body on first use), so Wait can wait for it.
	background sync.WaitGroup
}

// Wait returns when the background work started so far is done: every body the
// repository has handed out is compressed. Tests call it instead of sleeping;
// a shutdown may call it to leave nothing half done.
func (r *Repository) Wait() { r.background.Wait() }

// inBackground runs f beside serving, counted for Wait.
func (r *Repository) inBackground(f func()) {
	r.background.Add(1)
	go func() {
		defer r.background.Done()
		f()
	}()
}

var _ impl.Repository = (*Repository)(nil)

// Open loads the version to serve: the active one when intact, else the newest
// intact one (logging why). An empty store serves fallback, when given, until a
// version is published.
func Open(st *store.Store, logger *slog.Logger, m *pipeline.Metrics, fallback *catalog.Edition) (*Repository, error) {
	r := &Repository{st: st, log: logger, metrics: m}
	ptr, why, err := st.Resolve()
	switch {
	case errors.Is(err, store.ErrNotFound) && fallback != nil:
		logger.Warn("the store holds no intact version; serving the embedded sample data until one is imported", "store", st.Dir(), "err", err)
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
	ed, man, err := st.LoadEdition(ptr.ManifestID)
	if err != nil {
		return nil, err
	}
	_, raw, _ := st.Active()
	if why != "" {
		r.badPtr = raw
		raw = nil
	}
	r.swap(&state{ed: ed, ptr: ptr, rawPtr: raw}, man.PublishedAt, true)
	return r, nil
}

// swap makes s the served state. At start-up (first) the edition is served at once
// and its bodies switch to their compressed representations as they are made
// (Body.Pick reads them atomically), so the first answer comes fast. Later swaps
// compress first, while the previous version is still served, so gzip and brotli
// clients never get a version's identity bodies in between.
func (r *Repository) swap(s *state, publishedAt time.Time, first bool) {
	s.versions = r.listVersions(s.ed)
	reused := 0
	if prev := r.cur.Load(); prev != nil {
		reused = s.ed.ReuseCompressed(prev.ed)
	}
	if first {
		r.inBackground(func() { catalog.CompressAndRelease(s.ed) })
	} else {
		catalog.CompressAndRelease(s.ed)
	}
	r.cur.Store(s)
	r.diffCache.Range(func(k, _ any) bool { r.diffCache.Delete(k); return true })
	r.metrics.Active(s.ed, publishedAt)
	r.log.Info("serving version", "manifest_id", s.ed.ManifestID, "version", s.ed.Version.Version, "previous", s.ptr.Previous, "compressed_bodies_reused", reused)
}

// Active returns the edition being served.
func (r *Repository) Active() *catalog.Edition { return r.cur.Load().ed }

// Reload checks the active pointer and swaps to the version it names when that
// changed. It reports whether it swapped. Requests in flight keep the edition
// they loaded.
func (r *Repository) Reload() (bool, error) {
	r.reload.Lock()
	defer r.reload.Unlock()
	cur := r.cur.Load()
	ptr, raw, err := r.st.Active()
	if errors.Is(err, store.ErrNotFound) && cur.rawPtr == nil {
		r.metrics.Succeeded(time.Now())
		return false, nil
	}
	if raw != nil && (bytes.Equal(raw, cur.rawPtr) || bytes.Equal(raw, r.badPtr)) {
		r.metrics.Succeeded(time.Now())
		return false, nil
	}
	if err == nil {
		var ed *catalog.Edition
		var man store.Manifest
		if err = r.st.Verify(ptr.ManifestID, ptr.ManifestSHA256); err == nil {
			ed, man, err = r.st.LoadEdition(ptr.ManifestID)
		}
		if err == nil {
			r.badPtr = nil
			r.swap(&state{ed: ed, ptr: ptr, rawPtr: raw}, man.PublishedAt, false)
			r.metrics.Succeeded(time.Now())
			return true, nil
		}
	}
	r.badPtr = raw
	r.metrics.Failed(pipeline.Load)
	r.log.Error("the active pointer names a version that cannot be served; keeping the current one", "serving", cur.ed.ManifestID, "err", err)
	return false, err
}

// Poll calls Reload every interval until ctx ends.
func (r *Repository) Poll(ctx context.Context, interval time.Duration) {
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			_, _ = r.Reload()
		}
	}
}

// LatestDiff serves the diff stored when the active version was published.
func (r *Repository) LatestDiff() (*catalog.Body, error) {
	s := r.cur.Load()
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
	b := catalog.NewBody(body, "")
	r.inBackground(b.Compress)
	s.latest.Store(b)
	return b, nil
}

// Diff serves the diff between two retained versions: the stored file when there
// is an intact one, otherwise computed from both versions and stored. from and to
// are only compared with the store's listing, never used as paths.
func (r *Repository) Diff(from, to string) (*catalog.Body, error) {
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
		return b.(*catalog.Body), nil
	}
	r.diffs.Lock()
	defer r.diffs.Unlock()
	if b, ok := r.diffCache.Load(key); ok {
		return b.(*catalog.Body), nil
	}
	body, err := r.st.ReadDiff(f, t)
	switch {
	case err == nil:
		b := catalog.NewBody(body, "")
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

func (r *Repository) compute(from, to string) (*catalog.Body, error) {
	load := func(id string) (*catalog.Edition, error) {
		if ed := r.Active(); ed.ManifestID == id {
			return ed, nil
		}
		ed, _, err := r.st.LoadEdition(id)
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
func (r *Repository) Versions() *impl.VersionList { return r.cur.Load().versions }

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
	ed, _, err := r.st.LoadEdition(found)
	if err != nil {
		return nil, fmt.Errorf("load version %s: %w", found, err)
	}
	return ed, nil
}

// Snapshot returns a retained version's files ("" for the active one), each
// checked against its manifest, for /v1/export.
func (r *Repository) Snapshot(id string) (*impl.Snapshot, error) {
	if id == "" {
		s := r.cur.Load()
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
