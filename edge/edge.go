// Package edge owns the listening socket: HTTP/1.1 with fasthttp (net/http
// cost about twice nginx's CPU per answer), and a memo of the request targets
// the router (package router) has answered from the active edition's bodies, so
// the next request for one is answered without routing or handler. Every
// request meets the API's policy first (router.Check), as on the router; what
// the memo cannot answer takes the router, where the API's behaviour is
// decided; router.EdgeMayAnswer says which requests the memo may answer.
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
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
	"unsafe"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/valyala/fasthttp"
	"github.com/valyala/fasthttp/fasthttpadaptor"

	"github.com/refdata/refdata/edition"
	"github.com/refdata/refdata/handler"
	"github.com/refdata/refdata/representation"
	"github.com/refdata/refdata/router"
)

// Config wires a Server.
type Config struct {
	// Router answers every request the memo cannot: router.New's handler.
	Router http.Handler
	// Active returns the edition being served; the memo belongs to one edition
	// and is dropped when another becomes active (or at once by ActiveChanged).
	Active func() *edition.Edition
	// Metrics records the requests the edge answers itself; nil records nothing.
	Metrics *router.HTTPMetrics
	Logger  *slog.Logger
	// MemoLimit caps the memo's entries per edition; 0 means DefaultMemoLimit.
	MemoLimit int
	// SendfileMin is the smallest memo answer sent by sendfile (spill.go); 0
	// means DefaultSendfileMin.
	SendfileMin int
	// DrainGrace: how long a keep-alive connection that looks idle when
	// shutdown begins still reads; 0 means DefaultDrainGrace.
	DrainGrace time.Duration
	// ReadTimeout bounds the wait for a new connection's first byte and the
	// reading of any request; 0 means DefaultReadTimeout.
	ReadTimeout time.Duration
	// Hold, when set, holds a request for /v1/version?wait= on its
	// connection's goroutine (handler.Server.HoldForChange) rather than the
	// router, whose adaptor adds a goroutine per request. Its ctx ends when
	// the client leaves or the server shuts down.
	Hold func(ctx context.Context, remoteAddr, wait string, acceptEncoding, ifNoneMatch []string) (representation.Response, bool)
}

// DefaultReadTimeout: how long a client has to send a request's head.
const DefaultReadTimeout = 10 * time.Second

// DefaultMemoLimit holds every target of the newest sample (48,070: its lists
// and items in the 19 ways of naming a language), at roughly 250 bytes each.
const DefaultMemoLimit = 1 << 16

// Request limits: the API takes no request bodies. writeBuffer holds a whole
// answer written from memory, so it leaves in one write; a connection holds it
// only while it answers (ReduceMemoryUsage).
const (
	maxHeaderBytes = 16 << 10
	maxBodyBytes   = 64 << 10
	writeBuffer    = 256 << 10
)

// Server is the HTTP server.
type Server struct {
	cfg      Config // with the defaults filled in
	router   fasthttp.RequestHandler
	memo     atomic.Pointer[memo]
	http     *fasthttp.Server
	draining atomic.Bool // set by Shutdown
	conns    sync.Map    // the open *drainConn
	// base is the parent of the contexts of the requests whose client the
	// edge watches (clientContext); Shutdown ends it.
	base     context.Context
	shutdown context.CancelFunc
	// sendfiles counts the bodies handed to sendfile(2), which only the
	// tests read: a body written another way answers the same bytes.
	sendfiles atomic.Int64
}

// New builds a Server; Serve starts it.
func New(cfg Config) *Server {
	if cfg.MemoLimit <= 0 {
		cfg.MemoLimit = DefaultMemoLimit
	}
	if cfg.DrainGrace <= 0 {
		cfg.DrainGrace = DefaultDrainGrace
	}
	cfg.SendfileMin = cmp.Or(cfg.SendfileMin, DefaultSendfileMin)
	cfg.Logger = cmp.Or(cfg.Logger, slog.New(slog.DiscardHandler))
	s := &Server{cfg: cfg, router: fasthttpadaptor.NewFastHTTPHandler(detached(cfg.Router))}
	s.base, s.shutdown = context.WithCancel(context.Background())
	s.memo.Store(&memo{})
	s.http = &fasthttp.Server{
		Handler:               s.handle,
		ErrorHandler:          s.badRequest,
		Logger:                slog.NewLogLogger(cfg.Logger.Handler(), slog.LevelWarn), // fasthttp's own, rare messages
		ReadTimeout:           cmp.Or(cfg.ReadTimeout, DefaultReadTimeout),
		WriteTimeout:          60 * time.Second,
		IdleTimeout:           120 * time.Second,
		ReadBufferSize:        maxHeaderBytes,
		WriteBufferSize:       writeBuffer,
		MaxRequestBodySize:    maxBodyBytes,
		NoDefaultServerHeader: true,
		NoDefaultContentType:  true,
		CloseOnShutdown:       true,
		// A connection between requests keeps no buffer: kept, they are some
		// 85 KiB of heap per idle keep-alive connection.
		ReduceMemoryUsage: true,
	}
	return s
}

// Serve answers connections from ln until Shutdown.
func (s *Server) Serve(ln net.Listener) error {
	return s.http.Serve(drainListener{ln, s})
}

// Shutdown stops accepting, answers every request already received, and returns
// when they are answered or ctx ends. Each connection's last answer carries
// Connection: close (fasthttp's CloseOnShutdown).
func (s *Server) Shutdown(ctx context.Context) error {
	s.draining.Store(true)
	s.shutdown()
	err := s.http.ShutdownWithContext(ctx)
	s.memo.Load().spill.retire()
	return err
}

// ActiveChanged drops the memo once another edition is served
// (replica.Repository.OnSwap), so it does not keep the previous one alive.
func (s *Server) ActiveChanged() { s.memo.Swap(&memo{}).spill.retire() }

// DefaultDrainGrace: a request a client sent as shutdown began may be unread
// in the socket's buffer; it is answered (with Connection: close), not dropped.
const DefaultDrainGrace = time.Second

// drainListener hands out connections that, while the server shuts down, turn
// fasthttp's close of an idle connection into a short read deadline: fasthttp
// closes at once every connection between requests, including those whose
// next request has arrived unread, and those clients got no answer at all.
type drainListener struct {
	net.Listener
	s *Server
}

// Accept waits out what the kernel refuses for a while (acceptPasses) and
// accepts again, as net/http does: fasthttp's Serve returns at any accept
// error but a timeout, and the server with it, so a client holding
// connections by the thousand (the process out of file descriptors) brought
// it down. The pause doubles from 5 ms to a second; shutdown ends it, and
// the accepting.
func (l drainListener) Accept() (net.Conn, error) {
	var pause time.Duration
	for {
		c, err := l.Listener.Accept()
		if err == nil {
			return l.wrap(c), nil
		}
		if !acceptPasses(err) {
			return nil, err
		}
		pause = min(max(2*pause, 5*time.Millisecond), time.Second)
		l.s.cfg.Logger.Warn("accept failed; accepting again after a pause", "retry_in_seconds", pause.Seconds(), "err", err)
		t := time.NewTimer(pause)
		select {
		case <-t.C:
		case <-l.s.base.Done():
			t.Stop()
			return nil, net.ErrClosed // fasthttp's Serve ends without an error
		}
	}
}

// acceptPasses: err is a refusal that ends by itself — descriptors or buffers
// run out (they come back as connections close), or a connection its client
// reset while it waited in the backlog.
func acceptPasses(err error) bool {
	for _, errno := range []syscall.Errno{syscall.EMFILE, syscall.ENFILE, syscall.ENOBUFS, syscall.ENOMEM, syscall.ECONNABORTED} {
		if errors.Is(err, errno) {
			return true
		}
	}
	return false
}

func (l drainListener) wrap(c net.Conn) net.Conn {
	dc := &drainConn{Conn: c, s: l.s}
	l.s.conns.Store(dc, struct{}{})
	return dc
}

type drainConn struct {
	net.Conn
	s       *Server
	reading atomic.Int32 // Read calls in progress: the server waits for a request
	// unanswered: a Read returned bytes and no Write has followed yet; set
	// before the bytes reach fasthttp, so a request never looks idle to Close.
	unanswered atomic.Bool
	// spoke: a Read has returned bytes (badRequest); more: the next Write is
	// an answer's head, its body follows by sendfile (spill.go). Only the
	// connection's own goroutine uses these two.
	spoke, more bool
	graced      atomic.Bool
	once        sync.Once
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
func (c *drainConn) Write(b []byte) (n int, err error) {
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

// Close: while draining, a close of a connection whose goroutine is blocked
// reading, or holds a request not answered yet (fasthttp taking it for idle),
// only bounds the read, so a request already sent is answered before the
// server's own close; a timer makes sure the socket closes. Any other close is
// the server's last word on the connection.
func (c *drainConn) Close() error {
	grace := c.s.cfg.DrainGrace
	if c.s.draining.Load() && (c.reading.Load() > 0 || c.unanswered.Load()) && c.graced.CompareAndSwap(false, true) {
		_ = c.Conn.SetReadDeadline(time.Now().Add(grace))
		time.AfterFunc(grace+5*time.Second, func() { _ = c.close() })
		return nil
	}
	return c.close()
}

func (c *drainConn) close() error {
	err := net.ErrClosed
	c.once.Do(func() {
		c.s.conns.Delete(c)
		err = c.Conn.Close()
	})
	return err
}

// handle answers a request: the policy first (router.Policy, as the router
// applies it), then the memo, a held wait, or the router.
func (s *Server) handle(ctx *fasthttp.RequestCtx) {
	start := time.Now()
	defer s.recover(ctx, start)
	if !s.speaksHTTP1(ctx, start) {
		return
	}
	q := router.Request{
		Method: method(ctx), Target: str(ctx.RequestURI()),
		UserAgent: str(ctx.Request.Header.UserAgent()), Framed: framedByTE(ctx.Request.Header.RawHeaders()),
	}
	q.Path = router.TargetPath(q.Target)
	if st, stop := router.Check(q, false); stop {
		s.refuse(ctx, start, &q, st)
		return
	}
	if !s.fromMemo(ctx, start, &q) && !s.holdForChange(ctx, &q) {
		s.route(ctx)
	}
}

var versionPath = []byte("/v1/version")

// holdForChange holds and answers a wait for the next version (Config.Hold)
// when the router would hold it.
func (s *Server) holdForChange(ctx *fasthttp.RequestCtx, q *router.Request) bool {
	if s.cfg.Hold == nil {
		return false
	}
	if path, _, _ := bytes.Cut(ctx.RequestURI(), []byte("?")); !bytes.Equal(path, versionPath) {
		return false
	}
	if _, stop := router.Check(*q, true); stop {
		return false // the router refuses it
	}
	wait := ctx.QueryArgs().PeekMulti("wait")
	var buf [2][4]string
	ae, inm, ok := negotiation(&ctx.Request.Header, &buf)
	if len(wait) != 1 || !ok {
		return false
	}
	start := time.Now()
	cc, done := s.clientContext(ctx)
	res, held := s.cfg.Hold(cc, ctx.RemoteAddr().String(), string(wait[0]), ae, inm)
	done()
	if held {
		e := s.entry(res)
		s.answer(ctx, start, q, &e, ae, inm, nil)
	}
	return held
}

// clientContext is a context for ctx's request that ends when its client
// leaves (watchClient) or the server shuts down, as net/http's request
// context does; its values are the request's user values. done must be called
// when the request no longer waits; after the client left, it marks the
// connection to close after the answer, which nobody reads.
func (s *Server) clientContext(ctx *fasthttp.RequestCtx) (cc context.Context, done func()) {
	c, cancel := context.WithCancel(s.base)
	var left atomic.Bool
	stop := watchClient(ctx.Conn(), func() {
		left.Store(true)
		cancel()
	})
	return &clientContext{c, ctx}, func() {
		stop()
		cancel()
		if left.Load() {
			ctx.SetConnectionClose()
		}
	}
}

type clientContext struct {
	context.Context
	req *fasthttp.RequestCtx
}

func (c *clientContext) Value(key any) any { return c.req.UserValue(key) }

// clientContextKey: under it route puts a clientContext for detached to hand
// the router.
type clientContextKey struct{}

var (
	http10 = []byte("HTTP/1.0")
	http11 = []byte("HTTP/1.1")
)

// speaksHTTP1 answers a request line that is not HTTP/1.x (400, the
// connection closed): fasthttp reads it, the router must not see it.
func (s *Server) speaksHTTP1(ctx *fasthttp.RequestCtx, start time.Time) bool {
	if p := ctx.Request.Header.Protocol(); bytes.Equal(p, http11) || bytes.Equal(p, http10) {
		return true
	}
	ctx.SetConnectionClose()
	q := router.Request{Method: string(ctx.Method()), Path: targetPath(ctx), UserAgent: string(ctx.UserAgent())}
	s.refuse(ctx, start, &q, router.Stop{Status: http.StatusBadRequest, Message: fmt.Sprintf("%.16q is not HTTP/1.0 or HTTP/1.1; this server speaks HTTP/1.x", ctx.Request.Header.Protocol())})
	return false
}

var transferEncoding = []byte("Transfer-Encoding")

// framedByTE reports whether a request's header has a Transfer-Encoding field.
// The raw header is where it shows: fasthttp reads a chunked body before the
// handler and then drops the field (an empty body even gets Content-Length: 0).
// A scan of a few lines, without allocating.
func framedByTE(raw []byte) bool {
	for len(raw) > 0 {
		line := raw
		if i := bytes.IndexByte(raw, '\n'); i >= 0 {
			line, raw = raw[:i], raw[i+1:]
		} else {
			raw = nil
		}
		if n := len(transferEncoding); len(line) > n && line[n] == ':' && bytes.EqualFold(line[:n], transferEncoding) {
			return true
		}
	}
	return false
}

// refuse answers a request the policy stopped, as the router would
// (router.Refuse), and records it as the router records its answers.
func (s *Server) refuse(ctx *fasthttp.RequestCtx, start time.Time, q *router.Request, st router.Stop) {
	sink := fastSink{ctx: ctx}
	router.SetEveryAnswer(sink)
	router.Refuse(sink, q.Path, st)
	s.record(ctx, start, q, "unmatched", st.Status, nil, false)
}

// record records an answer the edge gave itself (router.Record).
func (s *Server) record(ctx *fasthttp.RequestCtx, start time.Time, q *router.Request, route string, status int, obs prometheus.Observer, memo bool) {
	router.Record(s.cfg.Logger, s.cfg.Metrics, obs, &router.Exchange{
		Method: q.Method, Path: q.Path, UserAgent: q.UserAgent,
		Route: route, Status: status, Elapsed: time.Since(start), Memo: memo,
	})
}

// fastSink is a fasthttp answer as a representation.Sink: what the edge
// writes goes through the same writers as the router's answers. Bodies of
// Encoded leave by sendfile when big enough (setBody), from sp's spill file
// when it has one.
type fastSink struct {
	ctx *fasthttp.RequestCtx
	s   *Server
	sp  *spill
}

func (f fastSink) Set(fd *representation.Field) {
	f.ctx.Response.Header.SetCanonical(fd.NameBytes(), fd.ValueBytes())
}

func (f fastSink) Body(enc *representation.Encoded) ([]byte, error) {
	return nil, f.s.setBody(f.ctx, enc, f.sp)
}

// Send sets the status, and a body made for this request alone (copied; none
// for a HEAD, whose answer then has no Content-Length, as the router's).
func (f fastSink) Send(status int, enc *representation.Encoded, body []byte) {
	f.ctx.SetStatusCode(status)
	if enc == nil && body != nil && !f.ctx.IsHead() {
		f.ctx.SetBody(body)
	}
}

// memo is one edition's request targets and the Responses described for them.
type memo struct {
	ed      *edition.Edition
	mu      sync.RWMutex
	entries map[string]*entry
	spill   spill
}

// entry is an answer as a handler described it, with the observers of its route.
type entry struct {
	res             representation.Response
	ok, notModified prometheus.Observer
}

func (s *Server) entry(res representation.Response) entry {
	e := entry{res: res}
	if s.cfg.Metrics != nil {
		e.ok = s.cfg.Metrics.Observer(res.Route.Label, http.StatusOK)
		e.notModified = s.cfg.Metrics.Observer(res.Route.Label, http.StatusNotModified)
	}
	return e
}

// fromMemo answers a request router.EdgeMayAnswer lets the edge answer when the
// router's handler has described the answer for its target from the active
// edition. TestMemoMatchesRouter (every target, every way of asking) and
// TestBothStacksAnswerAlike (the policy's matrix) hold the memo and the
// router to the same answers.
func (s *Server) fromMemo(ctx *fasthttp.RequestCtx, start time.Time, q *router.Request) bool {
	m := s.memo.Load()
	if m.ed == nil || !router.EdgeMayAnswer(q.Method, q.Target) {
		return false
	}
	m.mu.RLock()
	e := m.entries[q.Target]
	m.mu.RUnlock()
	if e == nil || m.ed != s.cfg.Active() {
		return false // the router answers: a new target, or a new edition
	}
	if st, stop := router.Check(*q, true); stop { // the target is a route's
		s.refuse(ctx, start, q, st)
		return true
	}
	var buf [2][4]string
	ae, inm, ok := negotiation(&ctx.Request.Header, &buf)
	if ok {
		s.answer(ctx, start, q, e, ae, inm, &m.spill)
	}
	return ok // else more header lines than the memo reads: the router reads them all
}

// answer writes e's Response as the router writes it (representation.Send),
// with the fields every answer carries (router.SetEveryAnswer), and records it
// as the router would, timed from start; sp is the memo's spill file (nil:
// held, not memoized).
func (s *Server) answer(ctx *fasthttp.RequestCtx, start time.Time, q *router.Request, e *entry, ae, inm []string, sp *spill) {
	sink := fastSink{ctx: ctx, s: s, sp: sp}
	status, _, err := representation.Send(sink, &e.res, ae, inm)
	if err != nil {
		s.failBody(ctx, err)
		return
	}
	router.SetEveryAnswer(sink)
	obs := e.ok
	if status == http.StatusNotModified {
		obs = e.notModified
	}
	s.record(ctx, start, q, e.res.Route.Label, status, obs, sp != nil)
}

// route hands the request to the router and remembers the Response its handler
// described, if router.EdgeMayAnswer lets the edge answer the target. A described
// answer's body is the edition's own bytes, set here (handler.Description.BodyByCaller).
func (s *Server) route(ctx *fasthttp.RequestCtx) {
	d := handler.Description{BodyByCaller: true}
	ctx.SetUserValue(handler.DescribeKey, &d)
	if router.MayTakeLong(str(ctx.RequestURI())) {
		cc, done := s.clientContext(ctx)
		ctx.SetUserValue(clientContextKey{}, cc)
		defer ctx.RemoveUserValue(clientContextKey{})
		defer done()
	}
	s.router(ctx)
	ctx.RemoveUserValue(handler.DescribeKey)
	if d.Sent != nil {
		if err := s.setBody(ctx, d.Sent, nil); err != nil {
			s.failBody(ctx, err)
			return
		}
	}
	if ctx.Response.StatusCode() == fasthttp.StatusInternalServerError && bytes.HasPrefix(ctx.Response.Header.ContentType(), vText) {
		// The adaptor could not turn the request into a net/http one (it logs
		// why, and answers a text/plain 500: TestFasthttpAdaptorFailure): the
		// request is at fault.
		ctx.Response.Reset()
		q := router.Request{Method: string(ctx.Method()), Path: targetPath(ctx), UserAgent: string(ctx.UserAgent())}
		s.refuse(ctx, time.Now(), &q, router.Stop{Status: http.StatusBadRequest, Message: "the request target cannot be parsed; send an origin-form path such as /v1/weapons"})
		return
	}
	if st := ctx.Response.StatusCode(); d.Body != nil && (st == fasthttp.StatusOK || st == fasthttp.StatusNotModified) &&
		router.EdgeMayAnswer(method(ctx), str(ctx.RequestURI())) {
		s.remember(string(ctx.RequestURI()), d)
	}
}

var vText = []byte("text/plain")

// remember keeps the described Response for target in its edition's memo.
func (s *Server) remember(target string, d handler.Description) {
	m := s.memo.Load()
	if m.ed != d.Edition {
		if d.Edition != s.cfg.Active() {
			return // answered from an edition that is no longer active
		}
		next := &memo{ed: d.Edition, entries: map[string]*entry{}}
		if !s.memo.CompareAndSwap(m, next) {
			return // another request started it; the next miss fills this target
		}
		m.spill.retire()
		m = next
	}
	e := s.entry(d.Response)
	m.mu.Lock()
	defer m.mu.Unlock()
	if len(m.entries) < s.cfg.MemoLimit {
		m.entries[target] = &e
	}
}

// negotiation returns the request's Accept-Encoding and If-None-Match values as
// strings that alias its buffer (valid until the handler returns), without
// allocating; false when either has more lines than buf holds.
func negotiation(h *fasthttp.RequestHeader, buf *[2][4]string) (ae, inm []string, ok bool) {
	var got [2][]string
	for i, key := range [2]string{"Accept-Encoding", "If-None-Match"} {
		all := h.PeekAll(key)
		if len(all) > len(buf[i]) {
			return nil, nil, false
		}
		for j, v := range all {
			buf[i][j] = str(v)
		}
		got[i] = buf[i][:len(all)]
	}
	return got[0], got[1], true
}

// method is ctx's request method; a constant for the common ones, without
// allocating (fasthttp's Method makes "GET" of an unset method).
func method(ctx *fasthttp.RequestCtx) string {
	switch {
	case ctx.IsGet():
		return http.MethodGet
	case ctx.IsHead():
		return http.MethodHead
	case ctx.IsOptions():
		return http.MethodOptions
	}
	return str(ctx.Method())
}

// str views b as a string without copying; b must not change while it is used.
func str(b []byte) string { return unsafe.String(unsafe.SliceData(b), len(b)) }

// detached hands h requests whose strings are h's own: the adaptor's request
// (fasthttpadaptor.ConvertRequest) views the connection's buffer, which its next
// request overwrites under any string a handler kept. The copies cost a few
// small allocations on the router's path only. A request route watches the
// client of gets its clientContext (the adaptor's ends at shutdown alone).
func detached(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if cc, ok := r.Context().Value(clientContextKey{}).(*clientContext); ok {
			r = r.WithContext(cc)
		}
		c := *r
		c.Method = strings.Clone(r.Method)
		c.Proto = strings.Clone(r.Proto)
		c.Host = strings.Clone(r.Host)
		c.RequestURI = strings.Clone(r.RequestURI)
		c.URL, _ = url.ParseRequestURI(c.RequestURI) // as the adaptor parsed it, from the copy
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

// unreadable answers a request fasthttp could not parse; the parser's own error,
// which quotes the buffer, stays in the log.
const unreadable = "the request could not be read as HTTP/1.1: send an origin-form request line such as \"GET /v1/weapons HTTP/1.1\", then headers"

// badRequest answers a request fasthttp could not read, in the error envelope, and
// logs why at Info, as the router logs its 4xx.
func (s *Server) badRequest(ctx *fasthttp.RequestCtx, err error) {
	// A connection that never sent a byte (a client's spare one) is closed
	// without an answer, as net/http and nginx do; fasthttp writes whatever
	// this handler leaves, so a write deadline already past keeps it unsent.
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
	case errors.Is(err, os.ErrDeadlineExceeded):
		// Not malformed: too slow (fasthttp's own answer is this 408 too).
		status, msg = http.StatusRequestTimeout, fmt.Sprintf("the request did not arrive whole within %s; send its head, and its body if any, at once", s.http.ReadTimeout)
	}
	sink := fastSink{ctx: ctx}
	router.SetEveryAnswer(sink)
	router.SendError(sink, "", status, msg) // no path of an unreadable request is trusted: the envelope
	s.cfg.Logger.LogAttrs(context.Background(), slog.LevelInfo, "unreadable request",
		slog.String("route", "edge"), slog.Int("status", status), slog.String("err", err.Error()))
}

// setBody makes enc's bytes the body of ctx's answer: by sendfile from the
// segment that stores them, or from the memo's spill file (sp; nil: none),
// when they are big enough; else from memory. An error means the stored
// bytes failed their check; nothing of the body is set.
func (s *Server) setBody(ctx *fasthttp.RequestCtx, enc *representation.Encoded, sp *spill) error {
	if enc.Len() >= s.cfg.SendfileMin && setFileBody(ctx, enc, sp) {
		return nil
	}
	b, err := enc.Read()
	if err != nil {
		return err
	}
	ctx.Response.SetBodyRaw(b)
	return nil
}

// failBody answers 500 for a body whose stored bytes failed their check, as
// the router does (router.BodyFailed).
func (s *Server) failBody(ctx *fasthttp.RequestCtx, err error) {
	path := targetPath(ctx)
	status, msg, id := router.BodyFailed(s.cfg.Logger, err, string(ctx.Method()), path)
	s.internalError(ctx, path, status, msg, id)
}

// recover answers a panic as the router's recovery does (router.Recovered), and
// records it.
func (s *Server) recover(ctx *fasthttp.RequestCtx, start time.Time) {
	if v := recover(); v != nil {
		path := targetPath(ctx)
		status, msg, id := router.Recovered(s.cfg.Logger, v, string(ctx.Method()), path)
		s.internalError(ctx, path, status, msg, id)
		q := router.Request{Method: string(ctx.Method()), Path: path, UserAgent: string(ctx.UserAgent())}
		s.record(ctx, start, &q, "unmatched", status, nil, false)
	}
}

// internalError replaces whatever answer was made with a 500 naming id.
func (s *Server) internalError(ctx *fasthttp.RequestCtx, path string, status int, msg, id string) {
	ctx.Response.Reset()
	ctx.Response.Header.Set("X-Request-Id", id)
	sink := fastSink{ctx: ctx}
	router.SetEveryAnswer(sink)
	router.SendError(sink, path, status, msg)
}

// targetPath is the request target's path as the router has it
// (router.TargetPath), copied: for answers that outlive the request's buffer.
func targetPath(ctx *fasthttp.RequestCtx) string {
	return router.TargetPath(string(ctx.RequestURI()))
}
