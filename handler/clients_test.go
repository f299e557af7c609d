package handler

import "testing"

// TestClientKey: a client is its address; an IPv6 one its /64, an IPv4 one
// mapped into IPv6 the IPv4 address; what does not parse counts as itself.
func TestClientKey(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ remote, want string }{
		{"192.0.2.7:51234", "192.0.2.7"},
		{"192.0.2.7:1", "192.0.2.7"},
		{"[2001:db8:1:2:3:4:5:6]:443", "2001:db8:1:2::/64"},
		{"[2001:db8:1:2:ffff::1]:80", "2001:db8:1:2::/64"},
		{"[::ffff:192.0.2.7]:80", "192.0.2.7"},
		{"pipe", "pipe"},
	} {
		if got := clientKey(tc.remote); got != tc.want {
			t.Errorf("clientKey(%q) = %q, want %q", tc.remote, got, tc.want)
		}
	}
}

// TestPerClient: each client has its own count up to the limit; a release
// makes room again, and a client with nothing held is forgotten.
func TestPerClient(t *testing.T) {
	t.Parallel()
	var p perClient
	for i := range 2 {
		if !p.acquire("a", 2) {
			t.Fatalf("a's %d of 2 refused", i+1)
		}
	}
	if p.acquire("a", 2) {
		t.Error("a's third of 2 taken")
	}
	if !p.acquire("b", 2) {
		t.Error("b refused for a's count")
	}
	p.release("a")
	if !p.acquire("a", 2) {
		t.Error("a refused after a release")
	}
	p.release("a")
	p.release("a")
	p.release("b")
	if len(p.n) != 0 {
		t.Errorf("counts left: %v", p.n)
	}
}
