package live

import (
	"github.com/prometheus/client_golang/prometheus"

	"github.com/refdata/refdata/impl"
)

// RegisterReplicaMetrics exposes what /readyz says, for alerts: whether the
// replica is ready, whether its store answered, and how far behind the store's
// active version it is. Computed at scrape time from repo.Ready.
func RegisterReplicaMetrics(reg prometheus.Registerer, repo impl.Readiness) {
	gauge := func(name, help string, f func() float64) {
		reg.MustRegister(prometheus.NewGaugeFunc(prometheus.GaugeOpts{Namespace: "refdata", Name: name, Help: help}, f))
	}
	gauge("replica_ready", "1 when /readyz answers 200: a version loaded, the store reachable, serving the store's active version.", func() float64 {
		_, ok, _ := repo.Ready()
		return b2f(ok)
	})
	gauge("replica_behind_seconds", "Seconds this replica has served another version than the store's active one; 0 when current.", func() float64 {
		st, _, _ := repo.Ready()
		if st.SecondsBehind == nil {
			return 0
		}
		return float64(*st.SecondsBehind)
	})
	gauge("replica_serving_active", "1 when the version served is the store's active version (also 1 without a shared store).", func() float64 {
		st, _, _ := repo.Ready()
		return b2f(st.Active == nil || *st.Active == st.Serving)
	})
	if r, ok := repo.(*Repository); ok {
		gauge("store_up", "1 when the last read of the store's active pointer succeeded.", func() float64 {
			sn := r.seen.Load()
			return b2f(sn == nil || sn.err == nil || isNotFound(sn.err))
		})
	}
}

func b2f(b bool) float64 {
	if b {
		return 1
	}
	return 0
}
