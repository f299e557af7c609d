package api

import (
	"cmp"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"runtime/debug"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/go-chi/chi/v5"

	"github.com/refdata/refdata/catalog"
	"github.com/refdata/refdata/impl"
	"github.com/refdata/refdata/representation"
)

// recoverer turns a panic into a 500; the server lives on.
func recoverer(logger *slog.Logger) func(http.Handler) http.Handler {
	return func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			defer func() {
				if v := recover(); v != nil {
					if err, ok := v.(error); ok && errors.Is(err, http.ErrAbortHandler) {
						panic(v)
					}
					status, msg, id := impl.ClientError(logger, r.Method, r.URL.Path, catalog.Internal("internal error", fmt.Errorf("panic: %v\n%s", v, debug.Stack())))
					w.Header().Set("X-Request-Id", id)
					writeError(w, r, status, msg)
				}
			}()
			next.ServeHTTP(w, r)
		})
	}
}

// statusWriter remembers the status; pooled.
type statusWriter struct {
	http.ResponseWriter
	status int
	route  string // set by the handler (impl.Relabeler); else the route template
}

// Relabel records the answer under route instead of its route template.
func (s *statusWriter) Relabel(route string) { s.route = route }

var _ impl.Relabeler = (*statusWriter)(nil)

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

// observe records each request's duration by route template and status, and
// logs it: 5xx but 503 (not ready) at Error, 4xx and 503 at Info, the rest at
// Debug.
func observe(logger *slog.Logger, m *HTTPMetrics) func(http.Handler) http.Handler {
	return func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			start := time.Now()
			sw := writers.Get().(*statusWriter)
			sw.ResponseWriter, sw.status, sw.route = w, 0, ""
			next.ServeHTTP(sw, r)
			status, route := sw.status, sw.route
			if status == 0 {
				status = http.StatusOK
			}
			sw.ResponseWriter = nil
			writers.Put(sw)

			if rc := chi.RouteContext(r.Context()); route == "" && rc != nil && rc.RoutePattern() != "" {
				route = rc.RoutePattern()
			}
			route = cmp.Or(route, "unmatched")
			elapsed := time.Since(start)
			if m != nil {
				m.Observer(route, status).Observe(elapsed.Seconds())
			}
			level := slog.LevelDebug
			switch {
			case status >= 500 && status != http.StatusServiceUnavailable:
				level = slog.LevelError
			case status >= 400:
				level = slog.LevelInfo
			}
			if logger.Enabled(r.Context(), level) {
				logger.LogAttrs(r.Context(), level, "request",
					slog.String("method", r.Method), slog.String("path", r.URL.Path),
					slog.String("route", route), slog.Int("status", status),
					slog.Float64("duration_seconds", elapsed.Seconds()), slog.String("user_agent", r.UserAgent()))
			}
		})
	}
}

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

// EveryAnswer is what every answer carries, whoever writes it: the cors
// middleware adds it first thing, the edge to the answers it gives itself. CORS
// lets browser apps read the API; nosniff keeps a browser from reading a body
// as another type than its Content-Type says (a JSON error echoing a query as
// HTML, a media file as script).
var EveryAnswer = []representation.Field{
	representation.NewField("Access-Control-Allow-Origin", "*"),
	representation.NewField("Access-Control-Expose-Headers", "ETag, X-Data-Version, Content-Language, Content-Location"),
	representation.NewField("X-Content-Type-Options", "nosniff"),
}

// EdgeMayAnswer is the one rule for the requests a server in front of the router
// (package edge) answers itself, from the representation.Response a handler
// described for the same request target (impl.DescribeKey) while the edition it
// came from is still active. Such an answer passes none of New's middleware,
// so the edge stands in for each:
//   - cors: the edge adds EveryAnswer; a preflight is an OPTIONS, never answered here.
//   - wellFormed: the edge applies the same method and escape rules first.
//   - recoverer: the edge recovers from its own panics, in the same envelope.
//   - observe: the edge records the answer's duration under the Response's
//     route label and status, and logs it at Debug (marked memo).
//   - GetHead: a HEAD gets the GET's headers and no body (fasthttp's HEAD).
//   - requireUserAgent: this rule asks for the same User-Agent.
//   - needsVersion: the memo holds answers of an edition a handler described,
//     never of edition.None, whose requests stop before any handler.
//
// The rule: GET or HEAD, a User-Agent the router would take, and a target whose
// query is empty or the language alone (other queries are answered, by the
// router, but their variety is endless: unknown parameters are ignored), not
// a bulk file (its handler answers 406 to some Accept-Encoding values, which
// the memo does not; a download of megabytes gains nothing from it). It
// allocates nothing. Middleware added to New must be added to the list above,
// with what stands in for it, or make this rule refuse what it must see.
func EdgeMayAnswer(method, target, userAgent string) bool {
	if method != http.MethodGet && method != http.MethodHead || !UserAgentOK(userAgent) {
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
