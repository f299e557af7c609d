package pipeline

import (
	"cmp"

	"github.com/prometheus/client_golang/prometheus"
)

// Metrics are the import pipeline's: the stage it is in and the imports that
// failed, by stage. What is served (the active version, its age, failed
// reloads) is live's (replica.Metrics). A nil *Metrics is valid and records
// nothing, so callers need no checks.
type Metrics struct {
	stage  *prometheus.GaugeVec
	errors *prometheus.CounterVec
}

// NewMetrics registers the pipeline's metrics with reg.
func NewMetrics(reg prometheus.Registerer) *Metrics {
	m := &Metrics{
		stage: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Namespace: "refdata", Name: "pipeline_stage",
			Help: "Current stage of the import pipeline: 1 for the current stage, 0 for the others.",
		}, []string{"stage"}),
		errors: prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: "refdata", Name: "pipeline_errors_total",
			Help: "Imports that failed, by the stage they failed in.",
		}, []string{"stage"}),
	}
	reg.MustRegister(m.stage, m.errors)
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

func (m *Metrics) failed(s Stage) {
	if m == nil {
		return
	}
	m.errors.WithLabelValues(string(cmp.Or(s, Load))).Inc()
}
