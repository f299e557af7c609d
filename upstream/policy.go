package upstream

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// MaxRedirects is how many redirects GetURL follows, each to an allowed host.
const MaxRedirects = 5

// RefusedError is a URL, a redirect or an address GetURL does not fetch from
// (HostPolicy): nothing is sent, and it is never retried.
type RefusedError struct{ Reason string }

func (e *RefusedError) Error() string { return "refused: " + e.Reason }

func refusef(format string, a ...any) error {
	return &RefusedError{Reason: fmt.Sprintf(format, a...)}
}

// HostPolicy is where a client fetches media from (GetURL), so a catalog
// naming any URL cannot make the mirror fetch, store and serve what is behind
// it (an internal service, a cloud's metadata address):
//
//   - http or https URLs (the rule of the upstream's own URL), with no
//     user:password@ (it would be sent as Authorization);
//   - on an allowed host, at its port: the one named, or else the default port
//     of the URL's scheme;
//   - redirects only to such URLs, at most MaxRedirects;
//   - every address dialed public — not loopback, private (10/8, 172.16/12,
//     192.168/16, fc00::/7), link-local (169.254/16, fe80::/10), shared
//     (100.64/10), unspecified, multicast or reserved, nor a NAT64 or 6to4
//     address carrying such an IPv4 address — checked on the
//     connection itself, after resolution, so a name cannot resolve to one
//     address when checked and another when dialed. Hosts the operator named
//     are exempt: each --media-host, and the upstream's host when --from gives
//     it as an IP address or localhost (a stand-in, a test), where no DNS
//     answer can move it;
//   - no proxy from the environment: a proxy would dial on our behalf, out of
//     reach of the address check.
type HostPolicy struct {
	hosts []allowedHost
}

type allowedHost struct {
	name       string // lowercase, no trailing dot; an IP address in canonical form
	port       string // "": the default port of the URL's scheme
	anyAddress bool   // named by the operator: its addresses are not checked
}

func (h allowedHost) String() string { return hostPort(h.name, h.port) }

// NewHostPolicy allows the upstream's host (at upstreamURL's port), its media
// host by default ("media." before its name, at the default ports: the public
// API's icons are on media.valorant-api.com; none for an IP address or
// localhost), and each of named: "host" (default ports) or "host:port".
func NewHostPolicy(upstreamURL string, named []string) (*HostPolicy, error) {
	u, err := url.Parse(upstreamURL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("upstream %q: want an http or https URL", upstreamURL)
	}
	p := &HostPolicy{}
	name := canonicalHost(u.Hostname())
	literal := name == "localhost" || isIP(name)
	p.hosts = append(p.hosts, allowedHost{name: name, port: explicitPort(u), anyAddress: literal})
	if !literal {
		p.hosts = append(p.hosts, allowedHost{name: "media." + name})
	}
	for _, n := range named {
		h, err := parseMediaHost(n)
		if err != nil {
			return nil, err
		}
		p.hosts = append(p.hosts, h)
	}
	return p, nil
}

// parseMediaHost reads a --media-host value.
func parseMediaHost(s string) (allowedHost, error) {
	bad := fmt.Errorf("media host %q: want a host name or address, with a port or not (media.example.org, cdn.example.org:8443, [2001:db8::1]:443)", s)
	u, err := url.Parse("//" + s)
	if s == "" || err != nil || u.Host != s || u.User != nil || u.Path != "" || u.Hostname() == "" {
		return allowedHost{}, bad
	}
	h := allowedHost{name: canonicalHost(u.Hostname()), port: u.Port(), anyAddress: true}
	if !isIP(h.name) && strings.Trim(h.name, "abcdefghijklmnopqrstuvwxyz0123456789.-_") != "" ||
		strings.Contains(h.name, ":") && !strings.HasPrefix(s, "[") || strings.HasSuffix(s, ":") {
		return allowedHost{}, bad // not a name, an IPv6 address without brackets, "host:"
	}
	if n, err := strconv.ParseUint(h.port, 10, 16); h.port != "" && (err != nil || n == 0) {
		return allowedHost{}, bad
	}
	return h, nil
}

// String lists the hosts allowed, for a report.
func (p *HostPolicy) String() string {
	names := make([]string, len(p.hosts))
	for i, h := range p.hosts {
		names[i] = h.String()
	}
	return strings.Join(names, ", ")
}

// Check refuses a URL the policy does not allow, before any connection.
func (p *HostPolicy) Check(u *url.URL) error {
	switch {
	case u.Scheme != "http" && u.Scheme != "https" || u.Host == "" || u.Opaque != "":
		return refusef("not an absolute http or https URL")
	case u.User != nil:
		return refusef("the URL carries a user name or password")
	}
	name, port := canonicalHost(u.Hostname()), u.Port()
	if port == "" {
		port = defaultPort(u.Scheme)
	}
	hostKnown := false
	for _, h := range p.hosts {
		if h.name != name {
			continue
		}
		hostKnown = true
		if h.port == port || h.port == "" && port == defaultPort(u.Scheme) {
			return nil
		}
	}
	if hostKnown {
		return refusef("port %s of %s is not an allowed one (media hosts: %s)", port, name, p)
	}
	return refusef("host %s is not a media host (media hosts: %s; add one with --media-host)", hostPort(name, ""), p)
}

// client is the HTTP client GetURL uses: its own transport (no proxy, every
// address checked) and redirects held to the policy.
func (p *HostPolicy) client() *http.Client {
	t := http.DefaultTransport.(*http.Transport).Clone()
	t.Proxy = nil
	t.DialContext = p.dial
	return &http.Client{Transport: t, CheckRedirect: p.checkRedirect}
}

func (p *HostPolicy) checkRedirect(req *http.Request, via []*http.Request) error {
	if len(via) > MaxRedirects {
		return refusef("more than %d redirects", MaxRedirects)
	}
	if err := p.Check(req.URL); err != nil {
		return refusef("redirect to %s: %s", req.URL.Redacted(), err.(*RefusedError).Reason)
	}
	return nil
}

// dial connects to addr (host:port as the URL names it) when the policy
// allows the host, checking each address it resolves to as it dials it.
func (p *HostPolicy) dial(ctx context.Context, network, addr string) (net.Conn, error) {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return nil, refusef("address %q", addr)
	}
	name := canonicalHost(host)
	var allowed *allowedHost
	for i, h := range p.hosts {
		if h.name == name && (h.port == port || h.port == "" && (port == "80" || port == "443")) {
			allowed = &p.hosts[i]
			break
		}
	}
	if allowed == nil {
		return nil, refusef("host %s is not a media host", addr)
	}
	d := net.Dialer{Timeout: 30 * time.Second, KeepAlive: 30 * time.Second}
	if !allowed.anyAddress {
		d.Control = func(_, address string, _ syscall.RawConn) error {
			ap, err := netip.ParseAddrPort(address)
			if err != nil {
				return refusef("%s: address %q", name, address)
			}
			if why := notPublic(ap.Addr()); why != "" {
				return refusef("%s resolves to %s, %s", name, ap.Addr(), why)
			}
			return nil
		}
	}
	return d.DialContext(ctx, network, addr)
}

// reserved are ranges netip's predicates do not name: "this network", the
// carrier-grade NAT range clouds use inside, and the reserved block with the
// broadcast address; in IPv6, the deprecated IPv4-compatible (::/96) and
// site-local forms, and local-use NAT64 (RFC 8215), whose gateway's prefix
// length, and so where the IPv4 address sits, only its network knows.
var reserved = []netip.Prefix{
	netip.MustParsePrefix("0.0.0.0/8"),
	netip.MustParsePrefix("100.64.0.0/10"),
	netip.MustParsePrefix("240.0.0.0/4"),
	netip.MustParsePrefix("::/96"),
	netip.MustParsePrefix("fec0::/10"),
	netip.MustParsePrefix("64:ff9b:1::/48"),
}

// IPv6 ranges that carry an IPv4 address a gateway connects to: NAT64's
// well-known prefix (RFC 6052; DNS64 answers an IPv4-only name with it, so an
// IPv6-only host reaches public IPv4 hosts) and 6to4's (RFC 3056).
var (
	nat64     = netip.MustParsePrefix("64:ff9b::/96")
	sixToFour = netip.MustParsePrefix("2002::/16")
)

// notPublic says what kind of address a is when media must not be fetched
// from it, "" when it is public. An address of NAT64 or 6to4 is judged by the
// IPv4 address inside, where its gateway connects: 64:ff9b::a9fe:a9fe is the
// metadata address.
func notPublic(a netip.Addr) string {
	a = a.Unmap()
	if v4, via := inside(a); via != "" {
		if why := notPublic(v4); why != "" {
			return fmt.Sprintf("%s (%s through %s)", why, v4, via)
		}
		return ""
	}
	switch {
	case a.IsLoopback():
		return "a loopback address"
	case a.IsPrivate():
		return "a private address"
	case a.IsLinkLocalUnicast():
		return "a link-local address"
	case a.IsUnspecified():
		return "an unspecified address"
	case a.IsMulticast(), a.IsLinkLocalMulticast(), a.IsInterfaceLocalMulticast():
		return "a multicast address"
	}
	for _, p := range reserved {
		if p.Contains(a) {
			return "a reserved address"
		}
	}
	return ""
}

// inside is the IPv4 address a NAT64 or 6to4 address carries, and which of
// them it is; "" for any other address.
func inside(a netip.Addr) (netip.Addr, string) {
	b := a.As16()
	switch {
	case nat64.Contains(a):
		return netip.AddrFrom4([4]byte(b[12:16])), "NAT64"
	case sixToFour.Contains(a):
		return netip.AddrFrom4([4]byte(b[2:6])), "6to4"
	}
	return netip.Addr{}, ""
}

// canonicalHost is a host as hosts are compared: lowercase, no trailing dot,
// an IP address in its one written form.
func canonicalHost(h string) string {
	h = strings.TrimSuffix(strings.ToLower(h), ".")
	if a, err := netip.ParseAddr(h); err == nil {
		return a.Unmap().String()
	}
	return h
}

func isIP(h string) bool {
	_, err := netip.ParseAddr(h)
	return err == nil
}

// explicitPort is u's port unless it is its scheme's default.
func explicitPort(u *url.URL) string {
	if p := u.Port(); p != defaultPort(u.Scheme) {
		return p
	}
	return ""
}

func defaultPort(scheme string) string {
	if scheme == "https" {
		return "443"
	}
	return "80"
}

// hostPort writes host and port as a URL does (brackets around IPv6).
func hostPort(host, port string) string {
	if port == "" {
		if strings.Contains(host, ":") {
			return "[" + host + "]"
		}
		return host
	}
	return net.JoinHostPort(host, port)
}
