package edge

// Contract tests: each holds fasthttp (the version go.mod pins) to one
// behaviour the edge relies on that fasthttp does not document, so an upgrade
// that changes it fails here, naming the assumption, rather than degrading
// the edge quietly (a body copied instead of sent by sendfile, an error
// answer on a spare connection, a spill file never closed). Each runs
// fasthttp configured as New configures it.

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os/exec"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/valyala/fasthttp"
	"github.com/valyala/fasthttp/fasthttpadaptor"
)

// contractVersion is the fasthttp these contracts were checked against; an
// upgrade changes it here, once they pass, and in go.mod.
const contractVersion = "v1.74.0"

// TestFasthttpVersion: the module's build selects the fasthttp version the
// contracts were checked against, not replaced (a dependency's requirement
// could raise go.mod's).
func TestFasthttpVersion(t *testing.T) {
	t.Parallel()
	out, err := exec.Command("go", "list", "-m", "-f", "{{.Version}} {{.Replace}}", "github.com/valyala/fasthttp").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	if got := strings.TrimSpace(string(out)); got != contractVersion+" <nil>" {
		t.Errorf("fasthttp %s; the contracts were checked against %s", got, contractVersion)
	}
}

// recordingConn is a connection a contractListener handed out: it keeps what
// was written to it, counts the Reads in progress and its Close calls;
// keepOpen, when it says so, makes Close leave the socket open (as drainConn
// does while draining).
type recordingConn struct {
	net.Conn
	mu       sync.Mutex
	written  bytes.Buffer
	reading  atomic.Int32
	closes   atomic.Int32
	closed   chan struct{} // closed at the first Close
	keepOpen func(*recordingConn) bool
}

func (c *recordingConn) Read(b []byte) (int, error) {
	c.reading.Add(1)
	defer c.reading.Add(-1)
	return c.Conn.Read(b)
}

func (c *recordingConn) Write(b []byte) (int, error) {
	c.mu.Lock()
	c.written.Write(b)
	c.mu.Unlock()
	return c.Conn.Write(b)
}

func (c *recordingConn) Written() []byte {
	c.mu.Lock()
	defer c.mu.Unlock()
	return bytes.Clone(c.written.Bytes())
}

func (c *recordingConn) Close() error {
	if c.closes.Add(1) == 1 {
		close(c.closed)
	}
	if c.keepOpen != nil && c.keepOpen(c) {
		return nil
	}
	return c.Conn.Close()
}

type contractListener struct {
	net.Listener
	keepOpen func(*recordingConn) bool
	conns    chan *recordingConn
}

func (l *contractListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	rc := &recordingConn{Conn: c, closed: make(chan struct{}), keepOpen: l.keepOpen}
	select {
	case l.conns <- rc:
	default: // the test does not look at this one
	}
	return rc, nil
}

// contractServer serves h (errors: eh; nil for fasthttp's own) with the
// fasthttp settings New uses, on a listener whose connections are sent on
// the returned channel (the first 16). keepOpen is recordingConn's.
func contractServer(t *testing.T, h fasthttp.RequestHandler, eh func(*fasthttp.RequestCtx, error), keepOpen func(*recordingConn) bool, tune ...func(*fasthttp.Server)) (*fasthttp.Server, string, <-chan *recordingConn) {
	t.Helper()
	srv := New(Config{Router: http.NotFoundHandler()}).http
	srv.Handler, srv.ErrorHandler = h, eh
	for _, f := range tune {
		f(srv)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	cl := &contractListener{Listener: ln, keepOpen: keepOpen, conns: make(chan *recordingConn, 16)}
	go func() { _ = srv.Serve(cl) }()
	t.Cleanup(func() { _ = srv.Shutdown() })
	return srv, ln.Addr().String(), cl.conns
}

// exchange sends raw on a new connection and returns the answer read; when
// the answer closes the connection, it returns once the server has closed it
// (and so is done with the request).
func exchange(t *testing.T, addr, raw string) (*http.Response, []byte) {
	t.Helper()
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(time.Minute))
	if _, err := io.WriteString(c, raw); err != nil {
		t.Fatal(err)
	}
	br := bufio.NewReader(c)
	res, err := http.ReadResponse(br, &http.Request{Method: strings.Fields(raw)[0]})
	if err != nil {
		t.Fatalf("%q: %v", raw, err)
	}
	body, err := io.ReadAll(res.Body)
	if err != nil {
		t.Fatalf("%q: body: %v", raw, err)
	}
	if res.Close {
		if rest, err := io.ReadAll(br); err != nil || len(rest) > 0 {
			t.Fatalf("%q: after the answer %q, %v; want the connection closed", raw, rest, err)
		}
	}
	return res, body
}

// writerToBody is a body stream fasthttp may send by WriteTo (as fileBody).
type writerToBody struct {
	body    []byte
	atWrite func(w io.Writer) error // called with WriteTo's writer first
	calls   atomic.Int32
	close   atomic.Int32
}

func (b *writerToBody) Read([]byte) (int, error) {
	return 0, errors.New("Read called: WriteTo was not")
}
func (b *writerToBody) SupportsBodyWriteTo() bool { return true }
func (b *writerToBody) Close() error              { b.close.Add(1); return nil }
func (b *writerToBody) WriteTo(w io.Writer) (int64, error) {
	b.calls.Add(1)
	if err := b.atWrite(w); err != nil {
		return 0, err
	}
	n, err := w.Write(b.body)
	return int64(n), err
}

// TestFasthttpWriteToGetsTheConnectionsWriter (spill.go, fileBody.WriteTo): a
// body stream that supports WriteTo is written by one WriteTo call given the
// connection's own *bufio.Writer, which holds the answer's head, unsent:
// flushing it puts the head, whole, on the connection the listener handed
// out. fileBody flushes the head with MSG_MORE and sends the body from the
// file on that connection's socket; any other writer would make it copy.
func TestFasthttpWriteToGetsTheConnectionsWriter(t *testing.T) {
	t.Parallel()
	type seen struct {
		isBufio       bool
		buffered      int
		before, after []byte
	}
	var conn atomic.Pointer[recordingConn]
	seenAt := make(chan seen, 2)
	body := &writerToBody{body: []byte(`{"status":200,"data":"the body"}`)}
	body.atWrite = func(w io.Writer) error {
		bw, ok := w.(*bufio.Writer)
		if !ok {
			seenAt <- seen{}
			return nil
		}
		got := seen{isBufio: true, buffered: bw.Buffered(), before: conn.Load().Written()}
		err := bw.Flush()
		got.after = conn.Load().Written()
		seenAt <- got
		return err
	}
	_, addr, _ := contractServer(t, func(ctx *fasthttp.RequestCtx) {
		conn.Store(ctx.Conn().(*recordingConn))
		ctx.Response.Header.Set("Content-Type", "application/json")
		ctx.Response.SetBodyStream(body, len(body.body))
	}, nil, nil)
	res, b := exchange(t, addr, "GET / HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
	if res.StatusCode != 200 || !bytes.Equal(b, body.body) || res.ContentLength != int64(len(body.body)) {
		t.Fatalf("answer %d, Content-Length %d, body %q", res.StatusCode, res.ContentLength, b)
	}
	got := <-seenAt
	if body.calls.Load() != 1 || !got.isBufio {
		t.Fatalf("WriteTo called %d times, with a *bufio.Writer: %v; want once, with one", body.calls.Load(), got.isBufio)
	}
	head, rest, whole := bytes.Cut(got.after, []byte("\r\n\r\n"))
	if len(got.before) != 0 || got.buffered == 0 || !whole || len(rest) != 0 || !bytes.HasPrefix(head, []byte("HTTP/1.1 200 OK\r\n")) || len(head)+4 != got.buffered {
		t.Errorf("at WriteTo the connection had %q; the writer held %d bytes, which the flush put on it: %q; want nothing, then the head alone", got.before, got.buffered, got.after)
	}
}

// TestFasthttpClosesEveryBodyStream (spill.go, fileBody.Close): a body
// stream set on an answer is closed exactly once, whether its bytes were sent
// (GET), never sent (HEAD), or replaced before the answer was written (the
// edge resets an answer the adaptor failed): the spill file counts its bodies
// in flight by these closes.
func TestFasthttpClosesEveryBodyStream(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, method string
		replace      func(*fasthttp.RequestCtx)
		wantBody     string
	}{
		{"sent", "GET", nil, "body"},
		{"HEAD: not sent", "HEAD", nil, ""},
		{"reset", "GET", func(ctx *fasthttp.RequestCtx) { ctx.Response.Reset(); ctx.SetBodyString("other") }, "other"},
		{"replaced", "GET", func(ctx *fasthttp.RequestCtx) { ctx.Response.SetBodyRaw([]byte("other")) }, "other"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			body := &writerToBody{body: []byte("body"), atWrite: func(io.Writer) error { return nil }}
			_, addr, _ := contractServer(t, func(ctx *fasthttp.RequestCtx) {
				ctx.Response.SetBodyStream(body, len(body.body))
				if tc.replace != nil {
					tc.replace(ctx)
				}
			}, nil, nil)
			// Connection: close: exchange returns once the server has
			// closed the connection, done with the request.
			res, b := exchange(t, addr, tc.method+" / HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
			if res.StatusCode != 200 || string(b) != tc.wantBody {
				t.Fatalf("answer %d %q, want 200 %q", res.StatusCode, b, tc.wantBody)
			}
			if n := body.close.Load(); n != 1 {
				t.Errorf("the body stream was closed %d times, want once", n)
			}
		})
	}
}

// TestFasthttpConnIsTheListeners (setFileBody, badRequest, watchClient):
// ctx.Conn() is the very net.Conn the listener's Accept returned, in the
// handler and in the ErrorHandler: the edge reaches its drainConn, and the
// socket beneath it, through it.
func TestFasthttpConnIsTheListeners(t *testing.T) {
	t.Parallel()
	seen := make(chan net.Conn, 2)
	_, addr, conns := contractServer(t, func(ctx *fasthttp.RequestCtx) { seen <- ctx.Conn() },
		func(ctx *fasthttp.RequestCtx, _ error) { seen <- ctx.Conn() }, nil)
	for _, raw := range []string{"GET / HTTP/1.1\r\nHost: x\r\n\r\n", "GET / HTTP/1.1\r\nHost: x\r\nbroken\r\n\r\n"} {
		exchange(t, addr, raw)
		accepted, handled := <-conns, <-seen
		if c, ok := handled.(*recordingConn); !ok || c != accepted {
			t.Errorf("%q: ctx.Conn() is a %T, not the listener's connection", raw, handled)
		}
	}
}

// TestFasthttpAdaptorFailure (route): a request fasthttp reads but net/url
// cannot parse into a net/http request is answered by the adaptor itself,
// 500 with a text/plain body, without calling the handler: the edge takes
// exactly that pair for the adaptor's failure, and answers 400 instead.
// (This target the edge refuses before routing, for its escape; the absolute
// forms net/url refuses, fasthttp now refuses as it reads them.)
func TestFasthttpAdaptorFailure(t *testing.T) {
	t.Parallel()
	var called atomic.Bool
	adapted := fasthttpadaptor.NewFastHTTPHandler(http.HandlerFunc(func(http.ResponseWriter, *http.Request) { called.Store(true) }))
	type answer struct {
		status      int
		contentType string
	}
	answered := make(chan answer, 1)
	_, addr, _ := contractServer(t, func(ctx *fasthttp.RequestCtx) {
		adapted(ctx)
		answered <- answer{ctx.Response.StatusCode(), string(ctx.Response.Header.ContentType())}
	}, nil, nil)
	exchange(t, addr, "GET http://a/%zz HTTP/1.1\r\nHost: x\r\n\r\n")
	a := <-answered
	status, contentType := a.status, a.contentType
	if called.Load() || status != fasthttp.StatusInternalServerError || !strings.HasPrefix(contentType, string(vText)) {
		t.Errorf("handler called %v; the adaptor answered %d %q; want it uncalled and 500 %s", called.Load(), status, contentType, vText)
	}
}

// TestFasthttpAdaptorRequestContext (route, detached, handler.DescribeKey): the
// adaptor's net/http request has the RequestCtx's user values as its
// context's values, and the adaptor returns only once the handler has (what
// it wrote before returning is there): the handler describes its answer
// through a user value, which the edge reads after the adaptor returns.
func TestFasthttpAdaptorRequestContext(t *testing.T) {
	t.Parallel()
	type key struct{}
	adapted := fasthttpadaptor.NewFastHTTPHandler(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if p, ok := r.Context().Value(key{}).(*string); ok {
			*p = "described"
		}
		fmt.Fprint(w, "ok")
	}))
	got := make(chan string, 1)
	_, addr, _ := contractServer(t, func(ctx *fasthttp.RequestCtx) {
		var d string
		ctx.SetUserValue(key{}, &d)
		adapted(ctx)
		got <- d // read here, as the edge reads its Description: -race checks the order
	}, nil, nil)
	exchange(t, addr, "GET /v1/version HTTP/1.1\r\nHost: x\r\n\r\n")
	if d := <-got; d != "described" {
		t.Errorf("after the adaptor returned the description is %q, want the handler's", d)
	}
}

// TestFasthttpPastWriteDeadlineSuppressesTheAnswer (badRequest): a
// connection that sends nothing before the read timeout gets no byte. Under
// New's settings fasthttp closes it without calling the ErrorHandler; where
// it calls it (as without ReduceMemoryUsage), it writes whatever answer the
// handler left (the control: an empty 200), unless the handler set the
// connection's write deadline in the past: then nothing is written, which is
// how badRequest keeps a spare connection silent.
func TestFasthttpPastWriteDeadlineSuppressesTheAnswer(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name                string
		reduceMemory        bool // New's setting
		deadline, wantBytes bool
	}{
		{"New's settings: closed without a byte", true, true, false},
		{"control: the handler's answer is written", false, false, true},
		{"past write deadline: nothing written", false, true, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			called := make(chan error, 1)
			_, addr, _ := contractServer(t, func(*fasthttp.RequestCtx) {}, func(ctx *fasthttp.RequestCtx, err error) {
				if tc.deadline {
					_ = ctx.Conn().SetWriteDeadline(time.Now())
				}
				called <- err
			}, nil, func(s *fasthttp.Server) { s.ReadTimeout, s.ReduceMemoryUsage = 50*time.Millisecond, tc.reduceMemory })
			c, err := net.Dial("tcp", addr)
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			_ = c.SetReadDeadline(time.Now().Add(time.Minute))
			raw, err := io.ReadAll(c)
			if err != nil {
				t.Fatal(err)
			}
			if got := len(raw) > 0; got != tc.wantBytes || got && !bytes.HasPrefix(raw, []byte("HTTP/1.1 ")) {
				t.Errorf("the connection got %q; want an answer: %v", raw, tc.wantBytes)
			}
			if tc.reduceMemory {
				return // the ErrorHandler may or may not be called
			}
			select {
			case <-called:
			case <-time.After(time.Minute):
				t.Error("the ErrorHandler was not called for the read timeout")
			}
		})
	}
}

// TestFasthttpShutdownClosesIdleFromOutside (drainListener, drainConn.Close):
// Shutdown ends a keep-alive connection whose goroutine waits in Read for its
// next request by calling its Close from another goroutine; when that Close
// leaves the socket open, the goroutine still reads the request that arrives
// and answers it, with Connection: close. drainConn turns that Close into a
// grace for a request already on its way.
func TestFasthttpShutdownClosesIdleFromOutside(t *testing.T) {
	t.Parallel()
	var shutting, graced atomic.Bool
	srv, addr, conns := contractServer(t, func(ctx *fasthttp.RequestCtx) { ctx.SetBodyString("ok") }, nil,
		func(c *recordingConn) bool {
			return shutting.Load() && c.reading.Load() > 0 && graced.CompareAndSwap(false, true)
		})
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(time.Minute))
	br := bufio.NewReader(c)
	ask := func() *http.Response {
		t.Helper()
		if _, err := io.WriteString(c, "GET / HTTP/1.1\r\nHost: x\r\n\r\n"); err != nil {
			t.Fatal(err)
		}
		res, err := http.ReadResponse(br, nil)
		if err != nil {
			t.Fatal(err)
		}
		_, _ = io.Copy(io.Discard, res.Body)
		return res
	}
	if res := ask(); res.StatusCode != 200 || res.Close {
		t.Fatalf("first answer %d, close %v", res.StatusCode, res.Close)
	}
	conn := <-conns
	for conn.reading.Load() == 0 {
		runtime.Gosched() // until the connection waits for its next request
	}
	shutting.Store(true)
	done := make(chan error, 1)
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		done <- srv.ShutdownWithContext(ctx)
	}()
	select {
	case <-conn.closed:
	case <-time.After(time.Minute):
		t.Fatal("Shutdown did not close the idle connection")
	}
	if !graced.Load() {
		t.Fatal("Shutdown closed the connection while it was not waiting in Read")
	}
	if res := ask(); res.StatusCode != 200 || !res.Close {
		t.Errorf("the request sent after Shutdown's close: %d, Connection: close %v; want 200 and close", res.StatusCode, res.Close)
	}
	if err := <-done; err != nil {
		t.Errorf("Shutdown: %v", err)
	}
}

// TestFasthttpRawHeadersKeepTransferEncoding (framedByTE, router.Policy): a
// request framed by Transfer-Encoding reaches the handler, its chunked body
// read, with the field still in RawHeaders, where the edge looks for it.
func TestFasthttpRawHeadersKeepTransferEncoding(t *testing.T) {
	t.Parallel()
	found := make(chan bool, 1)
	_, addr, _ := contractServer(t, func(ctx *fasthttp.RequestCtx) { found <- framedByTE(ctx.Request.Header.RawHeaders()) }, nil, nil)
	exchange(t, addr, "GET / HTTP/1.1\r\nHost: x\r\nContent-Length: 3\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n")
	if !<-found {
		t.Error("the handler's RawHeaders lack the Transfer-Encoding field")
	}
}

// TestFasthttpReadErrors (badRequest): the ErrorHandler learns a header over
// ReadBufferSize as a *fasthttp.ErrSmallBuffer and a body over
// MaxRequestBodySize as fasthttp.ErrBodyTooLarge, which the edge answers 431
// and 413.
func TestFasthttpReadErrors(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, raw string
		is        func(error) bool
	}{
		{"header over ReadBufferSize", "GET / HTTP/1.1\r\nHost: x\r\nX-Big: " + strings.Repeat("a", maxHeaderBytes) + "\r\n\r\n",
			func(err error) bool { var small *fasthttp.ErrSmallBuffer; return errors.As(err, &small) }},
		{"body over MaxRequestBodySize", fmt.Sprintf("POST / HTTP/1.1\r\nHost: x\r\nContent-Length: %d\r\n\r\n", maxBodyBytes+1) + strings.Repeat("a", maxBodyBytes+1),
			func(err error) bool { return errors.Is(err, fasthttp.ErrBodyTooLarge) }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			got := make(chan error, 1)
			_, addr, _ := contractServer(t, func(*fasthttp.RequestCtx) {}, func(ctx *fasthttp.RequestCtx, err error) { got <- err }, nil)
			c, err := net.Dial("tcp", addr)
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			// The server answers before it has read all: it may reset
			// the connection under the writer.
			go func() { _, _ = io.WriteString(c, tc.raw) }()
			select {
			case err := <-got:
				if !tc.is(err) {
					t.Errorf("the ErrorHandler got %T %v", err, err)
				}
			case <-time.After(time.Minute):
				t.Error("the ErrorHandler was not called")
			}
		})
	}
}
