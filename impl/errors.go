package impl

import (
	"encoding/json"
	"net/http"

	"github.com/refdata/refdata/gen"
)

// WriteError writes the spec's error envelope. Errors are rare, so this one body
// is marshaled per request.
func WriteError(w http.ResponseWriter, status int, msg string) {
	b := ErrorJSON(status, msg)
	h := w.Header()
	h.Set("Content-Type", "application/json")
	h.Del("Content-Length")
	h.Del("ETag")
	h.Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	_, _ = w.Write(b)
}

// ErrorJSON is the error envelope's body, for writers that are not net/http's.
func ErrorJSON(status int, msg string) []byte {
	b, _ := json.Marshal(gen.Error{Status: status, Error: msg})
	return b
}
