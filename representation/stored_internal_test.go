package representation

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"testing"

	brotli "github.com/molecule-man/go-brrr"
)

// TestDecodesTo: what MarshalBrotli refuses to store. A stream is good only if
// it decodes to exactly the body's bytes, with nothing after it, and decoding
// stops once it has produced more than the body.
func TestDecodesTo(t *testing.T) {
	body := bytes.Repeat([]byte(`{"displayName":"Reaver Vandal","uuid":"5f0aaf7a"},`), 80)
	other := bytes.Repeat([]byte(`{"displayName":"Prime Vandal","uuid":"12831a2b"},`), 80)
	enc := func(b []byte) []byte {
		t.Helper()
		out, err := brotli.Compress(b, 5)
		if err != nil {
			t.Fatal(err)
		}
		return out
	}
	good := enc(body)
	for _, tc := range []struct {
		name   string
		stream []byte
		want   bool
	}{
		{"the body's stream", good, true},
		{"another body's stream", enc(other), false},
		{"cut short", good[:len(good)/2], false},
		{"a byte after the stream", append(bytes.Clone(good), 0), false},
		{"40 KiB after the stream", append(bytes.Clone(good), make([]byte, 40<<10)...), false},
		{"not brotli", body[:200], false},
		{"the body and more", enc(append(bytes.Clone(body), 'x')), false},
		{"the body 200 times over", enc(bytes.Repeat(body, 200)), false},
		{"empty", nil, false},
	} {
		if got := decodesTo(tc.stream, body); got != tc.want {
			t.Errorf("%s: %v, want %v", tc.name, got, tc.want)
		}
	}
}

// TestDecodesToSeesATailPastTheReadersBuffer: bytes after a stream that ends
// exactly where the decoder's read of its input does are still seen (the
// decoder reports only a tail it has read).
func TestDecodesToSeesATailPastTheReadersBuffer(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	noise := make([]byte, 33<<10)
	for i := range noise {
		noise[i] = byte(r.Uint32())
	}
	for n := 32<<10 - 256; n < 32<<10; n++ {
		br, err := brotli.Compress(noise[:n], 1) // stored blocks: a few bytes more than n
		if err != nil {
			t.Fatal(err)
		}
		if len(br) != 32<<10 {
			continue
		}
		if !decodesTo(br, noise[:n]) {
			t.Fatal("the stream itself does not decode to its bytes")
		}
		if decodesTo(append(br, 0), noise[:n]) {
			t.Error("a byte after a stream of exactly 32 KiB was not seen")
		}
		return
	}
	t.Fatal("no body compressed to exactly 32 KiB; the search range needs widening")
}

// TestMarshalBrotliLeavesOutBadStreams: a body whose brotli does not decode to
// it is not stored (and counted); the others are.
func TestMarshalBrotliLeavesOutBadStreams(t *testing.T) {
	var bodies []*Body
	for i := range 3 {
		bodies = append(bodies, NewBody(bytes.Repeat(fmt.Appendf(nil, `{"displayName":"Vandal %d"},`, i), 50), ""))
	}
	defer func(f func(*compressor, []byte) []byte) { brotliOf = f }(brotliOf)
	good := brotliOf
	brotliOf = func(z *compressor, b []byte) []byte {
		if bytes.Equal(b, bodies[1].JSON) {
			return good(z, bodies[2].JSON) // another body's stream
		}
		return good(z, b)
	}
	blob, n, bad := MarshalBrotli(bodies)
	if n != 2 || bad != 1 {
		t.Fatalf("stored %d, left out %d; want 2, 1", n, bad)
	}
	streams, err := parseBrotli(blob)
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := streams[bodies[1].ETag()]; ok || len(streams) != 2 {
		t.Errorf("stored %d streams, the bad one among them: %v", len(streams), ok)
	}
	for _, b := range bodies {
		if b.enc.Load() != nil {
			t.Error("MarshalBrotli gave a body representations: it only reads them")
		}
	}
}
