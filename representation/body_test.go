package representation_test

import (
	"bytes"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"net/http"
	"runtime/metrics"
	"strings"
	"testing"

	"github.com/refdata/refdata/blob"
	"github.com/refdata/refdata/representation"
)

// compressible is n bytes of JSON-like text that compresses well.
func compressible(n int) []byte {
	var b []byte
	for i := 0; len(b) < n; i++ {
		b = fmt.Appendf(b, `{"displayName":"Glitchpop Odin %d","uuid":"%08x"},`, i%37, i*7919)
	}
	return b[:n]
}

// noise is n bytes that do not compress.
func noise(n int, seed uint64) []byte {
	r := rand.New(rand.NewPCG(seed, 2))
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(r.Uint32())
	}
	return b
}

func TestPick(t *testing.T) {
	t.Parallel()
	b := representation.Encode(bytes.Repeat([]byte(`{"displayName":"Glitchpop Odin"},`), 100), "", representation.Fast)
	if b.Gzip() == nil || b.Brotli() == nil {
		t.Fatal("the sample did not compress")
	}
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
}

// TestPickWithoutAnEncoding: a body that has only some encodings never
// answers with one it lacks, nor with one the client refused.
func TestPickWithoutAnEncoding(t *testing.T) {
	t.Parallel()
	json := compressible(4 << 10)
	gz, br := representation.Compress(json, representation.Fast)
	gzOnly := representation.Assemble(json, representation.ETag(json), "", gz, representation.ETag(gz), nil, "")
	brOnly := representation.Assemble(json, representation.ETag(json), "", nil, "", br, representation.ETag(br))
	identity := representation.NewBody(json, "")
	for _, tc := range []struct {
		name   string
		body   *representation.Body
		accept string
		want   string
	}{
		{"gzip alone", gzOnly, "gzip, br", "gzip"},
		{"gzip alone", gzOnly, "br", ""},
		{"gzip alone", gzOnly, "br, gzip;q=0", ""},
		{"brotli alone", brOnly, "gzip;q=1, br;q=0.1", "br"},
		{"brotli alone", brOnly, "gzip", ""},
		{"identity alone", identity, "gzip, br", ""},
	} {
		rep := tc.body.Pick([]string{tc.accept})
		if got := rep.Encoding.Name; (got == "") != (tc.want == "") || tc.want != "" && rep.Encoding.Value[0] != tc.want {
			t.Errorf("%s, Accept-Encoding %q: %v, want %q", tc.name, tc.accept, rep.Encoding.Value, tc.want)
		}
	}
}

// TestNegotiate: If-None-Match naming the ETag of the encoding chosen for the
// request (strong or weak, alone, in a list, or "*") is a 304; naming another
// encoding's ETag is not.
func TestNegotiate(t *testing.T) {
	t.Parallel()
	body := representation.Encode(compressible(4<<10), "de-DE", representation.Fast)
	res := &representation.Response{
		Route:   representation.NewRoute("/v1/weapons", "application/json", "public, max-age=60"),
		Version: &representation.Field{Name: "X-Data-Version", Value: []string{"v15"}},
		Body:    body,
	}
	id, gz, br := body.ETag(), body.Gzip().ETag(), body.Brotli().ETag()
	if id == gz || gz == br || id == br {
		t.Fatalf("encodings share an ETag: %s %s %s", id, gz, br)
	}
	for _, tc := range []struct {
		accept, inm string
		status      int
		etag        string
	}{
		{"", "", http.StatusOK, id},
		{"", id, http.StatusNotModified, id},
		{"", "W/" + id, http.StatusNotModified, id},
		{"", `"other", ` + id, http.StatusNotModified, id},
		{"", "*", http.StatusNotModified, id},
		{"", gz, http.StatusOK, id},
		{"gzip", gz, http.StatusNotModified, gz},
		{"gzip", id, http.StatusOK, gz},
		{"gzip, br", gz, http.StatusOK, br},
		{"gzip, br", br + ",  " + gz, http.StatusNotModified, br},
		{"br", strings.Trim(br, `"`), http.StatusOK, br}, // unquoted: not the same tag
	} {
		var ae, inm []string
		if tc.accept != "" {
			ae = []string{tc.accept}
		}
		if tc.inm != "" {
			inm = []string{tc.inm}
		}
		status, enc := res.Negotiate(ae, inm)
		if status != tc.status || enc.ETag() != tc.etag {
			t.Errorf("Accept-Encoding %q, If-None-Match %q: %d %s, want %d %s", tc.accept, tc.inm, status, enc.ETag(), tc.status, tc.etag)
		}
		var buf [representation.MaxFields]*representation.Field
		fields := map[string]string{}
		for _, f := range res.Fields(status, enc, buf[:0]) {
			fields[f.Name] = f.Value[0]
		}
		if fields["Etag"] != tc.etag || fields["Content-Language"] != "de-DE" || fields["X-Data-Version"] != "v15" || fields["Vary"] != "Accept-Encoding" {
			t.Errorf("Accept-Encoding %q, If-None-Match %q: fields %v", tc.accept, tc.inm, fields)
		}
		wantCE := ""
		if status == http.StatusOK && enc.Encoding.Name != "" {
			wantCE = enc.Encoding.Value[0]
		}
		if fields["Content-Encoding"] != wantCE {
			t.Errorf("Accept-Encoding %q, If-None-Match %q: Content-Encoding %q, want %q", tc.accept, tc.inm, fields["Content-Encoding"], wantCE)
		}
	}
}

// TestNoAllocations: choosing an answer allocates nothing (every request
// does it). Not parallel: testing.AllocsPerRun refuses to run in a parallel
// test, whose neighbours' allocations it would count.
func TestNoAllocations(t *testing.T) {
	body := representation.Encode(compressible(4<<10), "de-DE", representation.Fast)
	res := &representation.Response{Route: representation.NewRoute("/v1/weapons", "application/json", "no-cache"), Body: body}
	inm := []string{`"other", ` + body.Brotli().ETag()}
	for _, tc := range []struct {
		name string
		f    func()
	}{
		{"Pick", func() { body.Pick([]string{"gzip, deflate, br;q=0.9"}) }},
		{"Negotiate", func() { res.Negotiate([]string{"gzip, br"}, inm) }},
		{"Fields", func() {
			var buf [representation.MaxFields]*representation.Field
			res.Fields(http.StatusOK, body.Gzip(), buf[:0])
		}},
	} {
		if n := testing.AllocsPerRun(100, tc.f); n != 0 {
			t.Errorf("%s allocates %v times", tc.name, n)
		}
	}
}

// TestETag: an ETag is the quoted base64url of the ETagSize bytes of the
// body's hash (Sum); ParseETag reads back exactly what FormatETag writes and
// refuses anything else, with a short error.
func TestETag(t *testing.T) {
	t.Parallel()
	json := compressible(1000)
	etag := representation.ETag(json)
	if representation.ETag(nil) != "" {
		t.Error("ETag(nil) is not empty")
	}
	if etag == representation.ETag(json[:999]) || etag != representation.ETag(bytes.Clone(json)) {
		t.Error("ETag is not a function of the bytes")
	}
	sum, err := representation.ParseETag(etag)
	if err != nil || representation.FormatETag(sum) != etag {
		t.Fatalf("ParseETag(%s) = %x, %v", etag, sum, err)
	}
	for _, tc := range []struct{ name, etag string }{
		{"empty", ""},
		{"unquoted", etag[1:len(etag)-1] + "x"},
		{"short", `"abc"`},
		{"not base64url", `"` + "AAAAAAAAAAAA+AAAAAAAAAAA" + `"`},
		{"weak", "W/" + etag},
		{"a megabyte", `"` + strings.Repeat("A", 1<<20) + `"`},
		{"a newline", etag[:12] + "\n" + etag[13:]},
		{"padded", etag[:len(etag)-1] + `="`},
	} {
		_, err := representation.ParseETag(tc.etag)
		if err == nil {
			t.Errorf("%s (%.40q): no error", tc.name, tc.etag)
		} else if len(err.Error()) > 200 {
			t.Errorf("%s: an error of %d bytes (it quotes what it refuses)", tc.name, len(err.Error()))
		}
	}
}

// TestEncode: Encode's gzip and brotli decode to the identity bytes, each
// encoding's ETag is the ETag of its bytes and its Content-Length their
// length; a body under 256 bytes, or one compression would not make smaller,
// gets no compressed encodings.
func TestEncode(t *testing.T) {
	t.Parallel()
	for _, e := range []representation.Effort{representation.Fast, representation.Best} {
		for _, tc := range []struct {
			name       string
			json       []byte
			compressed bool
		}{
			{"empty", []byte{}, false},
			{"one byte under 256", compressible(255), false},
			{"256 bytes", compressible(256), true},
			{"4 KiB", compressible(4 << 10), true},
			{"300 KiB", compressible(300 << 10), true},
			{"noise", noise(4<<10, 1), false},
		} {
			name := fmt.Sprintf("%s at %v", tc.name, e)
			b := representation.Encode(tc.json, "ja-JP", e)
			if !bytes.Equal(read(t, &b.Encoded), tc.json) || b.Lang != "ja-JP" || b.Language.Value[0] != "ja-JP" {
				t.Errorf("%s: identity or language not kept", name)
			}
			reps := b.Representations()
			if got := b.Gzip() != nil && b.Brotli() != nil; got != tc.compressed || len(reps) != map[bool]int{false: 1, true: 3}[tc.compressed] {
				t.Errorf("%s: gzip %v, brotli %v, %d representations; want compressed %v", name, b.Gzip() != nil, b.Brotli() != nil, len(reps), tc.compressed)
			}
			for i, rep := range reps {
				want := []string{"", "gzip", "br"}[i]
				if rep.Encoding.Name != "" && rep.Encoding.Value[0] != want || rep.Encoding.Name == "" && want != "" {
					t.Errorf("%s: representation %d is %v, want %q", name, i, rep.Encoding.Value, want)
				}
				got, err := representation.Decode(rep)
				if err != nil || !bytes.Equal(got, tc.json) {
					t.Errorf("%s: %q decodes to %d bytes (%v), want the %d identity bytes", name, want, len(got), err, len(tc.json))
				}
				if i > 0 && rep.Len() >= len(tc.json) {
					t.Errorf("%s: %q is %d bytes, not smaller than %d", name, want, rep.Len(), len(tc.json))
				}
				if rb := read(t, rep); rep.ETag() != representation.ETag(rb) || rep.LengthHeader[0] != fmt.Sprint(len(rb)) || rep.Len() != len(rb) {
					t.Errorf("%s: %q has ETag %s, Content-Length %s", name, want, rep.ETag(), rep.LengthHeader[0])
				}
			}
		}
	}
	if representation.NewBody([]byte(`{}`), "").Language.Name != "" {
		t.Error("a body without a language has a Content-Language field")
	}
}

// TestStored: a body made of a store's sources keeps the checksums it is
// given (an index is not hashed again: they are its ETags), says it has no
// encoding it was not given, reads a stored encoding from its segment, and
// reads an identity that is not stored by decompressing its gzip.
func TestStored(t *testing.T) {
	t.Parallel()
	json := compressible(2 << 10)
	gz, br := representation.Compress(json, representation.Fast)
	w, err := blob.NewWriter("")
	if err != nil {
		t.Fatal(err)
	}
	gzOff, _ := w.Append(gz)
	brOff, _ := w.Append(br)
	fin, err := w.Finish()
	if err != nil {
		t.Fatal(err)
	}
	seg := blob.Memory(fin.Sum, fin.Mem)
	idSum, gzSum, brSum := blob.Checksum(json), blob.Checksum(gz), blob.Checksum(br)
	b := representation.Stored("pt-BR",
		representation.Source{Len: len(json), Sum: idSum},
		representation.Source{Seg: seg, Off: gzOff, Len: len(gz), Sum: gzSum},
		representation.Source{Seg: seg, Off: brOff, Len: len(br), Sum: brSum})
	if b.ETag() != representation.FormatETag(idSum) || b.Gzip().ETag() != representation.FormatETag(gzSum) || b.Brotli().ETag() != representation.FormatETag(brSum) {
		t.Errorf("ETags %s %s %s, not the checksums given", b.ETag(), b.Gzip().ETag(), b.Brotli().ETag())
	}
	if !bytes.Equal(read(t, b.Gzip()), gz) || !bytes.Equal(read(t, b.Brotli()), br) || b.Lang != "pt-BR" || b.Language.Value[0] != "pt-BR" {
		t.Error("encodings or language not kept")
	}
	if !bytes.Equal(read(t, &b.Encoded), json) || b.Len() != len(json) {
		t.Error("the identity is not its gzip decompressed")
	}
	if b.Pick([]string{"gzip"}) != b.Gzip() || b.Pick([]string{"br"}) != b.Brotli() || b.Pick(nil) != &b.Encoded {
		t.Error("Pick does not answer with the given encodings")
	}
	wrong := representation.Stored("", representation.Source{Len: len(json), Sum: idSum + 1},
		representation.Source{Seg: seg, Off: gzOff, Len: len(gz), Sum: gzSum}, representation.Source{})
	if _, err := wrong.JSON(); !errors.Is(err, blob.ErrCorrupt) {
		t.Errorf("an identity whose gzip decompresses to other bytes: %v, want ErrCorrupt", err)
	}
	etag := representation.ETag(json)
	none := representation.Assemble(json, etag, "", nil, "", nil, "")
	if none.Gzip() != nil || none.Brotli() != nil || len(none.Representations()) != 1 || none.ETag() != etag {
		t.Error("a body assembled without compressed encodings has some")
	}
	if other := representation.Assemble(json, etag, "pt-BR", nil, "", nil, ""); other.Language != b.Language {
		t.Error("bodies of one language do not share its Content-Language field")
	}
}

// read is an encoding's bytes.
func read(t *testing.T, e *representation.Encoded) []byte {
	t.Helper()
	b, err := e.Read()
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestShareCompressions: with compressions shared, a body compressed before
// at an effort gives the bytes compressing it again would (as a copy, which
// its caller may change), at another effort its own; a body too small to
// compress keeps nothing. Not parallel: it shares the process's compressors.
func TestShareCompressions(t *testing.T) {
	b := compressible(64 << 10)
	want := map[representation.Effort][2][]byte{}
	for _, e := range []representation.Effort{representation.Fast, representation.Best} {
		gz, br := representation.NewCompressor(e).Compress(b)
		want[e] = [2][]byte{gz, br}
	}
	representation.ShareCompressions(1 << 20)
	defer representation.StopSharingCompressions()
	if gz, br := representation.Compress(b[:100], representation.Best); gz != nil || br != nil || representation.SharedCompressionBytes() != 0 {
		t.Errorf("a body of 100 bytes: gzip %d bytes, brotli %d, %d bytes kept", len(gz), len(br), representation.SharedCompressionBytes())
	}
	for round := range 2 {
		for _, e := range []representation.Effort{representation.Fast, representation.Best} {
			gz, br := representation.NewCompressor(e).Compress(b)
			if !bytes.Equal(gz, want[e][0]) || !bytes.Equal(br, want[e][1]) {
				t.Errorf("round %d, effort %+v: gzip %d bytes, brotli %d; want the %d and %d compressing makes", round, e, len(gz), len(br), len(want[e][0]), len(want[e][1]))
			}
			gz[0] ^= 0xff // the caller's own copy
			br[0] ^= 0xff
		}
		if kept := representation.SharedCompressionBytes(); kept < int64(len(want[representation.Best][0])) {
			t.Errorf("round %d: %d bytes of compressions kept", round, kept)
		}
	}
}

// TestCompressorMatchesNew: a Compressor reused over bodies of different
// sizes (so different brotli windows, each writer reset many times) writes
// byte for byte what a new one writes for each, at Fast and at Best: an
// import reuses them, and a pack must not depend on which body a compressor
// had before.
func TestCompressorMatchesNew(t *testing.T) {
	t.Parallel()
	// Windows of 2^16 to 2^19 bytes, each writer used more than once.
	sizes := []int{300, 70 << 10, 1000, 300 << 10, 150 << 10, 300, 200, 20 << 10, 70 << 10, 1 << 10, 300 << 10}
	bodies := make([][]byte, len(sizes))
	for i, n := range sizes {
		bodies[i] = compressible(n)
		if i%3 == 2 { // compressible bodies of their own content
			bodies[i] = bytes.ReplaceAll(bodies[i], []byte("Odin"), fmt.Appendf(nil, "Vandal %d", i))[:n]
		}
	}
	bodies = append(bodies, noise(8<<10, 3), compressible(8<<10)) // one that does not compress, then one that does
	for _, e := range []representation.Effort{representation.Fast, representation.Best} {
		t.Run(fmt.Sprintf("gzip %d brotli %d", e.Gzip, e.Brotli), func(t *testing.T) {
			t.Parallel()
			z := representation.NewCompressor(e)
			compressed := 0
			for i, b := range bodies {
				gz, br := z.Compress(b)
				wantGz, wantBr := representation.NewCompressor(e).Compress(b)
				if !bytes.Equal(gz, wantGz) || !bytes.Equal(br, wantBr) {
					t.Errorf("body %d (%d bytes): reused compressor wrote gzip %d/br %d bytes, a new one %d/%d", i, len(b), len(gz), len(br), len(wantGz), len(wantBr))
				}
				if gz != nil && br != nil {
					compressed++
				}
			}
			if compressed != len(bodies)-2 { // the 200 bytes and the noise
				t.Errorf("%d of %d bodies compressed, want %d", compressed, len(bodies), len(bodies)-2)
			}
		})
	}
	// Best is smaller than Fast: the effort is the one asked for.
	b := compressible(70 << 10)
	fgz, fbr := representation.Compress(b, representation.Fast)
	bgz, bbr := representation.Compress(b, representation.Best)
	if len(bgz) >= len(fgz) || len(bbr) >= len(fbr) {
		t.Errorf("Best gzip %d/br %d bytes, Fast %d/%d", len(bgz), len(bbr), len(fgz), len(fbr))
	}
}

// TestSizes sums every representation of the bodies.
func TestSizes(t *testing.T) {
	t.Parallel()
	bodies := []*representation.Body{
		representation.Encode(compressible(4<<10), "", representation.Fast),
		representation.Encode(compressible(100), "", representation.Fast),
		representation.NewBody(compressible(2<<10), ""),
	}
	id, gz, br := representation.Sizes(bodies)
	if want := 4<<10 + 100 + 2<<10; id != want {
		t.Errorf("identity %d, want %d", id, want)
	}
	if gz != bodies[0].Gzip().Len() || br != bodies[0].Brotli().Len() {
		t.Errorf("gzip %d, brotli %d; want %d, %d", gz, br, bodies[0].Gzip().Len(), bodies[0].Brotli().Len())
	}
}

// TestStoredIdentityLength: an identity kept as its gzip whose recorded
// length is not what the gzip decompresses to (a damaged index) is refused
// (blob.ErrCorrupt), and reading it allocates no more than the gzip could
// decompress to, whatever the length says. Not parallel: it measures
// allocations.
func TestStoredIdentityLength(t *testing.T) {
	json := compressible(2 << 10)
	gz, _ := representation.Compress(json, representation.Fast)
	seg := blob.Memory("", append([]byte(blob.Magic), gz...))
	gzSrc := representation.Source{Seg: seg, Off: int64(len(blob.Magic)), Len: len(gz), Sum: blob.Checksum(gz)}
	for _, n := range []int{len(json) - 1, len(json) + 1, 1 << 26, math.MaxUint32, math.MaxInt} {
		b := representation.Stored("", representation.Source{Len: n, Sum: blob.Checksum(json)}, gzSrc, representation.Source{})
		var err error
		// Deflate expands at most 1032 to 1; the reader's own state is some
		// tens of kilobytes.
		if a := allocated(func() { _, err = b.JSON() }); a > uint64(1032*len(gz)+256<<10) {
			t.Errorf("an identity said to be %d bytes, its gzip %d: reading it allocated %d bytes", n, len(gz), a)
		}
		if !errors.Is(err, blob.ErrCorrupt) {
			t.Errorf("an identity said to be %d bytes, its gzip %d: %v, want ErrCorrupt", n, len(json), err)
		}
	}
}

// allocated is how many bytes of heap f allocates.
func allocated(f func()) uint64 {
	s := []metrics.Sample{{Name: "/gc/heap/allocs:bytes"}}
	metrics.Read(s)
	before := s[0].Value.Uint64()
	f()
	metrics.Read(s)
	return s[0].Value.Uint64() - before
}
