package upstreamtest

import (
	"bytes"
	"crypto/sha256"
	"image"
	"image/color"
	"image/png"
	"maps"
	"net/http"
	"strings"
	"sync"
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
)

// Media makes the stand-in an image host too: its catalogs' media URLs
// (PublicMediaHost) point to its own /media/, where each path is answered as
// Kinds says, and every request is counted per path.
type Media struct {
	Kinds         map[string]MediaKind // by URL path, e.g. /media/agents/…/displayicon.png
	Slow          time.Duration
	OversizeBytes int

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
		select {
		case <-time.After(m.Slow):
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
	}
	w.Header().Set("Content-Type", "image/png")
	_, _ = w.Write(body)
}

// mediaHere points a catalog body's public media URLs to the stand-in's host.
func mediaHere(b []byte, r *http.Request) []byte {
	return bytes.ReplaceAll(b, []byte(PublicMediaHost), []byte("http://"+r.Host+"/media/"))
}

// MediaPath is the stand-in's path for a public media URL.
func MediaPath(publicURL string) string {
	return "/media/" + strings.TrimPrefix(publicURL, PublicMediaHost)
}
