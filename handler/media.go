package handler

import (
	"cmp"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/refdata/refdata/catalog"
	"github.com/refdata/refdata/media"
	"github.com/refdata/refdata/representation"
)

// GetMedia serves a mirrored file by its sha256.
func (s *Server) GetMedia(w http.ResponseWriter, r *http.Request, sum string) {
	s.write(w, r, s.media(r, sum))
}

// media is a mirrored file by its sha256, checked before the library sees it:
// the file's name and strong ETag; the answer never changes. Its bytes are
// sent by http.ServeContent (Range, If-Range), which closes the file.
func (s *Server) media(r *http.Request, sum string) Answer {
	if !media.ValidHash(sum) {
		return failed(catalog.Errorf(catalog.EINVALID, "%q is not a media file's name; use the 64 lowercase hexadecimal digits of its sha256, as the catalogs' media URLs give them", sum))
	}
	if s.Media == nil {
		return failed(catalog.Errorf(catalog.ENOTFOUND, "this server keeps no media mirror; use the catalogs' upstream media URLs"))
	}
	f, err := s.Media.Open(r.Context(), sum)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return failed(catalog.Errorf(catalog.ENOTFOUND, "no media file %s in this mirror; use the catalogs' upstream media URL", sum))
	case err != nil:
		return failed(catalog.Internal("the media file cannot be read", err))
	}
	size, err := f.Seek(0, io.SeekEnd)
	if err == nil {
		_, err = f.Seek(0, io.SeekStart)
	}
	if err != nil {
		f.Close()
		return failed(catalog.Internal("the media file cannot be read", err))
	}
	etag := `"` + sum + `"`
	ranges, ok := mediaRanges(r, etag, size)
	if !ok {
		f.Close()
		return Answer{
			Err:    catalog.Errorf(catalog.EINVALID, "the Range asked for is malformed or not within the file: ask for bytes=first-last, first- or -suffix, below the file's Content-Length, or leave Range out"),
			Status: http.StatusRequestedRangeNotSatisfiable,
			Fields: []representation.Field{representation.NewField("Content-Range", "bytes */"+strconv.FormatInt(size, 10))},
		}
	}
	fields := append(mediaHeader[:len(mediaHeader):len(mediaHeader)], representation.NewField("ETag", etag), representation.NewField("Content-Type", s.mediaType(sum)))
	return Answer{Fields: fields, Stream: func(w http.ResponseWriter, r *http.Request) {
		defer f.Close()
		if ranges != r.Header.Get("Range") {
			in := *r
			in.Header = r.Header.Clone()
			if ranges == "" {
				in.Header.Del("Range")
			} else {
				in.Header.Set("Range", ranges)
			}
			r = &in
		}
		if size > streamAbove {
			w = streaming{w}
		}
		http.ServeContent(w, r, "", time.Time{}, f)
	}}
}

// mediaHeader is what every /media answer carries besides its type and ETag: a
// mirrored file is the upstream's bytes, never a document of this site, so it
// runs nothing if opened (sandbox); other sites may embed it.
var mediaHeader = []representation.Field{
	representation.NewField("Cache-Control", CacheImmutable),
	representation.NewField("Content-Security-Policy", "default-src 'none'; sandbox"),
	representation.NewField("Cross-Origin-Resource-Policy", "cross-origin"),
}

// maxRanges: a Range of more ranges is answered with the whole file, as RFC 9110
// § 14.2 lets a server do with many small ranges.
const maxRanges = 16

// mediaRanges is the Range header to hand http.ServeContent for a file of size
// bytes, by RFC 9110 § 14: "" for the whole file (no Range, a unit other than
// bytes, an If-Range that is not the file's ETag, more than maxRanges ranges);
// else the satisfiable ranges as explicit bytes, overlapping and adjacent ones
// merged, in ascending order. False: the header is malformed or none of its
// ranges is satisfiable (416). ServeContent alone would answer bytes=-0 with
// an invalid 206, an unknown unit with 416, and overlapping ranges as given.
func mediaRanges(r *http.Request, etag string, size int64) (string, bool) {
	header := strings.TrimSpace(r.Header.Get("Range"))
	unit, set, _ := strings.Cut(header, "=")
	if header == "" || !strings.EqualFold(strings.TrimSpace(unit), "bytes") {
		return "", true
	}
	if ir := r.Header.Get("If-Range"); ir != "" && ir != etag {
		return "", true
	}
	type span struct{ first, last int64 }
	var spans []span
	given := 0
	for spec := range strings.SplitSeq(set, ",") {
		spec = strings.TrimSpace(spec)
		if spec == "" {
			continue
		}
		if given++; given > maxRanges {
			return "", true
		}
		a, b, ok := strings.Cut(spec, "-")
		a, b = strings.TrimSpace(a), strings.TrimSpace(b)
		first, errA := digits(a)
		last, errB := digits(b)
		switch {
		case !ok || a == "" && b == "" || a != "" && errA != nil || b != "" && errB != nil || a != "" && b != "" && last < first:
			return "", false
		case a == "": // the last b bytes; none for b = 0
			if b := min(last, size); b > 0 {
				spans = append(spans, span{size - b, size - 1})
			}
		case first < size:
			if b == "" || last >= size {
				last = size - 1
			}
			spans = append(spans, span{first, last})
		}
	}
	if len(spans) == 0 {
		return "", given == 0 // "bytes=" with no range is ignored
	}
	slices.SortFunc(spans, func(x, y span) int { return cmp.Compare(x.first, y.first) })
	merged := spans[:1]
	for _, sp := range spans[1:] {
		if end := &merged[len(merged)-1].last; sp.first <= *end+1 {
			*end = max(*end, sp.last)
		} else {
			merged = append(merged, sp)
		}
	}
	var b strings.Builder
	b.WriteString("bytes=")
	for i, sp := range merged {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, "%d-%d", sp.first, sp.last)
	}
	return b.String(), true
}

// digits reads a non-negative decimal number of digits alone (no sign).
func digits(s string) (int64, error) {
	if s == "" || strings.Trim(s, "0123456789") != "" {
		return 0, strconv.ErrSyntax
	}
	return strconv.ParseInt(s, 10, 64)
}

// streamAbove: a larger file is flushed from its head on, so a server that
// buffers answers (the edge's adaptor) does not hold all of it per request.
const streamAbove = 1 << 20

// streaming flushes the head as soon as it is written, so the body streams.
type streaming struct{ http.ResponseWriter }

func (w streaming) WriteHeader(status int) {
	w.ResponseWriter.WriteHeader(status)
	_ = http.NewResponseController(w.ResponseWriter).Flush()
}

func (w streaming) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// mediaType is the content type a file was fetched with, never one guessed
// from its bytes; application/octet-stream when the mirror does not say.
func (s *Server) mediaType(sum string) string {
	if t, ok := s.Media.(interface{ ContentType(string) (string, bool) }); ok {
		if ct, ok := t.ContentType(sum); ok && ct != "" {
			return ct
		}
	}
	return "application/octet-stream"
}
