package representation_test

import (
	"bytes"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/refdata/refdata/blob"
	"github.com/refdata/refdata/representation"
)

// TestCompressStream: a body compressed as it is written, however the
// writes cut it, is the same gzip and brotli (decoding to it) with its length
// and checksum; one too short to compress keeps its identity instead; a
// writer's error is CompressStream's, and the compressor works after it.
func TestCompressStream(t *testing.T) {
	t.Parallel()
	body := compressible(300 << 10) // past a chunk and the brotli window's first block
	in := func(cut int) func(io.Writer) error {
		return func(w io.Writer) error {
			for rest := body; len(rest) > 0; {
				n := min(cut, len(rest))
				if _, err := w.Write(rest[:n]); err != nil {
					return err
				}
				rest = rest[n:]
			}
			return nil
		}
	}
	for _, e := range []representation.Effort{representation.Fast, representation.Best} {
		z := representation.NewCompressor(e)
		var first representation.Streamed
		for i, cut := range []int{len(body), 1, 7, 4096, 1 << 16, 100 << 10} {
			s, err := z.CompressStream(in(cut))
			if err != nil {
				t.Fatal(err)
			}
			if s.Len != int64(len(body)) || s.Sum != blob.Checksum(body) || s.Identity != nil || s.Gzip == nil || s.Brotli == nil {
				t.Fatalf("effort %v, writes of %d: %d bytes, checksum %x (want %x), identity kept %v", e, cut, s.Len, s.Sum, blob.Checksum(body), s.Identity != nil)
			}
			if i == 0 {
				first = s
				for _, enc := range []*representation.Encoded{
					representation.Assemble(body, representation.ETag(body), "", s.Gzip, representation.ETag(s.Gzip), nil, "").Gzip(),
					representation.Assemble(body, representation.ETag(body), "", nil, "", s.Brotli, representation.ETag(s.Brotli)).Brotli(),
				} {
					if got, err := representation.Decode(enc); err != nil || !bytes.Equal(got, body) {
						t.Fatalf("effort %v: %s decodes to %d bytes (%v)", e, enc.Encoding.Value, len(got), err)
					}
				}
				continue
			}
			if !bytes.Equal(s.Gzip, first.Gzip) || !bytes.Equal(s.Brotli, first.Brotli) {
				t.Errorf("effort %v: writes of %d made other bytes than one write", e, cut)
			}
		}
		short := []byte(`{"catalog":"themes","data":{}}` + "\n")
		s, err := z.CompressStream(func(w io.Writer) error { _, err := w.Write(short); return err })
		if err != nil || !bytes.Equal(s.Identity, short) || s.Gzip != nil || s.Brotli != nil || s.Len != int64(len(short)) || s.Sum != blob.Checksum(short) {
			t.Errorf("effort %v, a short body: %+v, %v", e, s, err)
		}
		failed := errors.New("an item cannot be read")
		if _, err := z.CompressStream(func(w io.Writer) error { _, _ = w.Write(body[:1000]); return failed }); !errors.Is(err, failed) {
			t.Errorf("effort %v: a writer's error is %v", e, err)
		}
		if s, err := z.CompressStream(in(len(body))); err != nil || !bytes.Equal(s.Gzip, first.Gzip) || !bytes.Equal(s.Brotli, first.Brotli) {
			t.Errorf("effort %v: after an error, other bytes (%v)", e, err)
		}
	}
}

// TestCompressedRoute: a route whose bodies are sent compressed only picks
// br or gzip by q-values, gzip without Accept-Encoding, and is not
// Acceptable to a request that takes neither (the caller's 406); a body with
// no compressed encoding is sent as it is. Other routes pick as Pick does.
func TestCompressedRoute(t *testing.T) {
	t.Parallel()
	body := representation.Encode(compressible(4<<10), "de-DE", representation.Fast)
	gzOnly := representation.Assemble(body.Source().Mem, body.ETag(), "", body.Gzip().Source().Mem, body.Gzip().ETag(), nil, "")
	short := representation.NewBody([]byte("{}\n"), "")
	route := representation.NewRoute("/v1/versions/{manifestId}/bulk", "application/x-ndjson", "public, max-age=31536000, immutable")
	route.Compressed = true
	for _, tc := range []struct {
		body   *representation.Body
		accept []string
		want   string
		ok     bool
	}{
		{body, nil, "gzip", true},
		{body, []string{"br"}, "br", true},
		{body, []string{"gzip, br"}, "br", true},
		{body, []string{"gzip;q=1, br;q=0.5"}, "gzip", true},
		{body, []string{"*"}, "br", true},
		{body, []string{"identity"}, "", false},
		{body, []string{""}, "", false},
		{body, []string{"gzip;q=0, br;q=0"}, "", false},
		{body, []string{"deflate"}, "", false},
		{gzOnly, []string{"br"}, "", false},
		{gzOnly, nil, "gzip", true},
		{short, []string{"identity"}, "identity", true},
		{short, nil, "identity", true},
	} {
		res := &representation.Response{Route: route, Body: tc.body}
		ok := res.Acceptable(tc.accept)
		if ok != tc.ok {
			t.Errorf("Accept-Encoding %q: acceptable %v, want %v", tc.accept, ok, tc.ok)
		}
		if !ok {
			continue
		}
		status, enc := res.Negotiate(tc.accept, nil)
		got := "identity"
		if enc.Encoding.Name != "" {
			got = enc.Encoding.Value[0]
		}
		if status != http.StatusOK || got != tc.want {
			t.Errorf("Accept-Encoding %q: %d in %s, want 200 in %s", tc.accept, status, got, tc.want)
		}
		req := httptest.NewRequest(http.MethodGet, "/v1/versions/05E83EB5E32657B9/bulk", nil)
		req.Header["Accept-Encoding"] = tc.accept
		rec := httptest.NewRecorder()
		if err := representation.Write(rec, req, res); err != nil || rec.Header().Get("Content-Encoding") != string(enc.Encoding.ValueBytes()) {
			t.Errorf("Accept-Encoding %q: written in %q (%v)", tc.accept, rec.Header().Get("Content-Encoding"), err)
		}
	}
	plain := &representation.Response{Route: representation.NewRoute("/v1/weapons", "application/json", "public"), Body: body}
	if _, enc := plain.Negotiate(nil, nil); !plain.Acceptable([]string{"identity"}) || enc != &body.Encoded {
		t.Error("a route not compressed only: no identity without Accept-Encoding")
	}
}
