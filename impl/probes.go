package impl

import (
	"encoding/json"
	"net/http"

	"github.com/refdata/refdata/catalog"
	"github.com/refdata/refdata/edition"
	"github.com/refdata/refdata/gen"
)

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

// probe is rendered per request: the live state of the replica.
func (s *Server) probe(w http.ResponseWriter, r *http.Request, readiness bool) {
	status := gen.ProbeStatus{Serving: s.Repo.Active().ManifestID}
	ready, why := true, ""
	if rd, ok := s.Repo.(edition.Readiness); ok {
		status, ready, why = rd.Ready()
	}
	w.Header()["Cache-Control"] = hNoStore
	if readiness && !ready {
		s.fail(w, r, catalog.Errorf(catalog.EUNAVAILABLE, "%s", why))
		return
	}
	b, _ := json.Marshal(gen.ProbeBody{Status: http.StatusOK, Data: status})
	w.Header()["Content-Type"] = hJSON
	w.WriteHeader(http.StatusOK)
	if r.Method != http.MethodHead {
		_, _ = w.Write(b)
	}
}
