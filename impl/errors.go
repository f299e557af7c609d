package impl

import (
	"encoding/json"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"net/http"
	"strconv"
	"sync/atomic"

	"github.com/refdata/refdata/catalog"
	"github.com/refdata/refdata/gen"
	"github.com/refdata/refdata/representation"
)

// statuses maps the domain's error codes to HTTP statuses: the one place
// where an error a handler meets becomes an answer.
var statuses = map[string]int{
	catalog.EINVALID:     http.StatusBadRequest,
	catalog.ENOTFOUND:    http.StatusNotFound,
	catalog.EUNAVAILABLE: http.StatusServiceUnavailable,
	catalog.ELIMIT:       http.StatusTooManyRequests,
	catalog.EENCODING:    http.StatusNotAcceptable,
	catalog.EINTERNAL:    http.StatusInternalServerError,
}

// ClientError is what a client is told of err: its code's status and
// message. An internal error (or an unknown code, or nil) is logged under a
// request id, and the client gets only the id (in the message, and id for
// X-Request-Id).
func ClientError(logger *slog.Logger, method, path string, err error) (status int, message, id string) {
	code := catalog.ErrorCode(err)
	status, ok := statuses[code]
	if !ok {
		code, status = catalog.EINTERNAL, http.StatusInternalServerError
	}
	if code != catalog.EINTERNAL {
		return status, catalog.ErrorMessage(err), ""
	}
	id = NewRequestID()
	if logger != nil {
		logger.Error("internal error", "request_id", id, "method", method, "path", path, "err", err)
	}
	return status, fmt.Sprintf("%s (request id %s); it has been logged, retry later", catalog.ErrorMessage(err), id), id
}

// WriteError writes the error envelope.
func WriteError(w http.ResponseWriter, status int, msg string) {
	h := w.Header()
	h.Del("Content-Length")
	h.Del("ETag")
	representation.SetFields(h, representation.ErrorHeader)
	w.WriteHeader(status)
	_, _ = w.Write(ErrorJSON(status, msg))
}

// PageErrorHeader is what an error answered as an HTML page carries.
var PageErrorHeader = []representation.Field{
	representation.NewField("Content-Type", contentHTML),
	representation.NewField("Cache-Control", "no-store"),
	pageCSP,
	noSniff,
}

// WritePageError writes the error page page renders; nothing for a HEAD.
func WritePageError(w http.ResponseWriter, r *http.Request, status int, page func() []byte) {
	h := w.Header()
	h.Del("Content-Length")
	h.Del("ETag")
	representation.SetFields(h, PageErrorHeader)
	w.WriteHeader(status)
	if r.Method != http.MethodHead {
		_, _ = w.Write(page())
	}
}

// ErrorJSON is the error envelope's body, for writers that are not net/http's.
func ErrorJSON(status int, msg string) []byte {
	b, _ := json.Marshal(gen.Error{Status: status, Error: msg})
	return b
}

// requestIDs numbers the requests that get an id, after a random prefix per
// process, so ids of two replicas do not collide.
var (
	idPrefix   = fmt.Sprintf("%08x", rand.Uint32())
	requestIDs atomic.Uint64
)

// NewRequestID names a request in the log and to its client (errors only).
func NewRequestID() string {
	return idPrefix + "-" + strconv.FormatUint(requestIDs.Add(1), 10)
}
