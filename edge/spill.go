package edge

import (
	"bufio"
	"io"
	"net"
	"os"
	"sync"

	"github.com/valyala/fasthttp"

	"github.com/refdata/refdata/representation"
)

// DefaultSendfileMin is the smallest answer sent by sendfile: blob.AlignFrom,
// from which an import places blobs at page boundaries in their segments.
const DefaultSendfileMin = 16 << 10

// pageSize: bodies are sent by sendfile from a page boundary (spill).
var pageSize = int64(os.Getpagesize())

// spill is a memo's copy of its big bodies that no segment file holds at a
// page boundary (an identity decompressed from its gzip, an edition built in
// memory, a blob that starts mid-page in a segment written before blobs were
// aligned) in an unlinked temporary file, each body at a page boundary, so an
// answer leaves by sendfile(2) from the page cache instead of a copy from the
// heap: it pays on the big lists under the fair protocol (BENCHMARKS.md). A
// body sent from mid-page, its head sent with MSG_MORE, cost 1.6× the CPU of
// the same body from a page boundary (the gzipped /v1/weapons: 27k against 44k
// answers a second on one core). Without a writable temporary directory, or
// off Linux, bodies are written as the small ones are. Once its memo is
// retired (another edition is served) the file is closed as soon as no body is
// being sent from it, rather than whenever the garbage collector finds it: an
// edition's spill can be hundreds of MB of tmpfs or page cache.
type spill struct {
	mu     sync.Mutex
	f      *os.File
	end    int64
	failed bool
	at     map[*representation.Encoded]int64
	// sending counts the bodies placed and not yet sent (fileBody.Close);
	// retired: no body is placed any more, and f closes when sending is 0.
	sending int
	retired bool
}

// place returns the file holding enc's bytes and their offset, copying them
// there on first use. Each body placed must be let go of by done once sent.
func (s *spill) place(enc *representation.Encoded) (*os.File, int64, bool) {
	if !canSendfile {
		return nil, 0, false
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.retired {
		return nil, 0, false // the caller writes it from memory
	}
	if off, ok := s.at[enc]; ok {
		s.sending++
		return s.f, off, true
	}
	if s.failed {
		return nil, 0, false
	}
	b, err := enc.Read()
	if err != nil {
		return nil, 0, false // the caller reads it again and answers the error
	}
	if s.f == nil {
		f, err := os.CreateTemp("", "refdata-bodies-")
		if err == nil {
			err = os.Remove(f.Name())
		}
		if err != nil {
			s.failed = true
			return nil, 0, false
		}
		s.f, s.at = f, map[*representation.Encoded]int64{}
	}
	off := (s.end + pageSize - 1) &^ (pageSize - 1)
	if _, err := s.f.WriteAt(b, off); err != nil {
		s.failed = true
		return nil, 0, false
	}
	s.at[enc] = off
	s.end = off + int64(len(b))
	s.sending++
	return s.f, off, true
}

// done lets go of a body place returned.
func (s *spill) done() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.sending--
	s.closeIfIdle()
}

// retire stops placing bodies; the file closes once the last one placed has
// been sent.
func (s *spill) retire() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.retired = true
	s.closeIfIdle()
}

func (s *spill) closeIfIdle() {
	if s.retired && s.sending == 0 && s.f != nil {
		_ = s.f.Close() // unlinked: nothing of it is lost
		s.f, s.at = nil, nil
	}
}

// fileBody is an answer's body in a spill file: fasthttp writes the head, then
// WriteTo sends the bytes with sendfile(2) on the connection's socket.
type fileBody struct {
	io.SectionReader // the body's bytes in a segment or the spill file
	dc               *drainConn
	conn             *net.TCPConn // dc's socket
	sp               *spill       // the spill file's, let go of at Close; nil: a segment's
}

var fileBodies = sync.Pool{New: func() any { return new(fileBody) }}

// setFileBody makes enc's bytes the body of ctx's answer, sent by sendfile
// when the connection is a TCP socket: from the segment file that stores
// them (once they passed their check) when they start at a page boundary or
// there is no spill file sp, else from sp; false leaves the body to the
// caller.
func setFileBody(ctx *fasthttp.RequestCtx, enc *representation.Encoded, sp *spill) bool {
	if !canSendfile {
		return false
	}
	dc, ok := ctx.Conn().(*drainConn)
	if !ok {
		return false
	}
	tc, ok := dc.Conn.(*net.TCPConn)
	if !ok {
		return false
	}
	f, off, n, ok := enc.Blob()
	placed := (*spill)(nil)
	switch {
	case ok && (off%pageSize == 0 || sp == nil):
		if enc.Check() != nil {
			return false // the caller reads it, and answers the error
		}
	case sp != nil: // not stored, or from mid-page: a copy at a page boundary
		if f, off, ok = sp.place(enc); !ok {
			return false
		}
		n, placed = enc.Len(), sp
	default:
		return false
	}
	b := fileBodies.Get().(*fileBody)
	*b = fileBody{SectionReader: *io.NewSectionReader(f, off, int64(n)), dc: dc, conn: tc, sp: placed}
	ctx.Response.SetBodyStream(b, n)
	return true
}

// SupportsBodyWriteTo tells fasthttp to call WriteTo with its buffered writer.
func (b *fileBody) SupportsBodyWriteTo() bool { return true }

func (b *fileBody) WriteTo(w io.Writer) (int64, error) {
	bw, ok := w.(*bufio.Writer)
	if !ok {
		return io.Copy(w, &b.SectionReader) // not the connection's writer: fasthttp's fallbacks
	}
	// The head leaves with MSG_MORE: the kernel holds it for the body's first
	// segment, one packet as a single write would have sent.
	b.dc.more = true
	err := bw.Flush()
	b.dc.more = false
	if err != nil {
		return 0, err
	}
	f, off, n := b.Outer()
	b.dc.s.sendfiles.Add(1) // before the bytes leave: a client that has them sees it counted
	return sendfile(b.conn, f.(*os.File), off, n)
}

// Close lets go of the spill file and returns the body to its pool once
// fasthttp has sent it, or dropped it unsent (Response.ResetBody).
func (b *fileBody) Close() error {
	if b.sp != nil {
		b.sp.done()
	}
	*b = fileBody{}
	fileBodies.Put(b)
	return nil
}
