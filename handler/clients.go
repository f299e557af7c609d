package handler

import (
	"net/netip"
	"sync"
)

// perClient counts what each client holds of a bounded resource (held
// requests, recolorings), so one client cannot take all of it: by address, an
// IPv6 one by its /64 (what one host is commonly given). Behind a proxy every
// request comes from the proxy's address: raise the bounds to the server's.
type perClient struct {
	mu sync.Mutex
	n  map[string]int
}

// acquire counts one more for client, or says no when it holds limit already.
// A true return must be paired with release.
func (p *perClient) acquire(client string, limit int) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.n[client] >= limit {
		return false
	}
	if p.n == nil {
		p.n = map[string]int{}
	}
	p.n[client]++
	return true
}

func (p *perClient) release(client string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.n[client]--; p.n[client] <= 0 {
		delete(p.n, client)
	}
}

// clientKey is the client a remote address ("host:port", as net/http's
// Request.RemoteAddr has it) counts as; an address it cannot read is its own.
func clientKey(remoteAddr string) string {
	ap, err := netip.ParseAddrPort(remoteAddr)
	if err != nil {
		return remoteAddr
	}
	a := ap.Addr().Unmap()
	if a.Is6() {
		p, _ := a.Prefix(64)
		return p.String()
	}
	return a.String()
}
