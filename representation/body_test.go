package representation_test

import (
	"bytes"
	"strings"
	"testing"

	"github.com/refdata/refdata/representation"
)

func TestPick(t *testing.T) {
	b := representation.NewBody(bytes.Repeat([]byte(`{"displayName":"Glitchpop Odin"},`), 100), "")
	b.Compress()
	for _, tc := range []struct {
		accept []string
		want   string
	}{
		{nil, ""},
		{[]string{"gzip"}, "gzip"},
		{[]string{"br"}, "br"},
		{[]string{"gzip, deflate, br"}, "br"},
		{[]string{"gzip;q=1.0, br;q=0.5"}, "gzip"},
		{[]string{"br;q=0, gzip"}, "gzip"},
		{[]string{"gzip;q=0"}, ""},
		{[]string{"*"}, "br"},
		{[]string{"*;q=0.1, gzip;q=0.5"}, "gzip"},
		{[]string{"identity"}, ""},
		{[]string{"GZIP"}, "gzip"},
		{[]string{"x-gzip"}, "gzip"},
		{[]string{"deflate", "br;q=0.9"}, "br"},
		{[]string{"gzip;q=garbage"}, ""},
		{[]string{" br ; q=0.001 "}, "br"},
	} {
		rep := b.Pick(tc.accept)
		got := ""
		if rep.Encoding.Value != nil {
			got = rep.Encoding.Value[0]
		}
		if got != tc.want {
			t.Errorf("Accept-Encoding %q: %q, want %q", tc.accept, got, tc.want)
		}
	}
	if n := testing.AllocsPerRun(100, func() { b.Pick([]string{"gzip, deflate, br;q=0.9"}) }); n != 0 {
		t.Errorf("Pick allocates %v times", n)
	}
}

// TestGzipFirst: a swap serves a body with gzip alone (CompressGzip) and adds
// brotli later (Compress), keeping the gzip bytes, so a client's gzip ETag stays
// valid across the upgrade.
func TestGzipFirst(t *testing.T) {
	b := representation.NewBody(bytes.Repeat([]byte(`{"displayName":"Glitchpop Odin"},`), 100), "")
	enc := func(accept string) string {
		rep := b.Pick([]string{accept})
		if rep.Encoding.Value == nil {
			return ""
		}
		return rep.Encoding.Value[0]
	}
	b.CompressGzip()
	gz := b.Pick([]string{"gzip"})
	for _, tc := range []struct{ accept, want string }{
		{"gzip, br", "gzip"},
		{"br", ""}, // brotli not made yet: identity, never a coding the client refused
		{"gzip", "gzip"},
	} {
		if got := enc(tc.accept); got != tc.want {
			t.Errorf("gzip alone, Accept-Encoding %q: %q, want %q", tc.accept, got, tc.want)
		}
	}
	b.CompressGzip() // again: nothing changes
	if b.Pick([]string{"gzip"}) != gz {
		t.Error("a second CompressGzip made gzip again")
	}
	b.Compress()
	if got := enc("gzip, br"); got != "br" {
		t.Errorf("after Compress, Accept-Encoding gzip, br: %q, want br", got)
	}
	if again := b.Pick([]string{"gzip"}); &again.Bytes[0] != &gz.Bytes[0] || again.ETag() != gz.ETag() {
		t.Error("Compress made the gzip representation again") // the same bytes, not a second compression
	}
	if len(b.Representations()) != 3 {
		t.Errorf("%d representations, want identity, gzip and br", len(b.Representations()))
	}
}

// TestNewGzippedBody: a body whose gzip and ETags another process made is the
// body CompressGzip leaves here, its ETags taken as they come; an ETag not of
// the form this program makes is refused.
func TestNewGzippedBody(t *testing.T) {
	json := bytes.Repeat([]byte(`{"displayName":"Vandal","uuid":"9c82e19d"},`), 40)
	here := representation.NewBody(json, "de-DE")
	here.CompressGzip()
	gz, _ := here.Gzipped()
	if gz == nil || here.GzipETag() == "" || here.GzipETag() == here.ETag() {
		t.Fatalf("the sample did not gzip smaller: %d bytes, ETag %q", len(gz), here.GzipETag())
	}
	got, err := representation.NewGzippedBody(json, "de-DE", here.ETag(), gz, here.GzipETag())
	if err != nil {
		t.Fatal(err)
	}
	gotGz, made := got.Gzipped()
	if got.ETag() != here.ETag() || got.GzipETag() != here.GzipETag() || !made || !bytes.Equal(gotGz, gz) || got.Language.Value[0] != "de-DE" {
		t.Errorf("ETags %s/%s, want %s/%s; gzip made %v", got.ETag(), got.GzipETag(), here.ETag(), here.GzipETag(), made)
	}
	small := []byte(`{}`)
	if b, err := representation.NewGzippedBody(small, "", representation.NewBody(small, "").ETag(), nil, ""); err != nil {
		t.Errorf("a body too small to gzip: %v", err)
	} else if b.GzipETag() != "" {
		t.Errorf("a body too small to gzip: gzip ETag %q", b.GzipETag())
	}
	for _, tc := range []struct{ name, etag, gzETag string }{
		{"no ETag", "", here.GzipETag()},
		{"no gzip ETag", here.ETag(), ""},
		{"unquoted", here.ETag()[1:] + "x", here.GzipETag()},
		{"short", `"abc"`, here.GzipETag()},
		{"not base64url", `"` + "AAAAAAAAAAAA+AAAAAAAAAAA" + `"`, here.GzipETag()},
		{"weak", "W/" + here.ETag()[:24], here.GzipETag()},
		{"a megabyte", strings.Repeat("A", 1<<20), here.GzipETag()},
		{"a newline", here.ETag()[:12] + "\n" + here.ETag()[13:], here.GzipETag()},
		{"a newline in the gzip's", here.ETag(), here.GzipETag()[:12] + "\r" + here.GzipETag()[13:]},
	} {
		_, err := representation.NewGzippedBody(json, "de-DE", tc.etag, gz, tc.gzETag)
		if err == nil {
			t.Errorf("%s (%.40q, %.40q): no error", tc.name, tc.etag, tc.gzETag)
		} else if len(err.Error()) > 200 {
			t.Errorf("%s: an error of %d bytes (it quotes what it refuses)", tc.name, len(err.Error()))
		}
	}
}
