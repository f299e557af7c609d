package upstream

import (
	"context"
	"errors"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"net/url"
	"strings"
	"sync/atomic"
	"testing"
)

// TestHostPolicy: which URLs a policy allows before any connection, and why
// it refuses the others.
func TestHostPolicy(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		upstream string
		named    []string
		url      string
		want     string // "" allowed, else a part of the refusal
	}{
		{"https://valorant-api.com", nil, "https://media.valorant-api.com/agents/a/displayicon.png", ""},
		{"https://valorant-api.com", nil, "https://valorant-api.com/x.png", ""},
		{"https://valorant-api.com", nil, "http://media.valorant-api.com/x.png", ""},
		{"https://valorant-api.com", nil, "https://MEDIA.Valorant-API.com./x.png", ""},
		{"https://valorant-api.com", nil, "https://media.valorant-api.com:443/x.png", ""},
		{"https://valorant-api.com", nil, "https://media.valorant-api.com:8443/x.png", "port 8443 of media.valorant-api.com is not an allowed one"},
		{"https://valorant-api.com", nil, "http://media.valorant-api.com:443/x.png", "port 443 of media.valorant-api.com"},
		{"https://valorant-api.com", nil, "https://user:pw@media.valorant-api.com/x.png", "user name or password"},
		{"https://valorant-api.com", nil, "https://user@media.valorant-api.com/x.png", "user name or password"},
		{"https://valorant-api.com", nil, "https://evil.example/x.png", "host evil.example is not a media host (media hosts: valorant-api.com, media.valorant-api.com; add one with --media-host)"},
		{"https://valorant-api.com", nil, "http://169.254.169.254/latest/meta-data/", "host 169.254.169.254 is not a media host"},
		{"https://valorant-api.com", nil, "ftp://media.valorant-api.com/x.png", "not an absolute http or https URL"},
		{"https://valorant-api.com", nil, "media.valorant-api.com/x.png", "not an absolute http or https URL"},
		{"https://valorant-api.com", []string{"cdn.example"}, "https://cdn.example/x.png", ""},
		{"https://valorant-api.com", []string{"cdn.example:8443"}, "https://cdn.example:8443/x.png", ""},
		{"https://valorant-api.com", []string{"cdn.example:8443"}, "https://cdn.example/x.png", "port 443 of cdn.example"},
		{"https://valorant-api.com", []string{"[2001:db8::1]"}, "https://[2001:db8:0::1]/x.png", ""},
		{"https://valorant-api.com:8443", nil, "https://valorant-api.com:8443/x.png", ""},
		{"https://valorant-api.com:8443", nil, "https://valorant-api.com/x.png", "port 443 of valorant-api.com"},
		{"https://valorant-api.com:8443", nil, "https://media.valorant-api.com/x.png", ""},

		// A stand-in on loopback: its own host and port only.
		{"http://127.0.0.1:4444", nil, "http://127.0.0.1:4444/media/x.png", ""},
		{"http://127.0.0.1:4444", nil, "http://[::ffff:127.0.0.1]:4444/media/x.png", ""},
		{"http://127.0.0.1:4444", nil, "http://127.0.0.1:5555/secret", "port 5555 of 127.0.0.1 is not an allowed one (media hosts: 127.0.0.1:4444)"},
		{"http://127.0.0.1:4444", nil, "http://127.0.0.1/secret", "port 80 of 127.0.0.1"},
		{"http://127.0.0.1:4444", nil, "http://[::1]:4444/secret", "host [::1] is not a media host"},
		{"http://127.0.0.1:4444", nil, "http://localhost:4444/secret", "host localhost is not a media host"},
		{"http://127.0.0.1:4444", nil, "http://127.000.000.001:4444/secret", "is not a media host"},
		{"http://127.0.0.1:4444", nil, "http://2130706433:4444/secret", "host 2130706433 is not a media host"},
		{"http://127.0.0.1:4444", nil, "http://media.127.0.0.1/x.png", "is not a media host"},
		{"http://127.0.0.1:4444", nil, "http://user:pw@127.0.0.1:4444/media/x.png", "user name or password"},
	} {
		p, err := NewHostPolicy(tc.upstream, tc.named)
		if err != nil {
			t.Fatal(err)
		}
		u, err := url.Parse(tc.url)
		if err != nil {
			t.Fatal(err)
		}
		err = p.Check(u)
		var re *RefusedError
		switch {
		case tc.want == "" && err != nil:
			t.Errorf("%s (from %s, %v): %v, want it allowed", tc.url, tc.upstream, tc.named, err)
		case tc.want != "" && (!errors.As(err, &re) || !strings.Contains(err.Error(), tc.want)):
			t.Errorf("%s (from %s, %v): %v, want a refusal saying %q", tc.url, tc.upstream, tc.named, err, tc.want)
		}
	}
	for _, bad := range []string{"", "http://cdn.example", "cdn.example/x", "user@cdn.example", "cdn.example:", "::1", "cdn.example:https", "cdn.example:99999"} {
		if _, err := NewHostPolicy("https://valorant-api.com", []string{bad}); err == nil || !strings.Contains(err.Error(), "want a host name") {
			t.Errorf("media host %q: %v, want it refused", bad, err)
		}
	}
}

// TestNotPublic: the addresses media is never fetched from unless the
// operator named the host.
func TestNotPublic(t *testing.T) {
	t.Parallel()
	for addr, want := range map[string]string{
		"127.0.0.1": "loopback", "127.8.9.10": "loopback", "::1": "loopback", "::ffff:127.0.0.1": "loopback",
		"10.1.2.3": "private", "172.16.0.1": "private", "172.31.255.255": "private", "192.168.1.1": "private",
		"fc00::1": "private", "fd12:3456::1": "private", "::ffff:10.0.0.1": "private",
		"169.254.169.254": "link-local", "fe80::1": "link-local",
		"0.0.0.0": "unspecified", "::": "unspecified",
		"224.0.0.1": "multicast", "239.1.2.3": "multicast", "ff02::1": "multicast",
		"0.1.2.3": "reserved", "100.64.0.1": "reserved", "255.255.255.255": "reserved", "240.0.0.1": "reserved",
		// IPv4 addresses inside IPv6 ones a translator or tunnel takes them
		// out of: NAT64 (64:ff9b::/96, where a gateway connects to the IPv4
		// address in the last 32 bits), 6to4 (2002::/16), and the
		// deprecated IPv4-compatible and site-local forms.
		"64:ff9b::7f00:1": "loopback", "64:ff9b::a00:5": "private", "64:ff9b::a9fe:a9fe": "link-local",
		"64:ff9b::6440:1": "reserved", "64:ff9b::808:808": "", "64:ff9b:1::a00:5": "reserved",
		"2002:a9fe:a9fe::1": "link-local", "2002:c0a8:101::1": "private", "2002:808:808::1": "",
		"::7f00:1": "reserved", "::a00:5": "reserved", "fec0::1": "reserved",
		"8.8.8.8": "", "1.1.1.1": "", "172.32.0.1": "", "2001:4860:4860::8888": "", "100.128.0.1": "",
	} {
		got := notPublic(netip.MustParseAddr(addr))
		if want == "" && got != "" || !strings.Contains(got, want) {
			t.Errorf("%s: %q, want %q", addr, got, want)
		}
	}
}

// TestDialChecksAddresses: the address check runs on the connection, after
// the name is resolved: an allowed name the operator did not name (here
// localhost, as a media sibling would be) resolving to loopback is refused
// without a byte sent; named by the operator, it is fetched.
func TestDialChecksAddresses(t *testing.T) {
	t.Parallel()
	var hits atomic.Int64
	hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		w.Header().Set("Content-Type", "image/png")
		_, _ = w.Write([]byte("\x89PNG\r\n\x1a\n"))
	}))
	defer hs.Close()
	_, port, _ := net.SplitHostPort(hs.Listener.Addr().String())
	target := "http://localhost:" + port + "/x.png"
	for _, anyAddress := range []bool{false, true} {
		c, err := New(Config{BaseURL: "https://upstream.example", Retries: -1})
		if err != nil {
			t.Fatal(err)
		}
		c.policy = &HostPolicy{hosts: []allowedHost{{name: "localhost", port: port, anyAddress: anyAddress}}}
		c.media = c.policy.client()
		_, err = c.GetURL(context.Background(), target, nil, nil)
		var re *RefusedError
		switch {
		case !anyAddress && (!errors.As(err, &re) || !strings.Contains(err.Error(), "localhost resolves to") || !strings.Contains(err.Error(), "a loopback address")):
			t.Errorf("localhost, not named: %v, want a refusal naming the loopback address", err)
		case !anyAddress && hits.Load() != 0:
			t.Errorf("the refused dial reached the server (%d requests)", hits.Load())
		case anyAddress && (err != nil || hits.Load() != 1):
			t.Errorf("localhost, named by the operator: %v, %d requests; want it fetched once", err, hits.Load())
		}
	}
}
