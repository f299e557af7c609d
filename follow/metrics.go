package follow

import (
	"errors"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/refdata/refdata/pipeline"
)

// Metrics are the series of the syncs this process runs (serve --sync, sync
// --metrics-addr); the store's sync state, whoever ran the sync, is
// StateMetrics'. A nil *Metrics records nothing.
type Metrics struct {
	runs     *prometheus.CounterVec
	requests *prometheus.CounterVec
	bytes    prometheus.Counter
	duration prometheus.Histogram
	media    *prometheus.CounterVec
}

// NewMetrics registers sync's metrics with reg.
func NewMetrics(reg prometheus.Registerer) *Metrics {
	m := &Metrics{
		runs: prometheus.NewCounterVec(prometheus.CounterOpts(opts("sync_runs_total",
			"Syncs by outcome: unchanged, published, already stored, held, rejected, failed.")), []string{"outcome"}),
		requests: prometheus.NewCounterVec(prometheus.CounterOpts(opts("sync_upstream_requests_total",
			"Requests to the upstream (every attempt, retries included) by status; 0 is a transport error.")), []string{"code"}),
		bytes: prometheus.NewCounter(prometheus.CounterOpts(opts("sync_upstream_bytes_total",
			"Body bytes read from the upstream."))),
		duration: prometheus.NewHistogram(prometheus.HistogramOpts{
			Namespace: "refdata", Name: "sync_duration_seconds",
			Help:    "How long one sync took, checks that found nothing new included.",
			Buckets: []float64{0.1, 0.5, 1, 5, 15, 30, 60, 120, 300, 900},
		}),
		media: prometheus.NewCounterVec(prometheus.CounterOpts(opts("sync_media_total",
			"Media URLs met by sync --media: fetched (stored, or already held under the same hash); not mirrored, by why: "+
				"refused (host policy), type, status, unreachable, too big, deadline, store; deferred: not tried, having failed for good before (a backoff); "+
				"dropped: removed from the mirror as no longer served.")), []string{"outcome"}),
	}
	reg.MustRegister(m.runs, m.requests, m.bytes, m.duration, m.media)
	for _, o := range append([]string{"fetched", MediaDeferred, "dropped"}, MediaClasses...) {
		m.media.WithLabelValues(o)
	}
	for _, o := range []string{"unchanged", "published", "already stored", "held", "rejected", "failed"} {
		m.runs.WithLabelValues(o)
	}
	return m
}

// Observe is upstream.Config.Observe: one attempt's status and body bytes.
func (m *Metrics) Observe(status string, n int64) {
	if m == nil {
		return
	}
	m.requests.WithLabelValues(status).Inc()
	m.bytes.Add(float64(n))
}

func (m *Metrics) synced(res *Result, err error) {
	if m == nil {
		return
	}
	m.duration.Observe(res.Duration.Seconds())
	switch {
	case errors.Is(err, pipeline.ErrRejected):
		m.runs.WithLabelValues("rejected").Inc()
	case err != nil:
		m.runs.WithLabelValues("failed").Inc()
	default:
		m.runs.WithLabelValues(res.Outcome).Inc()
	}
}

func (m *Metrics) mediaDone(r *MediaResult) {
	if m == nil || r == nil {
		return
	}
	m.media.WithLabelValues("fetched").Add(float64(r.Fetched))
	m.media.WithLabelValues("dropped").Add(float64(len(r.Dropped)))
	m.media.WithLabelValues(MediaDeferred).Add(float64(len(r.Deferred)))
	for _, s := range r.Skipped {
		m.media.WithLabelValues(s.Class).Inc()
	}
}

// opts names one of refdata's metrics.
func opts(name, help string) prometheus.Opts {
	return prometheus.Opts{Namespace: "refdata", Name: name, Help: help}
}
