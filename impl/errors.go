package impl

import (
	"encoding/json"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"net/http"
	"strconv"
	"sync/atomic"

	"github.com/refdata/refdata/gen"
	"github.com/refdata/refdata/representation"
)

// WriteError writes the spec's error envelope. Errors are rare, so this one body
// is marshaled per request.
func WriteError(w http.ResponseWriter, status int, msg string) {
	b := ErrorJSON(status, msg)
	h := w.Header()
	h.Del("Content-Length")
	h.Del("ETag")
	representation.SetFields(h, representation.ErrorHeader)
	w.WriteHeader(status)
	_, _ = w.Write(b)
}

// ErrorJSON is the error envelope's body, for writers that are not net/http's.
func ErrorJSON(status int, msg string) []byte {
	b, _ := json.Marshal(gen.Error{Status: status, Error: msg})
	return b
}

// requestIDs numbers the requests that get an id, after a random prefix per
// process, so ids from two runs or two replicas do not collide.
var (
	idPrefix   = fmt.Sprintf("%08x", rand.Uint32())
	requestIDs atomic.Uint64
)

// NewRequestID names a request in the log and to its client. Only errors get one,
// so the hot path does not pay for it.
func NewRequestID() string {
	return idPrefix + "-" + strconv.FormatUint(requestIDs.Add(1), 10)
}

// WriteInternal answers a 5xx without the error's text, which can name files:
// the client gets a request id, the log gets the error under it.
func WriteInternal(w http.ResponseWriter, r *http.Request, logger *slog.Logger, status int, what string, err error) {
	id := NewRequestID()
	if logger != nil {
		logger.Error(what, "request_id", id, "method", r.Method, "path", r.URL.Path, "err", err)
	}
	w.Header().Set("X-Request-Id", id)
	WriteError(w, status, fmt.Sprintf("%s (request id %s); it has been logged, retry later", what, id))
}
