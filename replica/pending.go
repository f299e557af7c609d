package replica

import (
	"context"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/refdata/refdata/catalog"
	"github.com/refdata/refdata/edition"
	"github.com/refdata/refdata/gen"
	"github.com/refdata/refdata/representation"
	"github.com/refdata/refdata/store"
)

// Pending is the repository of a server that listens before its data is
// there: edition.None, not ready for the reason Wait gave, until Set hands it
// the repository to serve.
type Pending struct {
	none  *edition.Static
	real  atomic.Pointer[edition.Repository]
	why   atomic.Pointer[string]
	store bool // a store is to be served: refdata_store_up is reported

	mu     sync.Mutex // orders Set and OnSwap
	onSwap []func()
}

var (
	_ edition.Repository = (*Pending)(nil)
	_ edition.Readiness  = (*Pending)(nil)
	_ edition.Swapping   = (*Pending)(nil)
	_ edition.Exporter   = (*Pending)(nil)
)

// NewPending waits, not ready because of why, for a repository; store says
// whether it will be a store's (a *Repository).
func NewPending(why string, store bool) *Pending {
	p := &Pending{none: edition.Serve(edition.None()), store: store}
	p.Wait(why)
	return p
}

// Wait says why there is no repository yet.
func (p *Pending) Wait(why string) { p.why.Store(&why) }

// Set makes r the repository served, and tells OnSwap's functions.
func (p *Pending) Set(r edition.Repository) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.real.Store(&r)
	sw, swaps := r.(edition.Swapping)
	for _, f := range p.onSwap {
		if swaps {
			sw.OnSwap(f)
		}
		f()
	}
}

// OnSwap has f called when the repository is set, and at its swaps after.
func (p *Pending) OnSwap(f func()) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.onSwap = append(p.onSwap, f)
	if r := p.real.Load(); r != nil {
		if sw, ok := (*r).(edition.Swapping); ok {
			sw.OnSwap(f)
		}
	}
}

func (p *Pending) repo() edition.Repository {
	if r := p.real.Load(); r != nil {
		return *r
	}
	return p.none
}

func (p *Pending) Active() *edition.Edition                       { return p.repo().Active() }
func (p *Pending) LatestDiff() (*representation.Body, error)      { return p.repo().LatestDiff() }
func (p *Pending) Diff(f, t string) (*representation.Body, error) { return p.repo().Diff(f, t) }
func (p *Pending) Versions() *edition.VersionList                 { return p.repo().Versions() }
func (p *Pending) RetainedEdition(id string) (*edition.Edition, error) {
	return p.repo().RetainedEdition(id)
}

// Snapshot is the repository's, when it exports.
func (p *Pending) Snapshot(id string) (*edition.Snapshot, error) {
	if ex, ok := p.repo().(edition.Exporter); ok {
		return ex.Snapshot(id)
	}
	return nil, catalog.Errorf(catalog.ENOTFOUND, "no version to export yet")
}

// Ready is the repository's once set (a repository without readiness is
// ready); until then not ready, saying why.
func (p *Pending) Ready() (gen.ProbeStatus, bool, string) {
	if r := p.real.Load(); r != nil {
		if rd, ok := (*r).(edition.Readiness); ok {
			return rd.Ready()
		}
		return gen.ProbeStatus{Serving: (*r).Active().ManifestID}, true, ""
	}
	return gen.ProbeStatus{}, false, *p.why.Load()
}

// Forget takes the repository, once set, out of its store's replicas
// (Repository.Forget).
func (p *Pending) Forget() {
	if r, ok := p.repo().(*Repository); ok {
		r.Forget()
	}
}

// storeUp is the store's, once reached.
func (p *Pending) storeUp() bool {
	r, ok := p.repo().(*Repository)
	return ok && r.storeUp()
}

// OpenRetrying connects to a store and opens a Repository on it, trying again
// every retry until ctx ends (a replica may start before its database). While
// it tries, p says why it waits; the errors go to the log, never to a client.
func OpenRetrying(ctx context.Context, connect func(context.Context) (store.Backend, error), logger *slog.Logger, m *Metrics, fallback *edition.Edition, retry time.Duration, p *Pending, opts ...Option) (*Repository, error) {
	for {
		st, err := connect(ctx)
		if err == nil {
			var r *Repository
			if r, err = Open(st, logger, m, fallback, opts...); err == nil {
				return r, nil
			}
		}
		p.Wait("the store cannot be reached (since start); the replica's log says why")
		logger.Warn("store unreachable; not ready, trying again", "err", err, "retry_in_seconds", retry.Seconds())
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(retry):
		}
	}
}
