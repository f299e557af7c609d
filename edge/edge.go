// Package edge owns the listening socket: HTTP/1.1 with fasthttp (net/http
// cost about twice nginx's CPU per answer), and a memo of the request targets
// the router (package api) has answered from the active edition's bodies, so
// the next request for one is answered from memory without routing or
// handler. Everything else — errors, diffs, metrics, /v1/versions, pages,
// preflights — takes the router, the one place the API's behaviour is
// decided; api.EdgeMayAnswer says which requests the memo may answer.
package edge

import (
	"bytes"
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"runtime/debug"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"unsafe"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/valyala/fasthttp"
	"github.com/valyala/fasthttp/fasthttpadaptor"

	"github.com/refdata/refdata/api"
	"github.com/refdata/refdata/edition"
	"github.com/refdata/refdata/impl"
	"github.com/refdata/refdata/representation"
)

// Config wires a Server.
type Config struct {
	// Router answers every request the memo cannot: api.New's handler.
	Router http.Handler
	// Active returns the edition being served; the memo belongs to one edition
	// and is dropped when another becomes active (at the next request, or at
	// once by ActiveChanged).
	Active func() *edition.Edition
	// Metrics records the requests the memo answers (the router records its own);
	// nil records nothing.
	Metrics *api.HTTPMetrics
	Logger  *slog.Logger
	// MemoLimit caps the memo's entries per edition; 0 means DefaultMemoLimit.
	MemoLimit int
	// SendfileMin is the smallest memo answer sent with sendfile from the
	// memo's spill file (spill.go); 0 means DefaultSendfileMin.
	SendfileMin int
	// DrainGrace is how long a keep-alive connection that looks idle when
	// shutdown begins still reads; 0 means DefaultDrainGrace.
	DrainGrace time.Duration
	// ReadTimeout bounds the wait for a new connection's first byte, and
	// reading any request from its first byte; 0 means DefaultReadTimeout.
	// (Between requests a keep-alive connection may stay idle for 120 s.)
	ReadTimeout time.Duration
	// Hold, when set, holds a request for /v1/version?wait= on its
	// connection's goroutine and returns its answer (impl.Server.HoldForChange),
	// rather than the router, whose adaptor runs every request on a goroutine
	// of its own: one goroutine per waiting client, not two.
	Hold func(ctx context.Context, wait string, acceptEncoding, ifNoneMatch []string) (representation.Response, bool)
}

// DefaultReadTimeout: how long a client has to send a request's head.
const DefaultReadTimeout = 10 * time.Second

// DefaultMemoLimit holds every target of a version as large as the newest sample:
// 2,530 lists and items, 48,070 targets with the 19 ways of naming a language (none,
// or one of 18), at roughly 250 bytes each. Targets beyond it are still answered,
// by the router.
const DefaultMemoLimit = 1 << 16

// Request limits: the API takes no request bodies, and 16 KiB of headers is what
// net/http allowed before.
const (
	maxHeaderBytes = 16 << 10
	maxBodyBytes   = 64 << 10
	// writeBuffer holds a whole response written from memory, headers
	// included, so it leaves in one write: the router's answers, and the memo's
	// below Config.SendfileMin (bigger ones leave by sendfile, spill.go). A
	// connection holds it only while it answers (ReduceMemoryUsage, New).
	writeBuffer = 256 << 10
)

// Server is the HTTP server.
type Server struct {
	cfg    Config
	router fasthttp.RequestHandler
	memo   atomic.Pointer[memo]
	http   *fasthttp.Server
	limit  int
	// sendfileMin is Config.SendfileMin.
	sendfileMin int
	logger      *slog.Logger
	// draining is set by Shutdown.
	draining atomic.Bool
	grace    time.Duration
	conns    sync.Map // the open connections (drainListener)
}

// New builds a Server; Serve starts it.
func New(cfg Config) *Server {
	s := &Server{cfg: cfg, router: fasthttpadaptor.NewFastHTTPHandler(detached(cfg.Router)), limit: cfg.MemoLimit, logger: cfg.Logger, grace: cfg.DrainGrace}
	if s.limit <= 0 {
		s.limit = DefaultMemoLimit
	}
	s.sendfileMin = cmp.Or(cfg.SendfileMin, DefaultSendfileMin)
	if s.grace <= 0 {
		s.grace = DefaultDrainGrace
	}
	if s.logger == nil {
		s.logger = slog.New(slog.DiscardHandler)
	}
	s.memo.Store(&memo{})
	s.http = &fasthttp.Server{
		Handler:               s.handle,
		ErrorHandler:          s.badRequest,
		Logger:                logAdapter{s.logger},
		ReadTimeout:           cmp.Or(cfg.ReadTimeout, DefaultReadTimeout),
		WriteTimeout:          60 * time.Second,
		IdleTimeout:           120 * time.Second,
		ReadBufferSize:        maxHeaderBytes,
		WriteBufferSize:       writeBuffer,
		MaxRequestBodySize:    maxBodyBytes,
		NoDefaultServerHeader: true,
		NoDefaultContentType:  true,
		CloseOnShutdown:       true,
		// A connection between requests keeps no buffer: its read and write
		// buffers go back to fasthttp's pools after each answer. Kept, they
		// are some 85 KiB of heap per idle keep-alive connection (a client's
		// pool of them, or a hostile one's thousands).
		ReduceMemoryUsage: true,
	}
	return s
}

// Serve answers connections from ln until Shutdown.
func (s *Server) Serve(ln net.Listener) error {
	return s.http.Serve(drainListener{ln, &s.draining, s.grace, &s.conns})
}

// Shutdown stops accepting, answers every request already received, and returns
// when they are answered or ctx ends. Each connection's last answer carries
// Connection: close (fasthttp's CloseOnShutdown).
func (s *Server) Shutdown(ctx context.Context) error {
	s.draining.Store(true)
	return s.http.ShutdownWithContext(ctx)
}

// ActiveChanged drops the memo; a repository calls it once another edition is
// served (replica.Repository.OnSwap), so the memo does not keep the previous
// edition alive until the next request.
func (s *Server) ActiveChanged() { s.memo.Store(&memo{}) }

// DefaultDrainGrace is how long a keep-alive connection that looks idle at
// shutdown still reads: a request the client has sent may be in the socket's
// buffer, unread. It is answered (with Connection: close) rather than dropped.
const DefaultDrainGrace = time.Second

// drainListener hands out connections that, while the server shuts down, turn
// fasthttp's close of an idle connection into a short read deadline. fasthttp
// closes every connection that is between requests at once, including those
// whose next request has arrived but not been read yet: those clients got no
// answer at all.
type drainListener struct {
	net.Listener
	draining *atomic.Bool
	grace    time.Duration
	conns    *sync.Map // *drainConn → struct{}: the open connections
}

func (l drainListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	dc := &drainConn{Conn: c, draining: l.draining, grace: l.grace, conns: l.conns}
	l.conns.Store(dc, struct{}{})
	return dc, nil
}

type drainConn struct {
	net.Conn
	draining *atomic.Bool
	grace    time.Duration
	conns    *sync.Map
	reading  atomic.Int32 // Read calls in progress: the server waits for a request
	// unanswered: a Read returned bytes and no Write has followed yet. It is set
	// before the bytes reach fasthttp, so there is no moment between a request's
	// arrival and fasthttp marking the connection active in which the
	// connection looks idle to Close.
	unanswered atomic.Bool
	// spoke: a Read has returned bytes; a connection that never sent one gets
	// no error response (badRequest). Only the connection's own goroutine reads
	// and writes it.
	spoke bool
	// more: the next Write is an answer's head, its body follows by sendfile
	// (spill.go). Only the connection's own goroutine reads and writes it.
	more   bool
	graced atomic.Bool
	once   sync.Once
}

func (c *drainConn) Read(b []byte) (int, error) {
	c.reading.Add(1)
	n, err := c.Conn.Read(b)
	if n > 0 {
		c.unanswered.Store(true)
		c.spoke = true
	}
	c.reading.Add(-1)
	return n, err
}

// Write: an answer's first write ends its request's unanswered spell.
func (c *drainConn) Write(b []byte) (int, error) {
	var n int
	var err error
	if tc, ok := c.Conn.(*net.TCPConn); c.more && ok {
		n, err = sendMore(tc, b)
	} else {
		n, err = c.Conn.Write(b)
	}
	if c.unanswered.Load() {
		c.unanswered.Store(false)
	}
	return n, err
}

// Close: while draining, a close of a connection whose server goroutine is
// blocked reading, or holds a request it has not answered yet (fasthttp
// closing a connection it takes for idle), only bounds the read, so a request
// already sent is read and answered, and the server's own close follows; a
// timer makes sure the socket closes. A close with no read waiting and nothing
// unanswered is the server's last word on the connection, and closes it at once.
func (c *drainConn) Close() error {
	if c.draining.Load() && (c.reading.Load() > 0 || c.unanswered.Load()) && c.graced.CompareAndSwap(false, true) {
		_ = c.Conn.SetReadDeadline(time.Now().Add(c.grace))
		time.AfterFunc(c.grace+5*time.Second, func() { _ = c.close() })
		return nil
	}
	return c.close()
}

func (c *drainConn) close() error {
	err := net.ErrClosed
	c.once.Do(func() {
		c.conns.Delete(c)
		err = c.Conn.Close()
	})
	return err
}

// waitingReads counts the open connections whose server goroutine is blocked
// reading the next request.
func (s *Server) waitingReads() int {
	n := 0
	s.conns.Range(func(k, _ any) bool {
		if k.(*drainConn).reading.Load() > 0 {
			n++
		}
		return true
	})
	return n
}

func (s *Server) handle(ctx *fasthttp.RequestCtx) {
	defer s.recover(ctx)
	if !s.wellFormed(ctx) {
		return
	}
	if s.fromMemo(ctx) {
		return
	}
	if s.holdForChange(ctx) {
		return
	}
	s.route(ctx)
}

var versionPath = []byte("/v1/version")

// holdForChange holds a wait for the next version (Config.Hold) when the
// router would hold it, and answers it.
func (s *Server) holdForChange(ctx *fasthttp.RequestCtx) bool {
	if s.cfg.Hold == nil || !ctx.IsGet() && !ctx.IsHead() || !api.UserAgentOK(str(ctx.UserAgent())) {
		return false
	}
	if path, _, _ := bytes.Cut(ctx.RequestURI(), []byte("?")); !bytes.Equal(path, versionPath) {
		return false
	}
	wait := ctx.QueryArgs().PeekMulti("wait")
	var aeBuf, inmBuf [4]string
	ae, ok1 := values(&ctx.Request.Header, "Accept-Encoding", &aeBuf)
	inm, ok2 := values(&ctx.Request.Header, "If-None-Match", &inmBuf)
	if len(wait) != 1 || !ok1 || !ok2 {
		return false
	}
	start := time.Now()
	res, held := s.cfg.Hold(ctx, string(wait[0]), ae, inm)
	if !held {
		return false
	}
	var ok, notModified prometheus.Observer
	if s.cfg.Metrics != nil {
		ok = s.cfg.Metrics.Observer(res.Route.Label, http.StatusOK)
		notModified = s.cfg.Metrics.Observer(res.Route.Label, http.StatusNotModified)
	}
	s.answer(ctx, start, &res, ae, inm, nil, ok, notModified)
	return true
}

var (
	http10 = []byte("HTTP/1.0")
	http11 = []byte("HTTP/1.1")
)

// wellFormed answers what fasthttp reads but the router must not see: a request
// line that is not HTTP/1.0 or 1.1 (400, the connection closed), a method the API
// does not have (405), and a broken percent-escape, which the net/http adaptor
// would answer with a text/plain 500 (400). The router applies the same method
// and escape rules (api.wellFormed) for servers without the edge.
func (s *Server) wellFormed(ctx *fasthttp.RequestCtx) bool {
	if p := ctx.Request.Header.Protocol(); !bytes.Equal(p, http11) && !bytes.Equal(p, http10) {
		ctx.SetConnectionClose()
		s.reject(ctx, http.StatusBadRequest, fmt.Sprintf("%.16q is not HTTP/1.0 or HTTP/1.1; this server speaks HTTP/1.x", p))
		return false
	}
	switch {
	case ctx.IsGet(), ctx.IsHead(), ctx.IsOptions():
	default:
		ctx.Response.Header.Set("Allow", "GET, HEAD, OPTIONS")
		s.reject(ctx, http.StatusMethodNotAllowed, api.MethodNotAllowedMessage)
		return false
	}
	if !api.EscapesOK(str(ctx.RequestURI())) {
		s.reject(ctx, http.StatusBadRequest, api.BadEscapeMessage)
		return false
	}
	return true
}

// reject answers an error decided at the edge, in the form the router gives
// the request's path (api.ErrorAnswer), logged once, as the router logs its 4xx.
func (s *Server) reject(ctx *fasthttp.RequestCtx, status int, msg string) {
	writeError(ctx, status, msg, targetPath(ctx))
	if s.logger.Enabled(context.Background(), slog.LevelInfo) {
		s.logger.LogAttrs(context.Background(), slog.LevelInfo, "request",
			slog.String("method", string(ctx.Method())), slog.String("target", string(ctx.RequestURI())),
			slog.String("route", "edge"), slog.Int("status", status), slog.String("user_agent", string(ctx.UserAgent())))
	}
}

// memo is one edition's request targets and the Responses the router's handlers
// described for them.
type memo struct {
	ed      *edition.Edition
	mu      sync.RWMutex
	entries map[string]*entry
	spill   spill
}

// entry is the router's answer to one request target, as its handler described
// it, with the observers of its route.
type entry struct {
	res             representation.Response
	ok, notModified prometheus.Observer
}

// fromMemo answers a request api.EdgeMayAnswer lets the edge answer, when the
// router's handler has described the answer for its target from the active
// edition: the Response is written as the router writes it, with the CORS fields
// the router's middleware adds. TestMemoMatchesRouter holds the two to the same
// bytes.
func (s *Server) fromMemo(ctx *fasthttp.RequestCtx) bool {
	m := s.memo.Load()
	if m.ed == nil || !api.EdgeMayAnswer(str(ctx.Method()), str(ctx.RequestURI()), str(ctx.Request.Header.UserAgent())) {
		return false
	}
	m.mu.RLock()
	e := m.entries[string(ctx.RequestURI())]
	m.mu.RUnlock()
	if e == nil || m.ed != s.cfg.Active() {
		return false // the router answers: a new target, or a new edition
	}
	var aeBuf, inmBuf [4]string
	ae, ok1 := values(&ctx.Request.Header, "Accept-Encoding", &aeBuf)
	inm, ok2 := values(&ctx.Request.Header, "If-None-Match", &inmBuf)
	if !ok1 || !ok2 {
		return false // more header lines than the memo reads: the router reads them all
	}
	s.answer(ctx, time.Now(), &e.res, ae, inm, &m.spill, e.ok, e.notModified)
	return true
}

// answer writes res as the router writes it, with the CORS fields the router's
// middleware adds, and records it as the router's metrics and log would, timed
// from start.
func (s *Server) answer(ctx *fasthttp.RequestCtx, start time.Time, res *representation.Response, ae, inm []string, sp *spill, ok, notModified prometheus.Observer) {
	status, enc := res.Negotiate(ae, inm)
	h := &ctx.Response.Header
	var buf [representation.MaxFields]*representation.Field
	for _, f := range res.Fields(status, enc, buf[:0]) {
		h.SetCanonical(f.NameBytes(), f.ValueBytes())
	}
	setFields(h, api.CORS)
	obs := ok
	if status == http.StatusNotModified {
		obs = notModified
		ctx.SetStatusCode(status)
	} else if sp == nil || !sp.setFileBody(ctx, enc, s.sendfileMin) {
		ctx.Response.SetBodyRaw(enc.Bytes)
	}
	elapsed := time.Since(start)
	if obs != nil {
		obs.Observe(elapsed.Seconds())
	}
	if s.logger.Enabled(context.Background(), slog.LevelDebug) {
		s.logger.LogAttrs(context.Background(), slog.LevelDebug, "request",
			slog.String("method", string(ctx.Method())), slog.String("path", string(ctx.Path())),
			slog.String("route", res.Route.Label), slog.Int("status", status),
			slog.Float64("duration_seconds", elapsed.Seconds()), slog.String("user_agent", string(ctx.UserAgent())),
			slog.Bool("memo", sp != nil))
	}
}

func setFields(h *fasthttp.ResponseHeader, fields []representation.Field) {
	for i := range fields {
		h.SetCanonical(fields[i].NameBytes(), fields[i].ValueBytes())
	}
}

// route hands the request to the router and remembers the Response its handler
// described, if it described one and api.EdgeMayAnswer lets the edge answer the
// target. A described answer's body is the edition's own bytes, set here: the
// handler writes only its status and fields (impl.Description.BodyByCaller).
func (s *Server) route(ctx *fasthttp.RequestCtx) {
	d := impl.Description{BodyByCaller: true}
	ctx.SetUserValue(impl.DescribeKey, &d)
	s.router(ctx)
	ctx.RemoveUserValue(impl.DescribeKey)
	if d.Sent != nil {
		ctx.Response.SetBodyRaw(d.Sent.Bytes)
	}
	if ctx.Response.StatusCode() == fasthttp.StatusInternalServerError && bytes.HasPrefix(ctx.Response.Header.ContentType(), vText) {
		// The adaptor could not turn the request into a net/http one (it logs
		// why, and answers a text/plain 500, where the router's errors are the
		// envelope or a page): the request is at fault, and gets the router's
		// kind of error.
		ctx.Response.Reset()
		s.reject(ctx, http.StatusBadRequest, "the request target cannot be parsed; send an origin-form path such as /v1/weapons")
		return
	}
	if d.Body == nil || !api.EdgeMayAnswer(str(ctx.Method()), str(ctx.RequestURI()), str(ctx.Request.Header.UserAgent())) {
		return
	}
	switch ctx.Response.StatusCode() {
	case fasthttp.StatusOK, fasthttp.StatusNotModified:
		s.remember(string(ctx.RequestURI()), d)
	}
}

var vText = []byte("text/plain")

// remember keeps the described Response for target, in the memo of the edition
// it answered from.
func (s *Server) remember(target string, d impl.Description) {
	m := s.memo.Load()
	if m.ed != d.Edition {
		if d.Edition != s.cfg.Active() {
			return // answered from an edition that is no longer active
		}
		next := &memo{ed: d.Edition, entries: map[string]*entry{}}
		if !s.memo.CompareAndSwap(m, next) {
			return // another request started it; the next miss fills this target
		}
		m = next
	}
	res := d.Response
	e := &entry{res: res}
	if s.cfg.Metrics != nil {
		e.ok = s.cfg.Metrics.Observer(res.Route.Label, http.StatusOK)
		e.notModified = s.cfg.Metrics.Observer(res.Route.Label, http.StatusNotModified)
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if len(m.entries) < s.limit {
		m.entries[target] = e
	}
}

// values returns a request header's values as strings that alias the request's
// buffer (valid until the handler returns), without allocating; false when there are
// more lines of it than buf holds.
func values(h *fasthttp.RequestHeader, key string, buf *[4]string) ([]string, bool) {
	all := h.PeekAll(key)
	if len(all) > len(buf) {
		return nil, false
	}
	for i, v := range all {
		buf[i] = str(v)
	}
	return buf[:len(all)], true
}

// str views b as a string without copying; b must not change while it is used.
func str(b []byte) string { return unsafe.String(unsafe.SliceData(b), len(b)) }

// detached hands h requests whose strings are h's own. The adaptor's request
// (fasthttpadaptor.ConvertRequest) views fasthttp's buffers: its method, URL,
// host and header strings are the connection's request buffer, which the
// connection's next request overwrites, so a handler that kept one (the
// changelog pages' cache key) kept bytes that later changed under it. Copying
// costs a few small allocations on the router's path only; the memo's answers
// do not come here.
func detached(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		c := *r
		c.Method = strings.Clone(r.Method)
		c.Proto = strings.Clone(r.Proto)
		c.Host = strings.Clone(r.Host)
		c.RequestURI = strings.Clone(r.RequestURI)
		if r.URL != nil {
			u := *r.URL
			u.Scheme, u.Opaque, u.Host = strings.Clone(u.Scheme), strings.Clone(u.Opaque), strings.Clone(u.Host)
			u.Path, u.RawPath = strings.Clone(u.Path), strings.Clone(u.RawPath)
			u.RawQuery, u.Fragment, u.RawFragment = strings.Clone(u.RawQuery), strings.Clone(u.Fragment), strings.Clone(u.RawFragment)
			c.URL = &u
		}
		c.Header = make(http.Header, len(r.Header))
		for k, vs := range r.Header {
			own := make([]string, len(vs))
			for i, v := range vs {
				own[i] = strings.Clone(v)
			}
			c.Header[strings.Clone(k)] = own
		}
		h.ServeHTTP(w, &c)
	})
}

// unreadable is the answer to a request fasthttp could not parse. The parser's own
// error stays in the log: it is the parser's wording (and quotes the buffer), not
// the API's.
const unreadable = "the request could not be read as HTTP/1.1: send an origin-form request line such as \"GET /v1/weapons HTTP/1.1\", then headers"

// badRequest answers a request fasthttp could not read, in the error envelope, and
// logs why at Info, as the router logs its 4xx.
func (s *Server) badRequest(ctx *fasthttp.RequestCtx, err error) {
	// A connection that never sent a byte (a client's spare connection, at the
	// read timeout or at shutdown) is closed without an answer, as net/http and
	// nginx do: a 400 on it reaches the client as an unsolicited response on an
	// idle connection. fasthttp writes whatever this handler leaves; a write
	// deadline already past makes that write fail unsent.
	if dc, ok := ctx.Conn().(*drainConn); ok && !dc.spoke {
		_ = dc.SetWriteDeadline(time.Now())
		return
	}
	status, msg := http.StatusBadRequest, unreadable
	var small *fasthttp.ErrSmallBuffer
	switch {
	case errors.As(err, &small):
		status, msg = http.StatusRequestHeaderFieldsTooLarge, fmt.Sprintf("request headers exceed %d bytes; send fewer or shorter headers", maxHeaderBytes)
	case errors.Is(err, fasthttp.ErrBodyTooLarge):
		status, msg = http.StatusRequestEntityTooLarge, "this API takes no request bodies; send GET or HEAD without one"
	}
	writeError(ctx, status, msg, "") // no path of an unreadable request is trusted: the envelope
	s.logger.LogAttrs(context.Background(), slog.LevelInfo, "unreadable request",
		slog.String("route", "edge"), slog.Int("status", status), slog.String("err", err.Error()))
}

func (s *Server) recover(ctx *fasthttp.RequestCtx) {
	if v := recover(); v != nil {
		id := impl.NewRequestID()
		s.logger.Error("panic serving request", "request_id", id, "method", string(ctx.Method()), "path", string(ctx.Path()), "panic", v, "stack", string(debug.Stack()))
		ctx.Response.Reset()
		ctx.Response.Header.Set("X-Request-Id", id)
		writeError(ctx, http.StatusInternalServerError, "internal error (request id "+id+"); it has been logged, retry later", targetPath(ctx))
	}
}

// writeError answers an error decided at the edge as the router answers one for
// path (api.ErrorAnswer: a page for a page path, else the envelope), with the
// CORS fields the router's middleware adds.
func writeError(ctx *fasthttp.RequestCtx, status int, msg, path string) {
	header, body := api.ErrorAnswer(path, status, msg)
	ctx.SetStatusCode(status)
	setFields(&ctx.Response.Header, header)
	setFields(&ctx.Response.Header, api.CORS)
	ctx.SetBody(body)
}

// targetPath is the path of the request's target, percent-decoded as the
// router's request has it (raw when it does not decode), for api.ErrorAnswer;
// a target that is not origin-form ("*", an absolute or authority form) gives
// a path that is not a page's. Errors only: it copies.
func targetPath(ctx *fasthttp.RequestCtx) string {
	path, _, _ := strings.Cut(string(ctx.RequestURI()), "?")
	if decoded, err := url.PathUnescape(path); err == nil {
		return decoded
	}
	return path
}

// logAdapter sends fasthttp's own messages (rare: accept errors and the like) to slog.
type logAdapter struct{ l *slog.Logger }

func (a logAdapter) Printf(format string, args ...any) { a.l.Warn(fmt.Sprintf(format, args...)) }
