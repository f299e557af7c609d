package representation_test

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"testing"

	"github.com/refdata/refdata/representation"
)

// storedSample is three bodies large enough to compress, compressed here, as
// an import leaves them.
func storedSample(t *testing.T) (bodies []*representation.Body, blob []byte) {
	t.Helper()
	for i := range 3 {
		json := bytes.Repeat(fmt.Appendf(nil, `{"displayName":"Reaver Vandal %d","uuid":"%08x"},`, i, i*7919), 60+i*40)
		b := representation.NewBody(json, "en-US")
		b.Compress()
		bodies = append(bodies, b)
	}
	blob, n, bad := representation.MarshalBrotli(bodies)
	if n != len(bodies) || bad != 0 {
		t.Fatalf("MarshalBrotli wrote %d of %d bodies, left out %d", n, len(bodies), bad)
	}
	return bodies, blob
}

// swapped is bodies as a swap has them before their brotli: new bodies of the
// same bytes with their gzip alone.
func swapped(bodies []*representation.Body) []*representation.Body {
	var out []*representation.Body
	for _, b := range bodies {
		n := representation.NewBody(b.JSON, b.Lang)
		n.CompressGzip()
		out = append(out, n)
	}
	return out
}

func brOf(b *representation.Body) *representation.Encoded {
	rep := b.Pick([]string{"br"})
	if rep.Encoding.Name == "" {
		return nil
	}
	return rep
}

// entry is one entry of the stored format, for blobs the writer would never
// make.
func entry(etag string, br []byte) []byte {
	out := binary.BigEndian.AppendUint32(nil, uint32(len(etag)))
	out = append(out, etag...)
	out = binary.BigEndian.AppendUint32(out, uint32(len(br)))
	return append(out, br...)
}

// TestApplyBrotli: stored brotli is installed on the bodies it was made from,
// the same bytes and ETag as compressing here; the gzip stays.
func TestApplyBrotli(t *testing.T) {
	made, blob := storedSample(t)
	bodies := swapped(made)
	gz := bodies[0].Pick([]string{"gzip"})
	bodies = append(bodies, representation.NewBody([]byte(`{"status":200}`), "")) // too small: never has brotli
	applied, err := representation.ApplyBrotli(blob, bodies)
	if err != nil || applied != 3 {
		t.Fatalf("applied %d, err %v; want 3, nil", applied, err)
	}
	for i, b := range made {
		got, want := brOf(bodies[i]), brOf(b)
		if got == nil || !bytes.Equal(got.Bytes, want.Bytes) || got.ETag() != want.ETag() {
			t.Errorf("body %d: brotli not the one made at import", i)
		}
	}
	if again := bodies[0].Pick([]string{"gzip"}); &again.Bytes[0] != &gz.Bytes[0] {
		t.Error("applying brotli replaced the gzip")
	}
	// Applied twice: the bodies have theirs; nothing changes.
	if applied, _ := representation.ApplyBrotli(blob, bodies); applied != 0 {
		t.Errorf("applied again to %d bodies", applied)
	}
	// Bodies without their gzip yet (a start-up) are left to Compress.
	fresh := []*representation.Body{representation.NewBody(made[0].JSON, "")}
	if applied, _ := representation.ApplyBrotli(blob, fresh); applied != 0 || brOf(fresh[0]) != nil {
		t.Error("brotli installed on a body without its gzip")
	}
}

// TestApplyBrotliRefuses: a blob that does not parse is refused whole, and
// nothing is installed.
func TestApplyBrotliRefuses(t *testing.T) {
	made, _ := storedSample(t)
	good := brOf(made[0]).Bytes
	tag := made[0].ETag()
	magic := []byte("refdata-brotli-1\n")
	for _, tc := range []struct {
		name string
		blob []byte
	}{
		{"empty", nil},
		{"no magic line", entry(tag, good)},
		{"another magic", append([]byte("refdata-brotli-2\n"), entry(tag, good)...)},
		{"a length past the end", append(append([]byte{}, magic...), entry(tag, good)[:len(entry(tag, good))-1]...)},
		{"an ETag alone", append(append([]byte{}, magic...), entry(tag, nil)[:4+len(tag)]...)},
		{"a length of 4 GiB", append(append([]byte{}, magic...), 0xff, 0xff, 0xff, 0xff)},
		{"an ETag not this program's", append(append([]byte{}, magic...), entry(`"abc"`, good)...)},
		{"good entry then garbage", append(append(append([]byte{}, magic...), entry(tag, good)...), 0, 0)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			bodies := swapped(made[:1])
			applied, err := representation.ApplyBrotli(tc.blob, bodies)
			if !errors.Is(err, representation.ErrBadBrotli) || applied != 0 || brOf(bodies[0]) != nil {
				t.Errorf("applied %d, err %v, brotli %v; want 0, ErrBadBrotli, none", applied, err, brOf(bodies[0]) != nil)
			}
		})
	}
}
