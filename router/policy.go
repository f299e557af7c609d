package router

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"runtime/debug"
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/refdata/refdata/catalog"
	"github.com/refdata/refdata/handler"
	"github.com/refdata/refdata/pages"
	"github.com/refdata/refdata/representation"
)

// The policy: what every request meets before any route, and every answer
// after, whichever server read it. The router (New) and the edge (package
// edge) both apply Policy to a Request view of their request, write what it
// stops with Refuse, put EveryAnswer on their answers, record each with
// Record and answer a panic with Recovered, so a rule is written once.

// Request is a request as the policy sees it. Its strings may view a
// server's buffers: a rule keeps none of them.
type Request struct {
	Method string
	// Target is the request target as sent, escaped; Path its path as the
	// router routes it, percent-decoded (TargetPath).
	Target, Path string
	UserAgent    string
	// Framed: the request has a Transfer-Encoding field.
	Framed bool
}

// RequestOf is the policy's view of a net/http request.
func RequestOf(r *http.Request) Request {
	q := Request{Method: r.Method, Target: r.RequestURI, Path: r.URL.Path, Framed: len(r.TransferEncoding) > 0}
	if q.Target == "" { // a request made in a test, not read from a client
		q.Target = r.URL.RequestURI()
	}
	if ua := r.Header["User-Agent"]; len(ua) > 0 {
		q.UserAgent = ua[0]
	}
	return q
}

// TargetPath is a request target's path as the router routes it: without
// the query, the scheme and host of an absolute form, percent-decoded (as
// sent when it does not decode). It allocates only to decode.
func TargetPath(target string) string {
	path := target
	if i := strings.IndexByte(target, '?'); i >= 0 {
		path = target[:i]
	}
	if !strings.HasPrefix(path, "/") {
		if _, rest, ok := strings.Cut(path, "://"); ok {
			if i := strings.IndexByte(rest, '/'); i >= 0 {
				path = rest[i:]
			} else {
				path = "/"
			}
		}
	}
	if strings.IndexByte(path, '%') < 0 {
		return path
	}
	if decoded, err := url.PathUnescape(path); err == nil {
		return decoded
	}
	return path
}

// Stop is a rule's answer to a request it does not let through: status,
// header fields, and the message of the error answer (none: no body).
type Stop struct {
	Status  int
	Fields  []representation.Field
	Message string
}

// Rule is one policy: it lets a request through (false) or stops it.
type Rule struct {
	Name string
	// Routed: the rule applies only to a request for a route (one the
	// router matches), after every rule that is not; a path that names no
	// route is answered 404 or redirected whatever it carries.
	Routed bool
	Check  func(Request) (Stop, bool)
}

// Policy is every request's rules, in the order they apply.
var Policy = []Rule{
	// A request whose body is framed by Transfer-Encoding: 400, then the
	// connection closes (BodyFramingMessage).
	{"framing", false, func(q Request) (Stop, bool) {
		return Stop{http.StatusBadRequest, closeConnection, BodyFramingMessage}, q.Framed
	}},
	// A CORS preflight, on any path: 204 with what it may do.
	{"preflight", false, func(q Request) (Stop, bool) {
		return Stop{Status: http.StatusNoContent, Fields: preflight}, q.Method == http.MethodOptions
	}},
	// A method the API does not have: 405.
	{"method", false, func(q Request) (Stop, bool) {
		return Stop{http.StatusMethodNotAllowed, allow, MethodNotAllowedMessage}, q.Method != http.MethodGet && q.Method != http.MethodHead
	}},
	// A broken percent-escape, which net/http would drop (?language=%zz
	// answering en-US): 400.
	{"escapes", false, func(q Request) (Stop, bool) {
		return Stop{Status: http.StatusBadRequest, Message: BadEscapeMessage}, !EscapesOK(q.Target)
	}},
	// The contract's one credential on /v1: a non-blank User-Agent. The
	// pages, probes and media have none (`security: []`).
	{"user-agent", true, func(q Request) (Stop, bool) {
		return Stop{Status: http.StatusBadRequest, Message: UserAgentMessage}, strings.HasPrefix(q.Path, "/v1/") && !UserAgentOK(q.UserAgent)
	}},
}

// Check applies Policy's rules to q, those for a route (Rule.Routed) when
// routed, else the others: the first rule that stops it gives the answer.
// It allocates nothing.
func Check(q Request, routed bool) (Stop, bool) {
	rules := phases[0]
	if routed {
		rules = phases[1]
	}
	for _, check := range rules {
		if st, stop := check(q); stop {
			return st, true
		}
	}
	return Stop{}, false
}

// phases are Policy's checks before a route is known and once it is, in order.
var phases = func() (p [2][]func(Request) (Stop, bool)) {
	for _, r := range Policy {
		i := 0
		if r.Routed {
			i = 1
		}
		p[i] = append(p[i], r.Check)
	}
	return p
}()

// Refuse writes st, the answer to a request for path a rule stopped, through s.
func Refuse[S representation.Sink](s S, path string, st Stop) {
	representation.SetAll(s, st.Fields)
	if st.Message == "" {
		s.Send(st.Status, nil, nil)
		return
	}
	SendError(s, path, st.Status, st.Message)
}

// SendError writes an error answer to a request for path through s: a page
// on a page path (IsPagePath), else the envelope (handler.SendError).
func SendError[S representation.Sink](s S, path string, status int, msg string) {
	var page func(int, string) []byte
	if IsPagePath(path) {
		page = func(status int, msg string) []byte { return pages.ErrorPage(status, msg, path) }
	}
	handler.SendError(s, status, msg, page)
}

// Header values of the rules' answers, made once.
var (
	allow           = []representation.Field{representation.NewField("Allow", "GET, HEAD, OPTIONS")}
	closeConnection = []representation.Field{representation.NewField("Connection", "close")}
	preflight       = []representation.Field{
		representation.NewField("Access-Control-Allow-Methods", "GET, HEAD, OPTIONS"),
		representation.NewField("Access-Control-Allow-Headers", "If-None-Match, Accept-Encoding, Content-Type"),
		representation.NewField("Access-Control-Max-Age", "86400"),
		allow[0],
	}
)

// UserAgentMessage refuses a /v1 request without a User-Agent.
const UserAgentMessage = "a User-Agent header is required; identify your client as AppName/Version (+URL), e.g. 'MyBot/1.0 (+https://example.com)'"

// EveryAnswer is what every answer carries, whoever writes it (SetEveryAnswer).
// CORS lets browser apps read the API; nosniff keeps a browser from reading
// a body as another type than its Content-Type says (a JSON error echoing a
// query as HTML, a media file as script).
var EveryAnswer = []representation.Field{
	representation.NewField("Access-Control-Allow-Origin", "*"),
	representation.NewField("Access-Control-Expose-Headers", "ETag, X-Data-Version, Content-Language, Content-Location"),
	representation.NewField("X-Content-Type-Options", "nosniff"),
}

// SetEveryAnswer puts EveryAnswer's fields on an answer.
func SetEveryAnswer[S representation.Sink](s S) { representation.SetAll(s, EveryAnswer) }

// Exchange is one answered request as the log and the metrics see it.
type Exchange struct {
	Method, Path, UserAgent string
	// Route labels the answer: its route template, or a label of its own.
	Route   string
	Status  int
	Elapsed time.Duration
	// Memo: the edge answered it from its memo.
	Memo bool
}

// Record logs x and observes its duration under its route and status: 5xx
// but 503 (not ready) at Error, 4xx and 503 at Info, the rest at Debug. obs
// is x's series when the caller keeps it (the edge's memo); nil: m's. It
// allocates nothing when the level is not logged.
func Record(logger *slog.Logger, m *HTTPMetrics, obs prometheus.Observer, x *Exchange) {
	if obs == nil && m != nil {
		obs = m.Observer(x.Route, x.Status)
	}
	if obs != nil {
		obs.Observe(x.Elapsed.Seconds())
	}
	level := slog.LevelDebug
	switch {
	case x.Status >= 500 && x.Status != http.StatusServiceUnavailable:
		level = slog.LevelError
	case x.Status >= 400:
		level = slog.LevelInfo
	}
	ctx := context.Background()
	if !logger.Enabled(ctx, level) {
		return
	}
	attrs := []slog.Attr{
		slog.String("method", x.Method), slog.String("path", x.Path),
		slog.String("route", x.Route), slog.Int("status", x.Status),
		slog.Float64("duration_seconds", x.Elapsed.Seconds()), slog.String("user_agent", x.UserAgent),
	}
	if x.Memo {
		attrs = append(attrs, slog.Bool("memo", true))
	}
	logger.LogAttrs(ctx, level, "request", attrs...)
}

// Recovered is the answer to a panic v while serving method path: the panic
// and its stack logged under a request id; the client gets 500 with the id
// alone (message, and id for X-Request-Id).
func Recovered(logger *slog.Logger, v any, method, path string) (status int, msg, id string) {
	return handler.ClientError(logger, method, path, catalog.Internal("internal error", fmt.Errorf("panic: %v\n%s", v, debug.Stack())))
}

// BodyFailed is the answer to stored bytes that failed their check, as
// Recovered's: the cause logged under a request id.
func BodyFailed(logger *slog.Logger, err error, method, path string) (status int, msg, id string) {
	return handler.ClientError(logger, method, path, handler.StoredBodyFailed(err))
}
