package edge

import "net"

// socket reads and writes a connection's bytes: a rawSocket (rawio_linux.go)
// for a TCP connection where the platform has one, a netSocket for any other.
type socket interface {
	Read(b []byte) (int, error)
	// Write writes all of b, or returns why not.
	Write(b []byte) (int, error)
	// Writev writes head and then body, in one system call where it can, and
	// keeps neither once it returns.
	Writev(head, body []byte) (int64, error)
}

func newSocket(c net.Conn) socket {
	if s := newRawSocket(c); s != nil {
		return s
	}
	return &netSocket{Conn: c}
}

// fileSender is a socket that sends a file's bytes with sendfile
// (rawSocket on Linux).
type fileSender interface {
	// Sendfile writes head, then n bytes of the file fd from off, and keeps
	// neither once it returns; it returns the bytes written of both.
	Sendfile(head []byte, fd int, off int64, n int) (int64, error)
}

// netSocket reads and writes through net.Conn; a TCP connection's
// net.Buffers write is one writev.
type netSocket struct {
	net.Conn
	// iov and bufs are the writev's buffers, kept here so that it does not
	// allocate them.
	iov  [2][]byte
	bufs net.Buffers
}

func (s *netSocket) Writev(head, body []byte) (int64, error) {
	s.iov[0], s.iov[1] = head, body
	s.bufs = s.iov[:]
	n, err := s.bufs.WriteTo(s.Conn)
	s.iov[0], s.iov[1] = nil, nil
	s.bufs = nil
	return n, err
}
