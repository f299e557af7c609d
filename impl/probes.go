package impl

import (
	"encoding/json"
	"net/http"

	"github.com/refdata/refdata/gen"
)

// Readiness is a Repository that can be not ready: one backed by a store, which
// may be unreachable, or shared by replicas that switch versions together. A
// Repository without it is ready whenever it answers (the embedded data).
type Readiness interface {
	// Ready says whether this replica should get traffic, and what it serves;
	// when not, why says so in words for the operator.
	Ready() (status gen.ProbeStatus, ready bool, why string)
}

var (
	hNoStore = []string{"no-store"}
	hJSON    = []string{contentJSON}
)

// GetHealth answers while the process runs: liveness, not readiness.
func (s *Server) GetHealth(w http.ResponseWriter, r *http.Request) {
	s.probe(w, r, false)
}

// GetReadiness answers 200 when this replica should get traffic, else 503 with why.
func (s *Server) GetReadiness(w http.ResponseWriter, r *http.Request) {
	s.probe(w, r, true)
}

// probe is rendered per request: probes are few, and their answer is the live
// state of the replica, which no pre-rendered body could hold.
func (s *Server) probe(w http.ResponseWriter, r *http.Request, readiness bool) {
	status := gen.ProbeStatus{Serving: s.Repo.Active().ManifestID}
	ready, why := true, ""
	if rd, ok := s.Repo.(Readiness); ok {
		status, ready, why = rd.Ready()
	}
	w.Header()["Cache-Control"] = hNoStore
	if readiness && !ready {
		WriteError(w, http.StatusServiceUnavailable, why)
		return
	}
	b, _ := json.Marshal(gen.ProbeBody{Status: http.StatusOK, Data: status})
	w.Header()["Content-Type"] = hJSON
	w.WriteHeader(http.StatusOK)
	if r.Method != http.MethodHead {
		_, _ = w.Write(b)
	}
}
