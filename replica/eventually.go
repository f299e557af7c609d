package replica

import (
	"context"
	"log/slog"
	"sync/atomic"
	"time"

	"github.com/refdata/refdata/edition"
	"github.com/refdata/refdata/gen"
	"github.com/refdata/refdata/representation"
	"github.com/refdata/refdata/store"
)

// Eventually is the repository of a replica whose store could not be reached at
// start (the database is down or still starting): it answers from the fallback
// edition and is not ready, so a load balancer sends it nothing, while it keeps
// trying the store; once the store opens it is that store's Repository.
type Eventually struct {
	fallback *edition.Static
	real     atomic.Pointer[Repository]
	why      atomic.Pointer[string]
}

var (
	_ edition.Repository = (*Eventually)(nil)
	_ edition.Readiness  = (*Eventually)(nil)
)

// OpenEventually returns at once and connects in the background, every retry
// until ctx ends; opened runs once with the Repository (to start its polling).
func OpenEventually(ctx context.Context, connect func(context.Context) (store.Backend, error), logger *slog.Logger, m *Metrics, fallback *edition.Edition, retry time.Duration, opened func(*Repository)) *Eventually {
	e := &Eventually{fallback: edition.Serve(fallback)}
	why := "the store has not been reached yet"
	e.why.Store(&why)
	go func() {
		for {
			st, err := connect(ctx)
			if err == nil {
				var r *Repository
				if r, err = Open(st, logger, m, fallback); err == nil {
					e.real.Store(r)
					logger.Info("the store is reachable; serving its version", "store", st.Location(), "manifest_id", r.Active().ManifestID)
					opened(r)
					return
				}
			}
			msg := "the store cannot be reached (since start); the replica's log says why"
			e.why.Store(&msg)
			logger.Warn("store unreachable; serving the embedded sample data, not ready", "err", err, "retry_in", retry)
			select {
			case <-ctx.Done():
				return
			case <-time.After(retry):
			}
		}
	}()
	return e
}

func (e *Eventually) repo() edition.Repository {
	if r := e.real.Load(); r != nil {
		return r
	}
	return e.fallback
}

func (e *Eventually) Active() *edition.Edition                       { return e.repo().Active() }
func (e *Eventually) LatestDiff() (*representation.Body, error)      { return e.repo().LatestDiff() }
func (e *Eventually) Diff(f, t string) (*representation.Body, error) { return e.repo().Diff(f, t) }
func (e *Eventually) Versions() *edition.VersionList                 { return e.repo().Versions() }
func (e *Eventually) RetainedEdition(id string) (*edition.Edition, error) {
	return e.repo().RetainedEdition(id)
}

// Ready is the store's Repository's once it opened; until then not ready. The
// error itself goes to the log, never to a client.
func (e *Eventually) Ready() (gen.ProbeStatus, bool, string) {
	if r := e.real.Load(); r != nil {
		return r.Ready()
	}
	return gen.ProbeStatus{Serving: e.fallback.Active().ManifestID}, false, *e.why.Load()
}
