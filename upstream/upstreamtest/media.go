package upstreamtest

import (
	"bytes"
	"crypto/sha256"
	"image"
	"image/color"
	"image/png"
	"maps"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// PublicMediaHost is the host whose URLs the stand-in's catalogs point to its
// own /media/ instead, when it serves media.
const PublicMediaHost = "https://media.valorant-api.com/"

// MediaKind is how the stand-in answers one media path.
type MediaKind int

const (
	MediaPNG      MediaKind = iota // a PNG generated from the path (the default)
	MediaMissing                   // 404
	MediaSlow                      // a PNG, after Media.Slow
	MediaHTML                      // an HTML page (a wrong content type)
	MediaOversize                  // a PNG of Media.OversizeBytes
	MediaTwin                      // the same PNG for every path of this kind

	// The hostile kinds: what a security audit found a mirror fetched,
	// stored and served. The first four rename the path's URL in the catalogs,
	// as the unreachable kinds below do.
	MediaOtherPort        // named at Media.Internal: another port of 127.0.0.1
	MediaIPv6Loopback     // named at http://[::1]:<Media.Internal's port>
	MediaUserinfo         // named with user:pw@ on the stand-in's own host
	MediaMetadata         // named at http://169.254.169.254 (a cloud's metadata address)
	MediaRedirectOut      // a 302 to the path at Media.Internal
	MediaRedirectMetadata // a 302 to http://169.254.169.254/latest/meta-data/
	MediaSVG              // image/svg+xml with a <script>
	MediaHTMLAsPNG        // an HTML page labelled image/png

	// Hosts that cannot be reached, each allowed by a mirror's --media-host so
	// its policy lets the request through to the network.
	MediaNoSuchHost // named at Media.NoSuchHost, a name that does not resolve
	MediaClosedPort // named at Media.Closed, an address where nothing listens
)

// DefaultNoSuchHost is Media.NoSuchHost's default: .invalid never resolves
// (RFC 2606).
const DefaultNoSuchHost = "media.refdata-test.invalid"

// HostileKinds are the hostile kinds, each with the class of reason a mirror
// refuses it with (follow.MediaError's) and a part of the reason.
var HostileKinds = []struct {
	Kind        MediaKind
	Class, Says string
}{
	{MediaOtherPort, "refused", "port"},
	{MediaIPv6Loopback, "refused", "host [::1] is not a media host"},
	{MediaUserinfo, "refused", "the URL carries a user name or password"},
	{MediaMetadata, "refused", "host 169.254.169.254 is not a media host"},
	{MediaRedirectOut, "refused", "redirect to http://127.0.0.1:"},
	{MediaRedirectMetadata, "refused", "redirect to http://169.254.169.254/latest/meta-data/: host 169.254.169.254 is not a media host"},
	{MediaSVG, "type", "content type image/svg+xml is not served (raster images and video only)"},
	{MediaHTMLAsPNG, "type", "declared image/png but the bytes are HTML"},
}

// Media makes the stand-in an image host too: its catalogs' media URLs
// (PublicMediaHost) point to its own /media/, where each path is answered as
// Kinds says, and every request is counted per path.
type Media struct {
	Kinds         map[string]MediaKind // by URL path, e.g. /media/agents/…/displayicon.png
	Slow          time.Duration
	OversizeBytes int
	// Internal is the host:port of a server a mirror must never reach
	// (Internal.Addr), for the hostile kinds.
	Internal string
	// NoSuchHost is MediaNoSuchHost's host ("": DefaultNoSuchHost); Closed
	// is MediaClosedPort's host:port.
	NoSuchHost, Closed string
	// Release, when set, holds each MediaSlow answer until it is closed (or
	// the request ends) rather than for Slow.
	Release <-chan struct{}

	mu   sync.Mutex
	hits map[string]int
}

// Hits is how many requests each media path has had.
func (m *Media) Hits() map[string]int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return maps.Clone(m.hits)
}

// PNG is the image the stand-in serves for a path: 8×8, its colors the
// sha256 of seed (192 of its bits), so no two seeds of a version's thousands
// of URLs share bytes by chance.
func PNG(seed string) []byte {
	sum := sha256.Sum256([]byte(seed))
	img := image.NewNRGBA(image.Rect(0, 0, 8, 8))
	for i := range img.Pix {
		img.Pix[i] = sum[i%len(sum)]
	}
	for i := 3; i < len(img.Pix); i += 4 {
		img.Pix[i] = 255
	}
	img.Set(0, 0, color.Black)
	var b bytes.Buffer
	_ = png.Encode(&b, img)
	return b.Bytes()
}

func (m *Media) serve(w http.ResponseWriter, r *http.Request) {
	p := r.URL.Path
	m.mu.Lock()
	if m.hits == nil {
		m.hits = map[string]int{}
	}
	m.hits[p]++
	m.mu.Unlock()
	body := PNG(p)
	switch m.Kinds[p] {
	case MediaMissing:
		writeErr(w, http.StatusNotFound, "not found")
		return
	case MediaSlow:
		var slow <-chan time.Time // nil, so never, when Release holds it
		if m.Release == nil {
			t := time.NewTimer(m.Slow)
			defer t.Stop()
			slow = t.C
		}
		select {
		case <-slow:
		case <-m.Release:
		case <-r.Context().Done():
			return
		}
	case MediaHTML:
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		_, _ = w.Write([]byte("<html><body>a login page</body></html>"))
		return
	case MediaOversize:
		body = append(body, make([]byte, m.OversizeBytes)...)
	case MediaTwin:
		body = PNG("twin")
	case MediaRedirectOut:
		http.Redirect(w, r, "http://"+m.Internal+p, http.StatusFound)
		return
	case MediaRedirectMetadata:
		http.Redirect(w, r, "http://169.254.169.254/latest/meta-data/", http.StatusFound)
		return
	case MediaSVG:
		w.Header().Set("Content-Type", "image/svg+xml")
		_, _ = w.Write([]byte(`<svg xmlns="http://www.w3.org/2000/svg" width="8" height="8"><script>alert(document.domain)</script></svg>`))
		return
	case MediaHTMLAsPNG:
		w.Header().Set("Content-Type", "image/png")
		_, _ = w.Write([]byte("<!DOCTYPE html><html><body>TOP-SECRET</body></html>"))
		return
	}
	w.Header().Set("Content-Type", "image/png")
	_, _ = w.Write(body)
}

// here points a catalog body's public media URLs to the stand-in's host, and
// the renamed kinds' elsewhere (URL): one pass over the body, however many
// paths have a kind.
func (m *Media) here(b []byte, r *http.Request) []byte {
	public := []byte(PublicMediaHost)
	var out bytes.Buffer
	for {
		i := bytes.Index(b, public)
		n := bytes.IndexByte(b[max(i, 0):], '"')
		if i < 0 || n < 0 {
			out.Write(b)
			return out.Bytes()
		}
		out.Write(b[:i])
		out.WriteString(m.URL(r.Host, MediaPath(string(b[i:i+n]))))
		b = b[i+n:]
	}
}

// URL is the URL the stand-in's catalogs name a media path by when it is
// reached at host.
func (m *Media) URL(host, path string) string {
	switch m.Kinds[path] {
	case MediaOtherPort:
		return "http://" + m.Internal + path
	case MediaIPv6Loopback:
		_, port, _ := net.SplitHostPort(m.Internal)
		return "http://[::1]:" + port + path
	case MediaUserinfo:
		return "http://user:pw@" + host + path
	case MediaMetadata:
		return "http://169.254.169.254" + path
	case MediaNoSuchHost:
		if m.NoSuchHost == "" {
			return "http://" + DefaultNoSuchHost + path
		}
		return "http://" + m.NoSuchHost + path
	case MediaClosedPort:
		return "http://" + m.Closed + path
	}
	return "http://" + host + path
}

// Internal stands for a service a mirror must never reach (an admin page, a
// metadata endpoint): it answers anything with "TOP-SECRET" labelled
// image/png, and counts the requests. It listens on 127.0.0.1 and, where the
// machine has IPv6 loopback, on [::1] at the same port.
type Internal struct {
	Addr    string // 127.0.0.1:port
	hits    atomic.Int64
	servers []*httptest.Server
}

// NewInternal starts an Internal server; Close stops it.
func NewInternal() *Internal {
	in := &Internal{}
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		in.hits.Add(1)
		w.Header().Set("Content-Type", "image/png")
		_, _ = w.Write([]byte("TOP-SECRET"))
	})
	v4 := httptest.NewServer(h)
	in.Addr, in.servers = v4.Listener.Addr().String(), []*httptest.Server{v4}
	_, port, _ := net.SplitHostPort(in.Addr)
	if ln, err := net.Listen("tcp6", "[::1]:"+port); err == nil {
		v6 := httptest.NewUnstartedServer(h)
		_ = v6.Listener.Close()
		v6.Listener = ln
		v6.Start()
		in.servers = append(in.servers, v6)
	}
	return in
}

// Hits is how many requests reached the server.
func (in *Internal) Hits() int64 { return in.hits.Load() }

// Close stops the server.
func (in *Internal) Close() {
	for _, s := range in.servers {
		s.Close()
	}
}

// MediaPath is the stand-in's path for a public media URL.
func MediaPath(publicURL string) string {
	return "/media/" + strings.TrimPrefix(publicURL, PublicMediaHost)
}
