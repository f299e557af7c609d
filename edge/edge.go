// Package edge owns the listening socket. It serves HTTP/1.1 with fasthttp and keeps
// a memo of request targets the router has answered from an edition's pre-rendered
// bodies, so the next request for the same target is answered from memory without
// routing, parameter binding or handler. Everything else — the first request for a
// target, errors, diffs, metrics, /v1/versions, the HTML pages, preflights — goes
// to the router (package api), which stays the one place where the API's behaviour
// is decided. The one rule: the memo keeps only what impl captured, and impl
// captures only bodies an edition owns.
//
// Why not net/http: a by-UUID lookup through net/http costs about twice the CPU of
// nginx sending the same file (per-request allocations, a background-read goroutine,
// a 4 KiB write buffer that splits a 4.4 KB body into two sends); fasthttp, with a
// write buffer that holds the whole response, sends it in one. BENCHMARKS.md has the
// figures.
package edge

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"runtime/debug"
	"sync"
	"sync/atomic"
	"time"
	"unsafe"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/valyala/fasthttp"
	"github.com/valyala/fasthttp/fasthttpadaptor"

	"github.com/refdata/refdata/api"
	"github.com/refdata/refdata/catalog"
	"github.com/refdata/refdata/impl"
)

// Config wires a Server.
type Config struct {
	// Router answers every request the memo cannot: api.New's handler.
	Router http.Handler
	// Active returns the edition being served; the memo belongs to one edition
	// and is dropped when another becomes active.
	Active func() *catalog.Edition
	// Metrics records the requests the memo answers (the router records its own);
	// nil records nothing.
	Metrics *api.HTTPMetrics
	Logger  *slog.Logger
	// MemoLimit caps the memo's entries per edition; 0 means DefaultMemoLimit.
	MemoLimit int
	// DrainGrace is how long a keep-alive connection that looks idle when
	// shutdown begins still reads; 0 means DefaultDrainGrace.
	DrainGrace time.Duration
}

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
	// writeBuffer holds a whole response of up to 64 KiB, headers included, so it
	// leaves in one write; larger bodies go out in 64 KiB writes.
	writeBuffer = 64 << 10
)

// Server is the HTTP server.
type Server struct {
	cfg    Config
	router fasthttp.RequestHandler
	memo   atomic.Pointer[memo]
	http   *fasthttp.Server
	limit  int
	logger *slog.Logger
	// draining is set by Shutdown.
	draining atomic.Bool
	grace    time.Duration
	conns    sync.Map // the open connections (drainListener)
}

// New builds a Server; Serve starts it.
func New(cfg Config) *Server {
	s := &Server{cfg: cfg, router: fasthttpadaptor.NewFastHTTPHandler(cfg.Router), limit: cfg.MemoLimit, logger: cfg.Logger}
	if s.limit <= 0 {
		s.limit = DefaultMemoLimit
	}
	s.grace = cfg.DrainGrace
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
		ReadTimeout:           10 * time.Second,
		WriteTimeout:          60 * time.Second,
		IdleTimeout:           120 * time.Second,
		ReadBufferSize:        maxHeaderBytes,
		WriteBufferSize:       writeBuffer,
		MaxRequestBodySize:    maxBodyBytes,
		NoDefaultServerHeader: true,
		NoDefaultContentType:  true,
		CloseOnShutdown:       true,
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
	graced   atomic.Bool
	once     sync.Once
}

func (c *drainConn) Read(b []byte) (int, error) {
	c.reading.Add(1)
	defer c.reading.Add(-1)
	return c.Conn.Read(b)
}

// Close: while draining, a close of a connection whose server goroutine is
// blocked reading (fasthttp closing an idle connection) only bounds that read,
// so a request already sent is read and answered, and the server's own close
// follows; a timer makes sure the socket closes. A close with no read waiting
// is the server's last word on the connection, and closes it at once.
func (c *drainConn) Close() error {
	if c.draining.Load() && c.reading.Load() > 0 && c.graced.CompareAndSwap(false, true) {
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
	s.route(ctx)
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

// reject answers an error decided at the edge, logged once, as the router logs
// its 4xx.
func (s *Server) reject(ctx *fasthttp.RequestCtx, status int, msg string) {
	writeError(ctx, status, msg)
	if s.logger.Enabled(context.Background(), slog.LevelInfo) {
		s.logger.LogAttrs(context.Background(), slog.LevelInfo, "request",
			slog.String("method", string(ctx.Method())), slog.String("target", string(ctx.RequestURI())),
			slog.String("route", "edge"), slog.Int("status", status), slog.String("user_agent", string(ctx.UserAgent())))
	}
}

// memo is one edition's request targets.
type memo struct {
	ed      *catalog.Edition
	version []byte // X-Data-Version
	mu      sync.RWMutex
	entries map[string]*entry
	values  map[string][]byte // header values, one copy each
}

func newMemo(ed *catalog.Edition) *memo {
	return &memo{ed: ed, version: []byte(ed.ManifestID), entries: map[string]*entry{}, values: map[string][]byte{}}
}

// value returns v's one copy; m.mu must be held.
func (m *memo) value(v string) []byte {
	b, ok := m.values[v]
	if !ok {
		b = []byte(v)
		m.values[v] = b
	}
	return b
}

// entry is what the router decided for one request target, with its header values
// as bytes for fasthttp.
type entry struct {
	body            *catalog.Body
	route           string
	cache, lang     []byte
	ok, notModified prometheus.Observer
}

// Header names in canonical form, and the values every memo answer shares.
var (
	hCacheControl   = []byte("Cache-Control")
	hVary           = []byte("Vary")
	hETag           = []byte("Etag")
	hDataVersion    = []byte("X-Data-Version")
	hAllowOrigin    = []byte("Access-Control-Allow-Origin")
	hExposeHeaders  = []byte("Access-Control-Expose-Headers")
	hLanguage       = []byte("Content-Language")
	hEncoding       = []byte("Content-Encoding")
	vJSON           = []byte("application/json")
	vAcceptEncoding = []byte("Accept-Encoding")
	vAllowOrigin    = []byte(api.AllowOrigin)
	vExposeHeaders  = []byte(api.ExposeHeaders)
)

func (m *memo) get(target []byte) *entry {
	m.mu.RLock()
	e := m.entries[string(target)]
	m.mu.RUnlock()
	return e
}

// fromMemo answers a GET or HEAD whose target the router has answered from the
// active edition before. It does what writeBody and the CORS middleware do, and
// TestMemoMatchesRouter holds the two to the same bytes.
func (s *Server) fromMemo(ctx *fasthttp.RequestCtx) bool {
	if !ctx.IsGet() && !ctx.IsHead() {
		return false
	}
	m := s.memo.Load()
	if m.ed == nil {
		return false
	}
	e := m.get(ctx.RequestURI())
	if e == nil || !api.UserAgentOK(str(ctx.Request.Header.UserAgent())) || m.ed != s.cfg.Active() {
		return false // the router answers: the User-Agent rule, or a new edition
	}
	var aeBuf, inmBuf [4]string
	ae, ok1 := values(&ctx.Request.Header, "Accept-Encoding", &aeBuf)
	inm, ok2 := values(&ctx.Request.Header, "If-None-Match", &inmBuf)
	if !ok1 || !ok2 {
		return false // more header lines than the memo reads: the router reads them all
	}
	start := time.Now()
	rep := e.body.Pick(ae)
	h := &ctx.Response.Header
	h.SetContentTypeBytes(vJSON)
	h.SetCanonical(hCacheControl, e.cache)
	h.SetCanonical(hVary, vAcceptEncoding)
	h.SetCanonical(hETag, bytesOf(rep.ETag))
	h.SetCanonical(hDataVersion, m.version)
	h.SetCanonical(hAllowOrigin, vAllowOrigin)
	h.SetCanonical(hExposeHeaders, vExposeHeaders)
	if e.lang != nil {
		h.SetCanonical(hLanguage, e.lang)
	}
	status, obs := fasthttp.StatusOK, e.ok
	if len(inm) > 0 && impl.ETagMatch(inm, rep.ETag) {
		status, obs = fasthttp.StatusNotModified, e.notModified
		ctx.SetStatusCode(status)
	} else {
		if rep.EncodingHeader != nil {
			h.SetCanonical(hEncoding, bytesOf(rep.EncodingHeader[0]))
		}
		ctx.Response.SetBodyRaw(rep.Bytes) // HEAD: fasthttp sends the length, not the body
	}
	elapsed := time.Since(start)
	if obs != nil {
		obs.Observe(elapsed.Seconds())
	}
	if s.logger.Enabled(context.Background(), slog.LevelDebug) {
		s.logger.LogAttrs(context.Background(), slog.LevelDebug, "request",
			slog.String("method", string(ctx.Method())), slog.String("path", string(ctx.Path())),
			slog.String("route", e.route), slog.Int("status", status),
			slog.Duration("duration", elapsed), slog.String("user_agent", string(ctx.UserAgent())),
			slog.Bool("memo", true))
	}
	return true
}

// route hands the request to the router and remembers what it answered, when it
// answered from the edition's bodies.
func (s *Server) route(ctx *fasthttp.RequestCtx) {
	c := &impl.Capture{}
	ctx.SetUserValue(impl.CaptureKey, c)
	s.router(ctx)
	ctx.RemoveUserValue(impl.CaptureKey)
	if ctx.Response.StatusCode() == fasthttp.StatusInternalServerError && !bytes.Equal(ctx.Response.Header.ContentType(), vJSON) {
		// The adaptor could not turn the request into a net/http one (it logs
		// why): the request is at fault, and the answer is still the envelope.
		ctx.Response.Reset()
		s.reject(ctx, http.StatusBadRequest, "the request target cannot be parsed; send an origin-form path such as /v1/weapons")
		return
	}
	if c.Body == nil || !memoizable(ctx) {
		return
	}
	switch ctx.Response.StatusCode() {
	case fasthttp.StatusOK, fasthttp.StatusNotModified:
		s.remember(string(ctx.RequestURI()), c)
	}
}

// memoizable: GET or HEAD, and a query that is empty or the language alone. Other
// queries are answered too, by the router, but never fill the memo: unknown
// parameters are ignored, so their variety is endless.
func memoizable(ctx *fasthttp.RequestCtx) bool {
	if !ctx.IsGet() && !ctx.IsHead() {
		return false
	}
	uri := ctx.RequestURI()
	i := bytes.IndexByte(uri, '?')
	if i < 0 {
		return true
	}
	q := uri[i+1:]
	return bytes.HasPrefix(q, []byte("language=")) && bytes.IndexByte(q, '&') < 0
}

func (s *Server) remember(target string, c *impl.Capture) {
	m := s.memo.Load()
	if m.ed != c.Edition {
		if c.Edition != s.cfg.Active() {
			return // answered from an edition that is no longer active
		}
		next := newMemo(c.Edition)
		if !s.memo.CompareAndSwap(m, next) {
			return // another request started it; the next miss fills this target
		}
		m = next
	}
	e := &entry{body: c.Body, route: c.Route}
	if s.cfg.Metrics != nil {
		e.ok = s.cfg.Metrics.Observer(c.Route, http.StatusOK)
		e.notModified = s.cfg.Metrics.Observer(c.Route, http.StatusNotModified)
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if len(m.entries) >= s.limit {
		return
	}
	e.cache = m.value(c.Cache)
	if c.Body.LangHeader != nil {
		e.lang = m.value(c.Body.LangHeader[0])
	}
	m.entries[target] = e
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

// bytesOf views s as bytes without copying; fasthttp copies header values, and
// nothing writes to them.
func bytesOf(s string) []byte { return unsafe.Slice(unsafe.StringData(s), len(s)) }

// str views b as a string without copying; b must not change while it is used.
func str(b []byte) string { return unsafe.String(unsafe.SliceData(b), len(b)) }

// badRequest answers a request fasthttp could not read, in the error envelope.
func (s *Server) badRequest(ctx *fasthttp.RequestCtx, err error) {
	status, msg := http.StatusBadRequest, "the request could not be read as HTTP/1.1: "+err.Error()
	var small *fasthttp.ErrSmallBuffer
	switch {
	case errors.As(err, &small):
		status, msg = http.StatusRequestHeaderFieldsTooLarge, fmt.Sprintf("request headers exceed %d bytes; send fewer or shorter headers", maxHeaderBytes)
	case errors.Is(err, fasthttp.ErrBodyTooLarge):
		status, msg = http.StatusRequestEntityTooLarge, "this API takes no request bodies; send GET or HEAD without one"
	}
	writeError(ctx, status, msg)
}

func (s *Server) recover(ctx *fasthttp.RequestCtx) {
	if v := recover(); v != nil {
		id := impl.NewRequestID()
		s.logger.Error("panic serving request", "request_id", id, "method", string(ctx.Method()), "path", string(ctx.Path()), "panic", v, "stack", string(debug.Stack()))
		ctx.Response.Reset()
		ctx.Response.Header.Set("X-Request-Id", id)
		writeError(ctx, http.StatusInternalServerError, "internal error (request id "+id+"); it has been logged, retry later")
	}
}

func writeError(ctx *fasthttp.RequestCtx, status int, msg string) {
	h := &ctx.Response.Header
	ctx.SetStatusCode(status)
	h.SetContentType("application/json")
	h.Set("Cache-Control", "no-store")
	h.Set("Access-Control-Allow-Origin", api.AllowOrigin)
	h.Set("Access-Control-Expose-Headers", api.ExposeHeaders)
	ctx.SetBody(impl.ErrorJSON(status, msg))
}

// logAdapter sends fasthttp's own messages (rare: accept errors and the like) to slog.
type logAdapter struct{ l *slog.Logger }

func (a logAdapter) Printf(format string, args ...any) { a.l.Warn(fmt.Sprintf(format, args...)) }
