package upstream

import (
	"errors"
	"fmt"
	"net"
	"net/url"
	"sync"
)

// HostBreaker stops GetURL fetching from a host no connection could be made
// to Limit times in a row: its name did not resolve, or no address of it
// took the connection (refused, unreachable, timed out). Such a host is down
// for as long as the breaker lives: a request to it retries no more, and a
// later GetURL of it is a *HostDownError at once, with no request. A media
// pass uses one, so a media host that does not resolve costs a few attempts
// rather than every URL's retries. Any answer from the host starts its count
// again. Safe for concurrent use.
type HostBreaker struct {
	limit  int
	onDown func(*HostDownError)

	mu    sync.Mutex
	hosts map[string]*hostFailures
}

type hostFailures struct {
	inARow int
	down   *HostDownError
}

// NewHostBreaker makes a breaker that takes a host down after limit
// connection failures in a row (at least 1); onDown, when set, is told once
// per host as it goes down.
func NewHostBreaker(limit int, onDown func(*HostDownError)) *HostBreaker {
	return &HostBreaker{limit: max(limit, 1), onDown: onDown, hosts: map[string]*hostFailures{}}
}

// HostDownError is a URL not fetched because its host is down (HostBreaker).
type HostDownError struct {
	Host     string // host:port
	Failures int    // connection failures in a row
	Last     error  // the last of them
}

func (e *HostDownError) Error() string {
	return fmt.Sprintf("host %s is not tried again in this pass after %d failed connections (last: %v)", e.Host, e.Failures, e.Last)
}

func (e *HostDownError) Unwrap() error { return e.Last }

// Down lists the hosts down, in no order.
func (b *HostBreaker) Down() []*HostDownError {
	b.mu.Lock()
	defer b.mu.Unlock()
	var out []*HostDownError
	for _, h := range b.hosts {
		if h.down != nil {
			out = append(out, h.down)
		}
	}
	return out
}

// check is the error of a host that is down, nil otherwise.
func (b *HostBreaker) check(host string) error {
	if b == nil {
		return nil
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if h := b.hosts[host]; h != nil && h.down != nil {
		return h.down
	}
	return nil
}

// record counts one attempt's outcome for host: err nil or not a connection
// failure (the host answered, however) starts its count again.
func (b *HostBreaker) record(host string, err error) {
	if b == nil {
		return
	}
	b.mu.Lock()
	h := b.hosts[host]
	if h == nil {
		h = &hostFailures{}
		b.hosts[host] = h
	}
	if h.down != nil {
		b.mu.Unlock()
		return
	}
	if !connectFailure(err) {
		h.inARow = 0
		b.mu.Unlock()
		return
	}
	h.inARow++
	var down *HostDownError
	if h.inARow >= b.limit {
		down = &HostDownError{Host: host, Failures: h.inARow, Last: netCause(err)}
		h.down = down
	}
	b.mu.Unlock()
	if down != nil && b.onDown != nil {
		b.onDown(down)
	}
}

// connectFailure says whether err is an attempt that reached no server: no
// such name, or a dial that failed. A refusal of the host policy is not one
// (it is the policy's, not the host's).
func connectFailure(err error) bool {
	var dns *net.DNSError
	var op *net.OpError
	var refused *RefusedError
	switch {
	case err == nil, errors.As(err, &refused):
		return false
	case errors.As(err, &dns):
		return true
	}
	return errors.As(err, &op) && op.Op == "dial"
}

// netCause is the DNS or dial error in err, without the request its text
// names: a host's failure, said once for all its URLs.
func netCause(err error) error {
	var dns *net.DNSError
	if errors.As(err, &dns) {
		return dns
	}
	var op *net.OpError
	if errors.As(err, &op) {
		return op
	}
	return err
}

// HostOf is a URL's host as a HostBreaker counts it and reports name it:
// lowercase, no trailing dot, with its port unless that is its scheme's
// default (so http and https of one name count together: a name that does
// not resolve fails both). "" when rawURL is not a URL with a host.
func HostOf(rawURL string) string {
	u, err := url.Parse(rawURL)
	if err != nil || u.Host == "" {
		return ""
	}
	return hostPort(canonicalHost(u.Hostname()), explicitPort(u))
}
