//go:build !linux

package edge

import "net"

// watchClient: only Linux tells a held request's client has gone
// (gone_linux.go); elsewhere a held request lasts its wait.
func watchClient(net.Conn, func()) (stop func()) { return func() {} }
