package router

import (
	"github.com/prometheus/client_golang/prometheus"

	"github.com/refdata/refdata/edition"
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

// Observer is the duration series of one route and status.
func (m *HTTPMetrics) Observer(route string, status int) prometheus.Observer {
	return m.duration.WithLabelValues(route, statusLabel(status))
}

// RegisterHeldMetric exposes how many requests are held for a change
// (handler.Server.Held): waits and streams, which MaxWaiters bounds.
func RegisterHeldMetric(reg prometheus.Registerer, held func() int) {
	reg.MustRegister(prometheus.NewGaugeFunc(prometheus.GaugeOpts{
		Namespace: "refdata",
		Name:      "held_requests",
		Help:      "Requests held for a change now: /v1/version?wait= and /v1/version/stream.",
	}, func() float64 { return float64(held()) }))
}

// RegisterEditionMetrics exposes the size of the active edition's bodies by
// encoding and the fields the contract does not describe yet.
func RegisterEditionMetrics(reg prometheus.Registerer, active func() *edition.Edition) {
	reg.MustRegister(unknownFields{active})
	for i, enc := range []string{"identity", "gzip", "br"} {
		reg.MustRegister(prometheus.NewGaugeFunc(prometheus.GaugeOpts{
			Namespace:   "refdata",
			Name:        "rendered_bytes",
			Help:        "Bytes of the active version's pre-rendered response bodies, by content coding.",
			ConstLabels: prometheus.Labels{"encoding": enc},
		}, func() float64 {
			sizes := [3]int{}
			sizes[0], sizes[1], sizes[2] = active().Sizes()
			return float64(sizes[i])
		}))
	}
}

// unknownFields reports the active edition's fields openapi.yaml does not
// describe, read at each scrape.
type unknownFields struct{ active func() *edition.Edition }

var unknownDesc = prometheus.NewDesc("refdata_unknown_fields",
	"Items of the active version carrying a field the contract does not describe (served as the upstream sent it), by catalog and field.",
	[]string{"category", "field"}, nil)

func (u unknownFields) Describe(ch chan<- *prometheus.Desc) { ch <- unknownDesc }

func (u unknownFields) Collect(ch chan<- prometheus.Metric) {
	for _, f := range u.active().Unknown {
		ch <- prometheus.MustNewConstMetric(unknownDesc, prometheus.GaugeValue, float64(f.Items), f.Category.Name(), f.Field)
	}
}
