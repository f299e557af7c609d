package edge

import (
	"errors"
	"io"
	"net"
	"os"
	"syscall"
)

const canSendfile = true

// sendfile sends n bytes of f from off on c, through the connection's poller:
// when the socket is full it waits as a Write does.
func sendfile(c *net.TCPConn, f *os.File, off, n int64) (int64, error) {
	rc, err := c.SyscallConn()
	if err != nil {
		return 0, err
	}
	fc, err := f.SyscallConn()
	if err != nil {
		return 0, err
	}
	end := off + n
	var serr error
	ferr := fc.Control(func(in uintptr) {
		err = rc.Write(func(out uintptr) bool {
			for off < end {
				w, e := syscall.Sendfile(int(out), int(in), &off, int(end-off))
				switch e {
				case nil:
					if w == 0 {
						serr = io.ErrUnexpectedEOF // the file is shorter than its body
						return true
					}
				case syscall.EINTR:
				case syscall.EAGAIN:
					return false
				default:
					serr = os.NewSyscallError("sendfile", e)
					return true
				}
			}
			return true
		})
	})
	return n - (end - off), errors.Join(ferr, err, serr)
}

// sendMore writes b on c with MSG_MORE: held back until what follows fills a
// segment or is sent without it.
func sendMore(c *net.TCPConn, b []byte) (int, error) {
	rc, err := c.SyscallConn()
	if err != nil {
		return 0, err
	}
	n := 0
	var serr error
	err = rc.Write(func(fd uintptr) bool {
		for n < len(b) {
			w, e := syscall.SendmsgN(int(fd), b[n:], nil, nil, syscall.MSG_MORE)
			switch e {
			case nil:
				n += w
			case syscall.EINTR:
			case syscall.EAGAIN:
				return false
			default:
				serr = os.NewSyscallError("sendmsg", e)
				return true
			}
		}
		return true
	})
	return n, errors.Join(err, serr)
}
