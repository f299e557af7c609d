package catalog_test

import (
	"bytes"
	"compress/gzip"
	"io"
	"testing"

	"github.com/andybalholm/brotli"

	"github.com/refdata/refdata/catalog"
	"github.com/refdata/refdata/fixtures"
)

// TestCompressedRoundTrip: every compressed representation of every body decodes to
// the identity bytes, and every representation has its own ETag.
func TestCompressedRoundTrip(t *testing.T) {
	ed := build(t, fixtures.Versions()[1])
	ed.Compress()
	bodies := ed.Bodies()
	etags := map[string][]byte{}
	compressed := 0
	for _, b := range bodies {
		for _, rep := range b.Representations() {
			if prev, ok := etags[rep.ETag]; ok && !bytes.Equal(prev, rep.Bytes) {
				t.Fatalf("ETag %s names two different byte sequences", rep.ETag)
			}
			etags[rep.ETag] = rep.Bytes
			var r io.Reader
			switch enc := rep.EncodingHeader; {
			case enc == nil:
				if !bytes.Equal(rep.Bytes, b.JSON) {
					t.Fatal("identity representation differs from the body")
				}
				continue
			case enc[0] == "gzip":
				zr, err := gzip.NewReader(bytes.NewReader(rep.Bytes))
				if err != nil {
					t.Fatal(err)
				}
				r = zr
			case enc[0] == "br":
				r = brotli.NewReader(bytes.NewReader(rep.Bytes))
			default:
				t.Fatalf("unknown encoding %v", enc)
			}
			got, err := io.ReadAll(r)
			if err != nil || !bytes.Equal(got, b.JSON) {
				t.Fatalf("%s does not decode to the identity bytes (err %v)", rep.EncodingHeader[0], err)
			}
			if len(rep.Bytes) >= len(b.JSON) {
				t.Errorf("%s representation is not smaller", rep.EncodingHeader[0])
			}
			compressed++
		}
	}
	if compressed < len(bodies) {
		t.Errorf("only %d compressed representations for %d bodies", compressed, len(bodies))
	}
}

// TestETagFollowsBytes: an item unchanged between two versions keeps its ETag; a
// changed body gets a new one.
func TestETagFollowsBytes(t *testing.T) {
	old, cur := build(t, fixtures.Versions()[0]), build(t, fixtures.Versions()[1])
	same, differ := 0, 0
	for _, u := range cur.UUIDs(catalog.WeaponSkins) {
		a, b := old.Item(catalog.WeaponSkins, u, catalog.DefaultLocale), cur.Item(catalog.WeaponSkins, u, catalog.DefaultLocale)
		if a == nil {
			continue
		}
		if bytes.Equal(a.JSON, b.JSON) != (a.ETag == b.ETag) {
			t.Fatalf("%s: equal bytes %v but equal ETags %v", u, bytes.Equal(a.JSON, b.JSON), a.ETag == b.ETag)
		}
		if a.ETag == b.ETag {
			same++
		} else {
			differ++
		}
	}
	if same == 0 {
		t.Error("no unchanged skin kept its ETag")
	}
	if old.VersionBody().ETag == cur.VersionBody().ETag {
		t.Error("different version records share an ETag")
	}
	t.Logf("%d skins kept their ETag, %d changed", same, differ)
}

func TestPick(t *testing.T) {
	b := catalog.NewBody(bytes.Repeat([]byte(`{"displayName":"Glitchpop Odin"},`), 100), "")
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
		if rep.EncodingHeader != nil {
			got = rep.EncodingHeader[0]
		}
		if got != tc.want {
			t.Errorf("Accept-Encoding %q: %q, want %q", tc.accept, got, tc.want)
		}
	}
	if n := testing.AllocsPerRun(100, func() { b.Pick([]string{"gzip, deflate, br;q=0.9"}) }); n != 0 {
		t.Errorf("Pick allocates %v times", n)
	}
}
