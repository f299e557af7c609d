package handler

import (
	"encoding/json"
	"net/http"

	"github.com/refdata/refdata/catalog"
	"github.com/refdata/refdata/edition"
	"github.com/refdata/refdata/gen"
	"github.com/refdata/refdata/representation"
)

// probeHeader is what a probe's answer carries: rendered per request, never kept.
var probeHeader = []representation.Field{
	representation.NewField("Content-Type", contentJSON),
	representation.NewField("Cache-Control", "no-store"),
}

// GetHealth answers while the process runs: liveness, not readiness.
func (s *Server) GetHealth(w http.ResponseWriter, r *http.Request) {
	s.write(w, r, s.probe(false))
}

// GetReadiness answers 200 when this replica should get traffic, else 503 with why.
func (s *Server) GetReadiness(w http.ResponseWriter, r *http.Request) {
	s.write(w, r, s.probe(true))
}

// probe is rendered per request: the live state of the replica.
func (s *Server) probe(readiness bool) Answer {
	status := gen.ProbeStatus{Serving: s.Repo.Active().ManifestID}
	ready, why := true, ""
	if rd, ok := s.Repo.(edition.Readiness); ok {
		status, ready, why = rd.Ready()
	}
	if readiness && !ready {
		return failed(catalog.Errorf(catalog.EUNAVAILABLE, "%s", why))
	}
	b, _ := json.Marshal(gen.ProbeBody{Status: http.StatusOK, Data: status})
	return Answer{Status: http.StatusOK, Fields: probeHeader, Raw: b}
}
