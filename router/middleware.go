package router

import (
	"cmp"
	"errors"
	"log/slog"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/go-chi/chi/v5"

	"github.com/refdata/refdata/handler"
	"github.com/refdata/refdata/representation"
)

// policy is the router's application of the policy (policy.go): EveryAnswer
// on every answer, Policy's rules before any route, a panic answered 500
// (Recovered), and each answer recorded (Record) under its route template or
// the label its handler gave (handler.Relabeler).
func policy(logger *slog.Logger, m *HTTPMetrics) func(http.Handler) http.Handler {
	return func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			start := time.Now()
			sw := writers.Get().(*statusWriter)
			sw.ResponseWriter, sw.status, sw.route = w, 0, ""
			sink := representation.HTTPSink{W: sw, Req: r}
			SetEveryAnswer(sink)
			if st, stop := Check(RequestOf(r), false); stop {
				Refuse(sink, r.URL.Path, st)
			} else {
				serveRecovering(sink, next, logger)
			}
			status, route := cmp.Or(sw.status, http.StatusOK), sw.route
			sw.ResponseWriter = nil
			writers.Put(sw)
			if rc := chi.RouteContext(r.Context()); route == "" && rc != nil && rc.RoutePattern() != "" {
				route = rc.RoutePattern()
			}
			Record(logger, m, nil, &Exchange{
				Method: r.Method, Path: r.URL.Path, UserAgent: r.UserAgent(),
				Route: cmp.Or(route, "unmatched"), Status: status, Elapsed: time.Since(start),
			})
		})
	}
}

// onRoute applies the policy's rules for a request the router matched.
func onRoute(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if st, stop := Check(RequestOf(r), true); stop {
			Refuse(representation.HTTPSink{W: w, Req: r}, r.URL.Path, st)
			return
		}
		next.ServeHTTP(w, r)
	})
}

// serveRecovering serves the request on s, answering a panic with Recovered's
// 500; the server lives on.
func serveRecovering(s representation.HTTPSink, next http.Handler, logger *slog.Logger) {
	defer func() {
		if v := recover(); v != nil {
			if err, ok := v.(error); ok && errors.Is(err, http.ErrAbortHandler) {
				panic(v)
			}
			status, msg, id := Recovered(logger, v, s.Req.Method, s.Req.URL.Path)
			s.W.Header().Set("X-Request-Id", id)
			SendError(s, s.Req.URL.Path, status, msg)
		}
	}()
	next.ServeHTTP(s.W, s.Req)
}

// statusWriter remembers the status; pooled.
type statusWriter struct {
	http.ResponseWriter
	status int
	route  string // set by the handler (handler.Relabeler); else the route template
}

// Relabel records the answer under route instead of its route template.
func (s *statusWriter) Relabel(route string) { s.route = route }

var _ handler.Relabeler = (*statusWriter)(nil)

func (s *statusWriter) WriteHeader(code int) {
	if s.status == 0 {
		s.status = code
	}
	s.ResponseWriter.WriteHeader(code)
}

func (s *statusWriter) Write(b []byte) (int, error) {
	if s.status == 0 {
		s.status = http.StatusOK
	}
	return s.ResponseWriter.Write(b)
}

// Unwrap lets http.ResponseController reach the connection.
func (s *statusWriter) Unwrap() http.ResponseWriter { return s.ResponseWriter }

var writers = sync.Pool{New: func() any { return new(statusWriter) }}

var statusText = func() (t [600]string) {
	for i := range t {
		t[i] = strconv.Itoa(i)
	}
	return t
}()

func statusLabel(code int) string {
	if code >= 0 && code < len(statusText) {
		return statusText[code]
	}
	return strconv.Itoa(code)
}

// EdgeMayAnswer is the one rule for the requests a server in front of the
// router (package edge) answers itself, from the representation.Response a
// handler described for the same request target (handler.DescribeKey) while the
// edition it came from is still active. Such an answer passes through none of
// New's middleware, so the edge does what each does:
//   - policy: the edge applies the same Policy (Check) before its memo, the
//     rules for a route once its memo has the target (only a route's answers
//     are kept), writes what they stop with Refuse, puts EveryAnswer on its
//     answers, records each with Record, and answers a panic with Recovered.
//   - GetHead: a HEAD gets the GET's headers and no body (fasthttp's HEAD).
//   - onRoute: the rules for a route, as above.
//   - needsVersion: the memo holds answers of an edition a handler described,
//     never of edition.None, whose requests stop before any handler.
//
// The rule: GET or HEAD, and a target whose query is empty or the language
// alone (other queries are answered, by the router, but their variety is
// endless: unknown parameters are ignored), not a bulk file (its handler
// answers 406 to some Accept-Encoding values, which the memo does not; a
// download of megabytes gains nothing from it). It allocates nothing.
// Middleware added to New must be added to the list above, with what the edge
// does for it, or make this rule refuse what it must see.
func EdgeMayAnswer(method, target string) bool {
	if method != http.MethodGet && method != http.MethodHead {
		return false
	}
	path, query, ok := strings.Cut(target, "?")
	if strings.HasPrefix(path, "/v1/versions/") && strings.HasSuffix(path, "/bulk") {
		return false
	}
	return !ok || strings.HasPrefix(query, "language=") && !strings.Contains(query, "&")
}

// MayTakeLong is the rule for the requests whose answer may be long in coming:
// a wait for the next version (/v1/version with a query) and a recolored logo
// image. net/http ends a request's context when its client leaves; a server in
// front of the router that does not (package edge) must for these, so their
// work stops and their slots free. Their answers are written whole, never
// streamed. It allocates nothing.
func MayTakeLong(target string) bool {
	path, query, _ := strings.Cut(target, "?")
	return path == "/v1/version" && query != "" ||
		strings.HasPrefix(path, "/v1/premier/logos/") && strings.HasSuffix(path, "/image")
}
