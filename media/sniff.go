package media

import (
	"bytes"
	"encoding/binary"
	"mime"
	"net/http"
	"slices"
)

// Types are the content types a mirror stores and serves: raster images and
// video a browser shows without running anything. Each is told apart by its
// first bytes (Sniff). SVG is not among them: it is a document that can carry
// scripts, and served from our origin it would run as ours.
var Types = []string{"image/png", "image/jpeg", "image/gif", "image/webp", "video/mp4", "video/webm"}

// SniffLen is how many leading bytes Sniff needs at most.
const SniffLen = 64

// Allowed says whether contentType (a bare media type, lowercase) is one a
// mirror stores.
func Allowed(contentType string) bool { return slices.Contains(Types, contentType) }

// TypeError is a file a mirror does not store: its declared type is not
// among Types, or its bytes are not of that type.
type TypeError struct{ Reason string }

func (e *TypeError) Error() string { return e.Reason }

// Check holds a fetched file to Types: its declared Content-Type (parameters
// ignored; image/jpg read as image/jpeg) must be one of them and its first
// bytes must be of that type. It returns the bare type to store the file with.
//
// By hand rather than net/http.DetectContentType: that is a browser's sniffer
// (the WHATWG algorithm), made to guess a type rather than to confirm one. It
// calls any EBML file (Matroska too) video/webm, finds MP4 only by an "mp4…"
// brand (an isom or dash file without one is not MP4 to it), and names many
// types a mirror must refuse, so an allow-list over its answer would be as
// long as these few signatures.
func Check(declared string, body []byte) (string, error) {
	ct, _, err := mime.ParseMediaType(declared)
	if err != nil {
		return "", &TypeError{"content type " + shown(declared) + " is not a media type"}
	}
	if ct == "image/jpg" {
		ct = "image/jpeg"
	}
	if !Allowed(ct) {
		return "", &TypeError{notServed(ct)}
	}
	if got := Sniff(body); got != ct {
		return "", &TypeError{mismatch(ct, describe(got, body))}
	}
	return ct, nil
}

// Sniff is the type among Types that head (a file's first bytes, SniffLen
// are enough) has the signature of, or "".
func Sniff(head []byte) string {
	switch {
	case bytes.HasPrefix(head, []byte("\x89PNG\r\n\x1a\n")):
		return "image/png"
	case bytes.HasPrefix(head, []byte("\xff\xd8\xff")):
		return "image/jpeg"
	case bytes.HasPrefix(head, []byte("GIF87a")), bytes.HasPrefix(head, []byte("GIF89a")):
		return "image/gif"
	case len(head) >= 15 && string(head[:4]) == "RIFF" && string(head[8:15]) == "WEBPVP8":
		return "image/webp"
	case isMP4(head):
		return "video/mp4"
	case isWebM(head):
		return "video/webm"
	}
	return ""
}

// mp4Brands are ISO base media brands of MP4 video; imageBrands (HEIF, AVIF)
// and QuickTime's "qt  " share the box structure but are not MP4.
var (
	mp4Brands   = []string{"isom", "iso2", "iso3", "iso4", "iso5", "iso6", "mp41", "mp42", "avc1", "dash", "M4V ", "mmp4"}
	imageBrands = []string{"avif", "avis", "heic", "heix", "heim", "heis", "hevc", "mif1", "msf1", "qt  "}
)

// isMP4: an ISO BMFF file opens with its ftyp box (size, "ftyp", the major
// brand, a minor version, compatible brands); MP4 when the major brand, or a
// compatible one under a major brand that is not an image's, is an MP4 brand.
func isMP4(head []byte) bool {
	if len(head) < 16 || string(head[4:8]) != "ftyp" {
		return false
	}
	size := int(binary.BigEndian.Uint32(head[:4]))
	if size < 16 || size%4 != 0 {
		return false
	}
	major := string(head[8:12])
	if slices.Contains(mp4Brands, major) {
		return true
	}
	if slices.Contains(imageBrands, major) {
		return false
	}
	for i := 16; i+4 <= min(size, len(head)); i += 4 {
		if slices.Contains(mp4Brands, string(head[i:i+4])) {
			return true
		}
	}
	return false
}

// isWebM: the EBML magic, and "webm" as the header's DocType (element 0x4282)
// within the first bytes, so Matroska (.mkv) is not taken for WebM.
func isWebM(head []byte) bool {
	if !bytes.HasPrefix(head, []byte("\x1a\x45\xdf\xa3")) {
		return false
	}
	head = head[:min(len(head), SniffLen)]
	i := bytes.Index(head, []byte("\x42\x82"))
	return i >= 0 && bytes.Contains(head[i+2:min(len(head), i+12)], []byte("webm"))
}

// describe names what the bytes are, for a report: one of Types, or what a
// browser would take them for.
func describe(sniffed string, body []byte) string {
	if sniffed != "" {
		return sniffed
	}
	guess, _, _ := mime.ParseMediaType(http.DetectContentType(body))
	switch guess {
	case "text/html":
		return "HTML"
	case "text/xml":
		return "XML"
	case "text/plain":
		if bytes.Contains(body[:min(len(body), 512)], []byte("<svg")) {
			return "SVG"
		}
		return "text"
	case "application/octet-stream":
		return "not an image or video of those types"
	}
	return guess
}

// shown is a declared type as a report quotes it.
func shown(s string) string {
	if s == "" {
		return "(none)"
	}
	return `"` + s + `"`
}

func notServed(ct string) string {
	return "content type " + ct + " is not served (raster images and video only)"
}

func mismatch(declared, is string) string { return "declared " + declared + " but the bytes are " + is }
