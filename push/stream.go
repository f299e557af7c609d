package push

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httputil"
	"strings"
	"time"

	"github.com/refdata/refdata/catalog"
	"github.com/refdata/refdata/edition"
)

const (
	// heartbeat is how often a stream sends a comment, so proxies keep it open.
	heartbeat = 25 * time.Second
	// streamWriteTimeout drops a stream whose client reads nothing.
	streamWriteTimeout = 30 * time.Second
)

var keepAlive = []byte(": keep-alive\n\n")

// Stream sends on w an event for the active version (unless last, the
// client's Last-Event-ID, names it) and one per activation after, a comment
// every heartbeat, until lasting has passed, the client leaves or r's context
// ends. The header fields set on w go with its head.
func (h *Hub) Stream(w http.ResponseWriter, r *http.Request, last string, lasting time.Duration) {
	out, err := openStream(w, r)
	if err != nil {
		return
	}
	defer out.close()
	done := r.Context().Done()
	end := time.NewTimer(lasting)
	defer end.Stop()
	beat := time.NewTicker(heartbeat)
	defer beat.Stop()
	for {
		next := h.wake(streams)
		if ev := h.Event(); !strings.EqualFold(ev.ID, last) {
			if out.write(ev.Bytes) != nil {
				return
			}
			last = ev.ID
		}
		select {
		case <-next:
		case <-beat.C:
			if out.write(keepAlive) != nil {
				return
			}
		case <-end.C:
			return
		case <-done:
			return
		case <-out.gone:
			return
		}
	}
}

// Event is one edition's Server-Sent Event, shared by every stream.
type Event struct {
	ed    *edition.Edition
	ID    string // the edition's manifest ID
	Bytes []byte
}

// Event returns the active edition's event, rendered once per edition.
func (h *Hub) Event() *Event {
	ed := h.repo.Active()
	if e := h.event.Load(); e != nil && e.ed == ed {
		return e
	}
	h.build.Lock()
	defer h.build.Unlock()
	if e := h.event.Load(); e != nil && e.ed == ed {
		return e
	}
	latest, err := h.repo.LatestDiff()
	if err != nil && catalog.ErrorCode(err) != catalog.ENOTFOUND {
		h.logger.Warn("the latest diff cannot be read; the version event goes without it", "manifest_id", ed.ManifestID, "err", err)
	}
	e := &Event{ed: ed, ID: ed.ManifestID, Bytes: edition.Event(ed, latest)}
	h.event.Store(e)
	return e
}

// stream is where a stream's events go: the connection itself when the
// server hands it over, so a stream holds no response buffer and sets its own
// write deadlines; else the ResponseWriter, flushed after each event.
type stream struct {
	w     io.Writer
	flush func() error
	conn  net.Conn
	buf   *bufio.Writer
	gone  chan struct{} // closed when the client closes the connection it handed over
}

// watch closes gone when the connection's reading side ends: the client left,
// or the stream closed it. Whatever the client sends is dropped.
func (s *stream) watch() {
	var b [1]byte
	for {
		if _, err := s.conn.Read(b[:]); err != nil {
			close(s.gone)
			return
		}
	}
}

// openStream writes the answer's head: 200 and the header fields set on w.
func openStream(w http.ResponseWriter, r *http.Request) (*stream, error) {
	rc := http.NewResponseController(w)
	conn, rw, err := rc.Hijack()
	if err != nil {
		w.WriteHeader(http.StatusOK)
		return &stream{w: w, flush: rc.Flush}, rc.Flush()
	}
	out := &stream{w: rw.Writer, flush: rw.Writer.Flush, conn: conn, buf: rw.Writer, gone: make(chan struct{})}
	fmt.Fprintf(rw.Writer, "HTTP/%d.%d 200 OK\r\n", min(r.ProtoMajor, 1), min(r.ProtoMinor, 1))
	h := w.Header().Clone()
	h.Set("Connection", "close")
	if r.ProtoAtLeast(1, 1) {
		h.Set("Transfer-Encoding", "chunked")
		out.w = httputil.NewChunkedWriter(rw.Writer)
	}
	_ = h.Write(rw.Writer)
	rw.Writer.WriteString("\r\n")
	if err := out.write(nil); err != nil {
		_ = conn.Close()
		return nil, err
	}
	_ = conn.SetReadDeadline(time.Time{}) // the server's, for reading the request
	go out.watch()
	return out, nil
}

func (s *stream) write(b []byte) error {
	if s.conn != nil {
		_ = s.conn.SetWriteDeadline(time.Now().Add(streamWriteTimeout))
	}
	if len(b) > 0 {
		if _, err := s.w.Write(b); err != nil {
			return err
		}
	}
	return s.flush()
}

// close ends a stream on a connection it was handed: the last chunk, then
// the connection.
func (s *stream) close() {
	if s.conn == nil {
		return
	}
	if c, ok := s.w.(io.Closer); ok && c.Close() == nil {
		s.buf.WriteString("\r\n")
	}
	_ = s.write(nil)
	_ = s.conn.Close()
}
