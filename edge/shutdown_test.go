package edge

import (
	"bufio"
	"bytes"
	"context"
	"io"
	"net"
	"net/http"
	"runtime"
	"testing"
	"time"

	"github.com/refdata/refdata/edition"
	"github.com/refdata/refdata/router/apitest"
)

// TestShutdownAnswersKeepAlive: requests a client has sent on keep-alive
// connections when shutdown begins are answered, the last with Connection: close.
func TestShutdownAnswersKeepAlive(t *testing.T) {
	t.Parallel()
	repo := edition.Serve(newest(t))
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	// A grace far longer than any scheduling delay under -race on a busy
	// machine: the test is about which requests are answered, not how fast.
	s := New(Config{Router: testRouter(t, repo), Active: repo.Active, DrainGrace: time.Minute})
	served := make(chan error, 1)
	go func() { served <- s.Serve(ln) }()

	const req = "GET /v1/version HTTP/1.1\r\nHost: x\r\nUser-Agent: t/1\r\n\r\n"
	const n = 8
	readers := make([]*bufio.Reader, n)
	conns := make([]net.Conn, n)
	for i := range readers {
		c, err := net.Dial("tcp", ln.Addr().String())
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		readers[i] = bufio.NewReader(c)
		// One answered request makes the connection idle between requests.
		if _, err := io.WriteString(c, req); err != nil {
			t.Fatal(err)
		}
		res, err := http.ReadResponse(readers[i], nil)
		if err != nil {
			t.Fatal(err)
		}
		_, _ = io.Copy(io.Discard, res.Body)
		conns[i] = c
	}
	// Every connection's server goroutine is waiting for its next request, as
	// on a server that has been idle for a moment (on a busy one a goroutine may
	// still be finishing its answer: that connection closes at shutdown, which
	// is fasthttp's rule and not what this test is about).
	for s.waitingReads() < n {
		runtime.Gosched()
	}
	done := make(chan error, 1)
	go func() { done <- s.Shutdown(context.Background()) }()
	for !s.draining.Load() {
		runtime.Gosched()
	}
	// Shutdown has begun and fasthttp closes idle connections: requests that
	// arrive now are the ones that used to get no answer.
	for _, c := range conns {
		if _, err := io.WriteString(c, req); err != nil {
			t.Fatal(err)
		}
	}
	c := apitest.New(t)
	sent := request("GET", "/v1/version", "User-Agent", "t/1") // req, as the spec's checker reads it
	for i, br := range readers {
		res, err := http.ReadResponse(br, nil)
		if err != nil {
			t.Errorf("connection %d: the request sent before shutdown got no answer: %v", i, err)
			continue
		}
		body, err := io.ReadAll(res.Body)
		res.Body.Close()
		if err != nil {
			t.Errorf("connection %d: %v", i, err)
			continue
		}
		if res.StatusCode != http.StatusOK || !res.Close {
			t.Errorf("connection %d: status %d, Connection %q; want 200 and close", i, res.StatusCode, res.Header.Get("Connection"))
		}
		if !bytes.Equal(body, apitest.JSON(t, repo.Active().VersionBody())) {
			t.Errorf("connection %d: the answer is not /v1/version's body: %.200s", i, body)
		}
		check(t, c, sent, response{res.StatusCode, res.Header, body})
	}
	if err := <-done; err != nil {
		t.Errorf("shutdown: %v", err)
	}
	if err := <-served; err != nil {
		t.Errorf("serve: %v", err)
	}
}

// TestDrainConnClose: while draining, a close of a connection that is waiting
// for a request, or holds one it has not answered, leaves the socket open for
// the answer; any other close shuts it at once. The unanswered case is the
// moment between a request's bytes being read and fasthttp marking the
// connection active, when fasthttp's idle close used to drop the request.
func TestDrainConnClose(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name     string
		draining bool
		// before Close: "" nothing, "read" bytes read, "answered" bytes read
		// and an answer written, "waiting" a Read blocked for the next request.
		state    string
		wantOpen bool
	}{
		{"not draining, unanswered", false, "read", false},
		{"draining, nothing read", true, "", false},
		{"draining, request unanswered", true, "read", true},
		{"draining, request answered", true, "answered", false},
		{"draining, waiting for a request", true, "waiting", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			server, client := tcpPair(t)
			s := &Server{cfg: Config{DrainGrace: time.Minute}}
			dc := &drainConn{Conn: server, s: s}
			defer dc.close()
			buf := make([]byte, 64)
			read := make(chan error, 1)
			switch tc.state {
			case "read", "answered":
				if _, err := io.WriteString(client, "GET"); err != nil {
					t.Fatal(err)
				}
				if _, err := dc.Read(buf); err != nil {
					t.Fatal(err)
				}
				if tc.state == "answered" {
					if _, err := io.WriteString(dc, "HTTP/1.1 200 OK\r\n"); err != nil {
						t.Fatal(err)
					}
				}
			case "waiting":
				go func() { _, err := dc.Read(buf); read <- err }()
				for dc.reading.Load() == 0 {
					runtime.Gosched()
				}
			}
			s.draining.Store(tc.draining)
			_ = dc.Close()
			// The socket is open if the server side can still write to it.
			_, err := dc.Conn.Write([]byte("x"))
			if open := err == nil; open != tc.wantOpen {
				t.Fatalf("after Close: open %v (write: %v), want %v", open, err, tc.wantOpen)
			}
			if tc.state == "waiting" {
				// The request sent now is still read.
				if _, err := io.WriteString(client, "GET"); err != nil {
					t.Fatal(err)
				}
				if err := <-read; err != nil {
					t.Fatalf("read after a graced close: %v", err)
				}
			}
		})
	}
}

// tcpPair returns the two ends of a loopback TCP connection.
func tcpPair(t *testing.T) (server, client net.Conn) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	client, err = net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = client.Close() })
	server, err = ln.Accept()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = server.Close() })
	return server, client
}
