//go:build !linux

package edge

import (
	"errors"
	"net"
	"os"
)

const canSendfile = false

func sendfile(*net.TCPConn, *os.File, int64, int64) (int64, error) {
	return 0, errors.ErrUnsupported
}

func sendMore(c *net.TCPConn, b []byte) (int, error) { return c.Write(b) }
