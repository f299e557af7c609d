package replica

import (
	"sync"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/refdata/refdata/edition"
)

// RegisterReplicaMetrics exposes what /readyz says, for alerts, computed at
// scrape time from repo.Ready.
func RegisterReplicaMetrics(reg prometheus.Registerer, repo edition.Readiness) {
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
	var up func() bool
	switch r := repo.(type) {
	case *Repository:
		up = r.storeUp
	case *Pending:
		if r.store {
			up = r.storeUp
		}
	}
	if up != nil {
		gauge("store_up", "1 when the last read of the store's active pointer succeeded.", func() float64 { return b2f(up()) })
	}
}

func b2f(b bool) float64 {
	if b {
		return 1
	}
	return 0
}

// Metrics are what a replica serves, for freshness alerts. A nil *Metrics
// records nothing.
type Metrics struct {
	published   prometheus.Gauge
	lastSuccess prometheus.Gauge
	info        *prometheus.GaugeVec
	reloadErrs  prometheus.Counter

	publishedAt atomic.Int64 // unix nanoseconds; 0 when unknown
	mu          sync.Mutex   // info series change together
}

// NewMetrics registers the served data's metrics with reg; start is the process
// start, for uptime.
func NewMetrics(reg prometheus.Registerer, start time.Time) *Metrics {
	m := &Metrics{
		published: prometheus.NewGauge(prometheus.GaugeOpts(opts("data_published_timestamp_seconds",
			"When the active version was published (Unix time)."))),
		lastSuccess: prometheus.NewGauge(prometheus.GaugeOpts(opts("last_success_timestamp_seconds",
			"When the last check of the store's active pointer succeeded (Unix time)."))),
		info: prometheus.NewGaugeVec(prometheus.GaugeOpts(opts("active_version_info",
			"The active game version; always 1, the labels say which.")), []string{"manifest_id", "version", "branch"}),
		reloadErrs: prometheus.NewCounter(prometheus.CounterOpts(opts("reload_errors_total",
			"Versions the store named active that could not be loaded (the previous one kept serving)."))),
	}
	age := prometheus.NewGaugeFunc(prometheus.GaugeOpts(opts("data_age_seconds",
		"Seconds since the active version was published.")), func() float64 {
		ns := m.publishedAt.Load()
		if ns == 0 {
			return 0
		}
		return time.Since(time.Unix(0, ns)).Seconds()
	})
	uptime := prometheus.NewGaugeFunc(prometheus.GaugeOpts(opts("uptime_seconds",
		"Seconds since the process started.")), func() float64 { return time.Since(start).Seconds() })
	reg.MustRegister(m.published, m.lastSuccess, m.info, m.reloadErrs, age, uptime)
	return m
}

// Active records the version being served and when it was published (zero
// when unknown: the embedded data).
func (m *Metrics) Active(ed *edition.Edition, publishedAt time.Time) {
	if m == nil || ed == nil || ed.IsNone() {
		return
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	m.info.Reset()
	m.info.WithLabelValues(ed.ManifestID, ed.Version.Version, ed.Version.Branch).Set(1)
	if !publishedAt.IsZero() {
		m.publishedAt.Store(publishedAt.UnixNano())
		m.published.Set(float64(publishedAt.UnixNano()) / 1e9)
	}
}

func (m *Metrics) checked(t time.Time) {
	if m != nil {
		m.lastSuccess.Set(float64(t.UnixNano()) / 1e9)
	}
}

func (m *Metrics) reloadFailed() {
	if m != nil {
		m.reloadErrs.Inc()
	}
}

// opts names one of refdata's metrics.
func opts(name, help string) prometheus.Opts {
	return prometheus.Opts{Namespace: "refdata", Name: name, Help: help}
}
