package edge

import (
	"bytes"
	"net/http"
	"testing"

	"github.com/refdata/refdata/catalog"
)

// TestBulkSentFromSegment: a bulk file leaves by sendfile straight from the
// segment file that stores it, byte for byte what the import stored, in
// gzip without Accept-Encoding and in brotli when asked; every time through
// the router, never kept in the memo, never read into memory (the
// replica's cache does not grow, the spill file holds nothing). One that
// takes neither encoding is refused with 406 every time.
func TestBulkSentFromSegment(t *testing.T) {
	t.Parallel()
	repo, dir, r := storeBacked(t, new(lockedBuffer))
	h := start(t, Config{Router: r, Active: repo.Active})
	ed := repo.Active()
	target := "/v1/versions/" + ed.ManifestID + "/bulk?language=all"
	b := ed.Bulk(catalog.AllLocales)
	cached := repo.Cache().Bytes()
	for _, tc := range []struct{ accept, encoding string }{{"", "gzip"}, {"br", "br"}, {"gzip", "gzip"}} {
		enc := b.Gzip()
		if tc.encoding == "br" {
			enc = b.Brotli()
		}
		if enc == nil || enc.Len() < DefaultSendfileMin {
			t.Fatalf("the bulk file in every language has no %s of %d bytes or more", tc.encoding, DefaultSendfileMin)
		}
		path, off, n := stored(t, dir, enc)
		want := readAt(t, path, off, n)
		req := func() *http.Request { return request("GET", target, "Accept-Encoding", tc.accept) }
		if tc.accept == "" {
			req = func() *http.Request { return request("GET", target) } // none, not an empty one (which takes no coding: 406)
		}
		for range 2 {
			res := h.do(t, req())
			if res.status != http.StatusOK || res.header.Get("Content-Encoding") != tc.encoding || res.header.Get("ETag") != enc.ETag() || !bytes.Equal(res.body, want) {
				t.Fatalf("Accept-Encoding %q: %d, %q, %d bytes; want 200, the stored %s of %d bytes", tc.accept, res.status, res.header.Get("Content-Encoding"), len(res.body), tc.encoding, len(want))
			}
			if h.memoized(target) {
				t.Fatal("a bulk file is in the memo")
			}
		}
	}
	for _, accept := range []string{"identity", "", "identity", ""} {
		if res := h.do(t, request("GET", target, "Accept-Encoding", accept)); res.status != http.StatusNotAcceptable {
			t.Errorf("Accept-Encoding %q: %d, want 406", accept, res.status)
		}
	}
	if !canSendfile {
		return // written from memory off Linux: the bytes were the point
	}
	if got := repo.Cache().Bytes(); got != cached {
		t.Errorf("the cache went from %d to %d bytes: the file was read into memory, not sent from its segment", cached, got)
	}
	m := h.es.memo.Load()
	m.spill.mu.Lock()
	spilled := len(m.spill.at)
	m.spill.mu.Unlock()
	if spilled != 0 {
		t.Errorf("%d bodies copied to the spill file", spilled)
	}
}
