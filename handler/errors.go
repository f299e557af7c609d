package handler

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
	id = newRequestID()
	if logger != nil {
		logger.Error("internal error", "request_id", id, "method", method, "path", path, "err", err)
	}
	return status, fmt.Sprintf("%s (request id %s); it has been logged, retry later", catalog.ErrorMessage(err), id), id
}

// SendError answers an error through s: status, the error's header fields
// and body, page's HTML when page is not nil, else the JSON envelope. It is
// the one writer of error answers, whichever server and layer decided them.
func SendError[S representation.Sink](s S, status int, msg string, page func(status int, msg string) []byte) {
	fields := representation.ErrorHeader
	var body []byte
	if page != nil {
		fields, body = PageErrorHeader, page(status, msg)
	} else {
		body = errorJSON(status, msg)
	}
	representation.SetAll(s, fields)
	s.Send(status, nil, body)
}

// PageErrorHeader is what an error answered as an HTML page carries.
var PageErrorHeader = []representation.Field{
	representation.NewField("Content-Type", contentHTML),
	representation.NewField("Cache-Control", "no-store"),
	pageCSP,
	pageReferrer,
	noSniff,
}

// errorJSON is the error envelope's body.
func errorJSON(status int, msg string) []byte {
	b, _ := json.Marshal(gen.Error{Status: status, Error: msg})
	return b
}

// requestIDs numbers the requests that get an id, after a random prefix per
// process, so ids of two replicas do not collide.
var (
	idPrefix   = fmt.Sprintf("%08x", rand.Uint32())
	requestIDs atomic.Uint64
)

// newRequestID names a request in the log and to its client (errors only).
func newRequestID() string {
	return idPrefix + "-" + strconv.FormatUint(requestIDs.Add(1), 10)
}
