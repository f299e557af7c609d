package api

import (
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// HTTPMetrics are the request metrics, labelled by route template (never the raw
// path, so cardinality stays bounded) and status code.
type HTTPMetrics struct {
	duration *prometheus.HistogramVec
}

// NewHTTPMetrics registers the request metrics with reg.
func NewHTTPMetrics(reg prometheus.Registerer) *HTTPMetrics {
	m := &HTTPMetrics{
		duration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Namespace: "refdata",
			Name:      "http_request_duration_seconds",
			Help:      "Time to answer an HTTP request, by route template and status code.",
			Buckets:   []float64{0.00005, 0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.1, 0.5, 2},
		}, []string{"route", "code"}),
	}
	reg.MustRegister(m.duration)
	return m
}

func (m *HTTPMetrics) observe(route string, status int, d time.Duration) {
	m.duration.WithLabelValues(route, statusLabel(status)).Observe(d.Seconds())
}
