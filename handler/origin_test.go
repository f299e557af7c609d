package handler

import (
	"crypto/tls"
	"net/http/httptest"
	"testing"
)

// TestRequestOrigin: the address the landing page names is the request's
// scheme (https from a TLS connection or a proxy's X-Forwarded-Proto) and its
// Host when that is a plain host name or address; anything else in Host is
// the default address.
func TestRequestOrigin(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		host, proto string
		tls         bool
		want        string
	}{
		{"localhost:8080", "", false, "http://localhost:8080"},
		{"refdata.example", "", false, "http://refdata.example"},
		{"Refdata.Example:443", "https", false, "https://Refdata.Example:443"},
		{"a_b.example", "", false, "http://a_b.example"},
		{"192.0.2.1", "", false, "http://192.0.2.1"},
		{"[::1]", "", false, "http://[::1]"},
		{"[2001:db8::1]:8080", "", false, "http://[2001:db8::1]:8080"},
		{"refdata.example", "", true, "https://refdata.example"},
		{"refdata.example", " https ,http", false, "https://refdata.example"},
		{"refdata.example", "http, https", false, "http://refdata.example"},
		{"refdata.example", "wss", false, "http://refdata.example"},
		{"", "", false, "http://localhost:8080"},
		{":8080", "", false, "http://localhost:8080"},
		{"refdata.example:", "", false, "http://localhost:8080"},
		{"refdata.example:123456", "", false, "http://localhost:8080"},
		{"refdata.example:80a", "", false, "http://localhost:8080"},
		{"::1", "", false, "http://localhost:8080"},
		{"[::1", "", false, "http://localhost:8080"},
		{"[::1]x", "", false, "http://localhost:8080"},
		{"[]", "", false, "http://localhost:8080"},
		{"[v1.x]", "", false, "http://localhost:8080"},
		{"user@refdata.example", "", false, "http://localhost:8080"},
		{"refdata.example/path", "", false, "http://localhost:8080"},
		{"a b", "", false, "http://localhost:8080"},
		{`x'"<>`, "", false, "http://localhost:8080"},
		{"ré.example", "", false, "http://localhost:8080"},
	} {
		r := httptest.NewRequest("GET", "/", nil)
		r.Host = tc.host
		if tc.proto != "" {
			r.Header.Set("X-Forwarded-Proto", tc.proto)
		}
		if tc.tls {
			r.TLS = &tls.ConnectionState{}
		}
		if got := requestOrigin(r); got != tc.want {
			t.Errorf("Host %q, X-Forwarded-Proto %q, TLS %v: %q, want %q", tc.host, tc.proto, tc.tls, got, tc.want)
		}
	}
}
