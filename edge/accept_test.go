package edge

import (
	"context"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"sync/atomic"
	"syscall"
	"testing"

	"github.com/refdata/refdata/edition"
	"github.com/refdata/refdata/router/apitest"
)

// failingListener fails its first fails Accepts with err, as the kernel does
// when the process is out of file descriptors (a client opening connections
// by the thousand) or a client resets a connection still in the backlog.
type failingListener struct {
	net.Listener
	err   error
	fails atomic.Int32
}

func (l *failingListener) Accept() (net.Conn, error) {
	if l.fails.Add(-1) >= 0 {
		return nil, &net.OpError{Op: "accept", Net: "tcp", Addr: l.Addr(), Err: os.NewSyscallError("accept4", l.err)}
	}
	return l.Listener.Accept()
}

// TestAcceptErrorsPass: an accept that fails for want of resources or for a
// connection its client already reset does not stop the server (fasthttp's
// Serve returns on any accept error but a timeout, and the process would
// exit: a client holding some 20,000 idle connections brought it down); it
// waits and accepts again, as net/http does, and answers once it can.
func TestAcceptErrorsPass(t *testing.T) {
	t.Parallel()
	repo := edition.Serve(newest(t))
	for _, errno := range []syscall.Errno{syscall.EMFILE, syscall.ENFILE, syscall.ENOBUFS, syscall.ENOMEM, syscall.ECONNABORTED} {
		t.Run(errno.Error(), func(t *testing.T) {
			t.Parallel()
			ln, err := net.Listen("tcp", "127.0.0.1:0")
			if err != nil {
				t.Fatal(err)
			}
			fl := &failingListener{Listener: ln, err: errno}
			fl.fails.Store(3)
			h := &harness{es: New(Config{Router: testRouter(t, repo), Active: repo.Active}), addr: ln.Addr().String(), c: apitest.New(t),
				client: &http.Client{Transport: &http.Transport{DisableCompression: true}}}
			served := make(chan error, 1)
			go func() { served <- h.es.Serve(fl) }()
			t.Cleanup(func() {
				h.client.CloseIdleConnections()
				_ = h.es.Shutdown(context.Background())
			})
			req := httptest.NewRequest("GET", "/v1/version", nil)
			req.Header.Set("User-Agent", "t/1")
			type answer struct {
				res response
				err error
			}
			got := make(chan answer, 1)
			go func() {
				res, err := h.client.Do(withUA(http.NewRequest("GET", "http://"+h.addr+"/v1/version", nil)))
				if err != nil {
					got <- answer{err: err}
					return
				}
				defer res.Body.Close()
				body, err := io.ReadAll(res.Body)
				res.Header.Del("Date")
				got <- answer{response{res.StatusCode, res.Header, body}, err}
			}()
			select {
			case err := <-served:
				t.Errorf("Serve returned at an accept error: %v", err)
				ln.Close() // the request waiting in the backlog fails
				<-got
			case a := <-got:
				if a.err != nil {
					t.Fatal(a.err)
				}
				check(t, h.c, req, a.res)
				if a.res.status != http.StatusOK {
					t.Errorf("status %d after the accept errors: %s", a.res.status, a.res.body)
				}
			}
		})
	}
}

func withUA(req *http.Request, err error) *http.Request {
	if err != nil {
		panic(err)
	}
	req.Header.Set("User-Agent", "t/1")
	return req
}
