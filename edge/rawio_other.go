//go:build !linux

package edge

import "net"

// newRawSocket: raw system calls are used on Linux only (rawio_linux.go);
// elsewhere a connection reads and writes through net.Conn.
func newRawSocket(net.Conn) socket { return nil }
