package edge

import (
	"bufio"
	"io"
	"runtime"

	"github.com/refdata/refdata/representation"
)

// Gathered writes: an answer whose body is an edition's and large leaves in one writev of
// the head fasthttp wrote into its buffer and the edition's own bytes, instead
// of being copied into the 64 KiB write buffer behind the head and sent in as
// many writes as it fills. On a ~120 KB gzip list the copy was 15 % of the
// serving CPU and the answer took two writes (BENCHMARKS.md § Stop 46).
//
// fasthttp has no writev of its own: it hands a body stream (SetBodyStream)
// its buffered writer. The stream (gathered) flushes that writer into its
// connection, which keeps the flushed bytes instead of writing them
// (drainConn.hold), and then writes them and the body together.
//
// A representation that is in the body file (representation.Encoded.InFile:
// the compressed lists) leaves as nginx sends a static file: its head in one
// write, then its body with sendfile from the file's pages, not copied from
// the heap (rawSocket.Sendfile; BENCHMARKS.md § Stop 50).

// gatherFrom is the smallest body written so: one that does not fit the
// write buffer with its head, so that it was copied and sent in two writes
// or more. A smaller body leaves in one write already, and its copy costs no
// more than the stream's bookkeeping: the 29 KB weapon served no faster
// gathered (§ Stop 46).
const gatherFrom = writeBuffer

// gathered is a body stream that writes an edition's body with its head.
// Each connection has one (drainConn.body), reused by its answers, which a
// connection writes one at a time.
type gathered struct {
	c *drainConn
	// rep is the representation written: holding it holds its range of the
	// body file until the last byte is sent.
	rep  *representation.Encoded
	body []byte // rep's bytes; nil once written or closed
}

// Read serves fasthttp if it ever reads the stream rather than calling
// WriteTo (it does not for a body of known length).
func (g *gathered) Read(p []byte) (int, error) {
	if len(g.body) == 0 {
		return 0, io.EOF
	}
	n := copy(p, g.body)
	g.body = g.body[n:]
	return n, nil
}

// SupportsBodyWriteTo lets fasthttp call WriteTo (fasthttp.BodyWriterTo).
func (g *gathered) SupportsBodyWriteTo() bool { return true }

// WriteTo writes the head w holds and the body: in one writev, or the head
// and then the body from the body file when it is there.
func (g *gathered) WriteTo(w io.Writer) (int64, error) {
	body, rep := g.body, g.rep
	g.body, g.rep = nil, nil
	bw, ok := w.(*bufio.Writer)
	if !ok {
		n, err := w.Write(body)
		return int64(n), err
	}
	g.c.hold = true
	err := bw.Flush() // into g.c.held, not onto the wire
	g.c.hold = false
	head := g.c.held
	g.c.held = nil
	if err != nil {
		return 0, err
	}
	var n int64
	if fs, ok := g.c.sock.(fileSender); ok {
		if fd, off, ok := rep.InFile(); ok {
			n, err = fs.Sendfile(head, fd, off, len(body))
			// The range is rep's: freed once rep is unreachable, which
			// it would be during the send without this.
			runtime.KeepAlive(rep)
			g.c.answered()
			return max(n-int64(len(head)), 0), err
		}
	}
	n, err = g.c.writev(head, body)
	return max(n-int64(len(head)), 0), err
}

// Close lets the body go: fasthttp closes the stream when the answer is
// written or reset, and a connection that waits for its next request must not
// keep a previous edition's bytes.
func (g *gathered) Close() error {
	g.body, g.rep = nil, nil
	return nil
}

// writev writes head and body with one system call where the connection
// takes one (a TCP connection: writev).
func (c *drainConn) writev(head, body []byte) (int64, error) {
	n, err := c.sock.Writev(head, body)
	c.answered()
	return n, err
}
