package impl

import (
	"errors"
	"io"
	"io/fs"
	"net/http"
	"time"

	"github.com/refdata/refdata/catalog"
	"github.com/refdata/refdata/media"
)

// GetMedia serves a mirrored file by its sha256, checked before the library
// sees it: the file's name and strong ETag; the answer never changes.
func (s *Server) GetMedia(w http.ResponseWriter, r *http.Request, sum string) {
	if !media.ValidHash(sum) {
		s.fail(w, r, catalog.Errorf(catalog.EINVALID, "%q is not a media file's name; use the 64 lowercase hexadecimal digits of its sha256, as the catalogs' media URLs give them", sum))
		return
	}
	if s.Media == nil {
		s.fail(w, r, catalog.Errorf(catalog.ENOTFOUND, "this server keeps no media mirror; use the catalogs' upstream media URLs"))
		return
	}
	f, err := s.Media.Open(r.Context(), sum)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		s.fail(w, r, catalog.Errorf(catalog.ENOTFOUND, "no media file %s in this mirror; use the catalogs' upstream media URL", sum))
		return
	case err != nil:
		s.fail(w, r, catalog.Internal("the media file cannot be read", err))
		return
	}
	defer f.Close()
	h := w.Header()
	h.Set("ETag", `"`+sum+`"`)
	h.Set("Cache-Control", CacheImmutable)
	if ct := s.mediaType(sum); ct != "" {
		h.Set("Content-Type", ct)
	}
	if size, err := f.Seek(0, io.SeekEnd); err == nil && size > streamAbove {
		w = streaming{w}
	}
	if _, err := f.Seek(0, io.SeekStart); err != nil {
		s.fail(w, r, catalog.Internal("the media file cannot be read", err))
		return
	}
	http.ServeContent(&rangeErrors{ResponseWriter: w}, r, "", time.Time{}, f)
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

// mediaType is the content type a file was fetched with; "" leaves it to
// http.ServeContent's sniffing.
func (s *Server) mediaType(sum string) string {
	if t, ok := s.Media.(interface{ ContentType(string) (string, bool) }); ok {
		ct, _ := t.ContentType(sum)
		return ct
	}
	return ""
}

// rangeErrors turns http.ServeContent's plain-text 416 into the error envelope.
type rangeErrors struct {
	http.ResponseWriter
	failed bool
}

func (w *rangeErrors) WriteHeader(status int) {
	if status != http.StatusRequestedRangeNotSatisfiable {
		w.ResponseWriter.WriteHeader(status)
		return
	}
	w.failed = true
	h := w.Header()
	h.Del("Cache-Control")
	h.Del("X-Content-Type-Options")
	WriteError(w.ResponseWriter, status, "the Range asked for is not within the file; ask for bytes below its Content-Length, or leave Range out")
}

func (w *rangeErrors) Write(b []byte) (int, error) {
	if w.failed {
		return len(b), nil
	}
	return w.ResponseWriter.Write(b)
}
