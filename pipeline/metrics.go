package pipeline

import (
	"sync"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/refdata/refdata/catalog"
)

// Metrics are the pipeline's and the served data's gauges. A nil *Metrics is
// valid and records nothing, so callers need no checks.
type Metrics struct {
	stage       *prometheus.GaugeVec
	errors      *prometheus.CounterVec
	published   prometheus.Gauge
	lastSuccess prometheus.Gauge
	info        *prometheus.GaugeVec

	publishedAt atomic.Int64 // unix nanoseconds; 0 when unknown
	mu          sync.Mutex   // info series change together
}

// NewMetrics registers the metrics with reg; start is the process start, for uptime.
func NewMetrics(reg prometheus.Registerer, start time.Time) *Metrics {
	m := &Metrics{
		stage: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Namespace: "refdata", Name: "pipeline_stage",
			Help: "Current stage of the import pipeline: 1 for the current stage, 0 for the others.",
		}, []string{"stage"}),
		errors: prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: "refdata", Name: "pipeline_errors_total",
			Help: "Imports or reloads that failed, by the stage they failed in.",
		}, []string{"stage"}),
		published: prometheus.NewGauge(prometheus.GaugeOpts{
			Namespace: "refdata", Name: "data_published_timestamp_seconds",
			Help: "When the active version was published (Unix time).",
		}),
		lastSuccess: prometheus.NewGauge(prometheus.GaugeOpts{
			Namespace: "refdata", Name: "last_success_timestamp_seconds",
			Help: "When the last import or check of the active pointer succeeded (Unix time).",
		}),
		info: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Namespace: "refdata", Name: "active_version_info",
			Help: "The active game version; always 1, the labels say which.",
		}, []string{"manifest_id", "version", "branch"}),
	}
	age := prometheus.NewGaugeFunc(prometheus.GaugeOpts{
		Namespace: "refdata", Name: "data_age_seconds",
		Help: "Seconds since the active version was published.",
	}, func() float64 {
		ns := m.publishedAt.Load()
		if ns == 0 {
			return 0
		}
		return time.Since(time.Unix(0, ns)).Seconds()
	})
	uptime := prometheus.NewGaugeFunc(prometheus.GaugeOpts{
		Namespace: "refdata", Name: "uptime_seconds",
		Help: "Seconds since the process started.",
	}, func() float64 { return time.Since(start).Seconds() })
	reg.MustRegister(m.stage, m.errors, m.published, m.lastSuccess, m.info, age, uptime)
	for _, s := range Stages {
		m.errors.WithLabelValues(string(s))
	}
	m.setStage(Idle)
	return m
}

func (m *Metrics) setStage(cur Stage) {
	if m == nil {
		return
	}
	for _, s := range Stages {
		v := 0.0
		if s == cur {
			v = 1
		}
		m.stage.WithLabelValues(string(s)).Set(v)
	}
}

// Failed counts an error in stage s (a serve-side reload failure counts as load).
func (m *Metrics) Failed(s Stage) { m.failed(s) }

func (m *Metrics) failed(s Stage) {
	if m == nil {
		return
	}
	if s == "" {
		s = Load
	}
	m.errors.WithLabelValues(string(s)).Inc()
}

// Succeeded records a successful import or check of the active pointer.
func (m *Metrics) Succeeded(t time.Time) { m.succeeded(t) }

func (m *Metrics) succeeded(t time.Time) {
	if m == nil {
		return
	}
	m.lastSuccess.Set(float64(t.UnixNano()) / 1e9)
}

// Active records the version being served and when it was published.
func (m *Metrics) Active(ed *catalog.Edition, publishedAt time.Time) {
	if m == nil || ed == nil {
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
