package catalog_test

import (
	"bytes"
	"compress/gzip"
	"io"
	"slices"
	"sort"
	"testing"

	// The brotli decoder is another implementation than the encoder the
	// service uses (go-brrr): a bug the two of one library shared would
	// otherwise pass, and many Go clients decode with this one.
	"github.com/andybalholm/brotli"
	brrr "github.com/molecule-man/go-brrr"

	"github.com/refdata/refdata/catalog"
	"github.com/refdata/refdata/fixtures"
	"github.com/refdata/refdata/representation"
)

// TestCompressedRoundTrip: every compressed representation of every body decodes to
// the identity bytes, and every representation has its own ETag.
func TestCompressedRoundTrip(t *testing.T) {
	ed := protocolEdition(t, 1)
	representation.CompressAll(ed.Bodies())
	bodies := ed.Bodies()
	etags := map[string][]byte{}
	compressed := 0
	for _, b := range bodies {
		for _, rep := range b.Representations() {
			if prev, ok := etags[rep.ETag()]; ok && !bytes.Equal(prev, rep.Bytes) {
				t.Fatalf("ETag %s names two different byte sequences", rep.ETag())
			}
			etags[rep.ETag()] = rep.Bytes
			var r io.Reader
			switch enc := rep.Encoding.Value; {
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
				t.Fatalf("%s does not decode to the identity bytes (err %v)", rep.Encoding.Value[0], err)
			}
			if len(rep.Bytes) >= len(b.JSON) {
				t.Errorf("%s representation is not smaller", rep.Encoding.Value[0])
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
	old, cur := protocolEdition(t, 0), protocolEdition(t, 1)
	same, differ := 0, 0
	for _, u := range cur.UUIDs(catalog.WeaponSkins) {
		a, b := old.Item(catalog.WeaponSkins, u, catalog.DefaultLocale), cur.Item(catalog.WeaponSkins, u, catalog.DefaultLocale)
		if a == nil {
			continue
		}
		if bytes.Equal(a.JSON, b.JSON) != (a.ETag() == b.ETag()) {
			t.Fatalf("%s: equal bytes %v but equal ETags %v", u, bytes.Equal(a.JSON, b.JSON), a.ETag() == b.ETag())
		}
		if a.ETag() == b.ETag() {
			same++
		} else {
			differ++
		}
	}
	if same == 0 {
		t.Error("no unchanged skin kept its ETag")
	}
	if old.VersionBody().ETag() == cur.VersionBody().ETag() {
		t.Error("different version records share an ETag")
	}
	t.Logf("%d skins kept their ETag, %d changed", same, differ)
}

// TestPooledWritersMatchNew: the reused gzip and brotli writers give, for bodies of
// every window size and in any order, the bytes a newly made writer gives, at
// both efforts. The service's ETags depend on it.
func TestPooledWritersMatchNew(t *testing.T) {
	ed := build(t, fixtures.Versions()[1])
	var bodies [][]byte
	for _, b := range ed.Bodies() {
		bodies = append(bodies, b.JSON)
	}
	// A writer that kept state from a body with another window would show here.
	sort.Slice(bodies, func(i, j int) bool { return len(bodies[i]) > len(bodies[j]) })
	// Up to three bodies of each window size, the largest, each followed by a
	// small one; under -short one, the smallest of its window (the same windows
	// at a fraction of the bytes).
	var sample [][]byte
	perWindow := map[int]int{}
	small := len(bodies) - 1
	most := 3
	order := bodies
	if testing.Short() {
		most = 1
		order = slices.Clone(bodies)
		slices.Reverse(order)
	}
	for _, raw := range order {
		w := window(len(raw))
		if perWindow[w] == most || small < 0 {
			continue
		}
		perWindow[w]++
		sample = append(sample, raw, bodies[small])
		small -= 7
	}
	for _, e := range []representation.Effort{representation.Best, representation.Fast} {
		restore := representation.UseEffort(e)
		windows := map[int]bool{}
		for _, raw := range sample {
			if len(raw) < 256 {
				continue
			}
			b := representation.NewBody(raw, "")
			b.Compress()
			var gz, br []byte
			for _, r := range b.Representations() {
				switch {
				case r.Encoding.Value == nil:
				case r.Encoding.Value[0] == "gzip":
					gz = r.Bytes
				case r.Encoding.Value[0] == "br":
					br = r.Bytes
				}
			}
			var want bytes.Buffer
			zw, _ := gzip.NewWriterLevel(&want, e.GzipLevel(len(raw)))
			zw.Write(raw)
			zw.Close()
			if gz != nil && !bytes.Equal(gz, want.Bytes()) {
				t.Fatalf("effort %+v: pooled gzip of a %d-byte body differs from a new writer's", e, len(raw))
			}
			lgwin := window(len(raw))
			windows[lgwin] = true
			want.Reset()
			bw, err := brrr.NewWriterOptions(&want, e.Brotli, brrr.WriterOptions{LGWin: lgwin})
			if err != nil {
				t.Fatal(err)
			}
			bw.Write(raw)
			bw.Close()
			if br == nil || !bytes.Equal(br, want.Bytes()) {
				t.Fatalf("effort %+v: pooled brotli of a %d-byte body differs from a new writer's", e, len(raw))
			}
		}
		restore()
		if len(windows) < 4 {
			t.Errorf("effort %+v: only %d window sizes exercised", e, len(windows))
		}
	}
}

// window is the brotli window Compress chooses for n bytes (2^16 to 2^22).
func window(n int) int {
	lgwin := 16
	for lgwin < 22 && 1<<lgwin < n {
		lgwin++
	}
	return lgwin
}

// BenchmarkCompressItems: compressing every skin body of the newest sample, as a
// load does (reused writers).
func BenchmarkCompressItems(b *testing.B) {
	ed, err := fixtures.Newest()
	if err != nil {
		b.Fatal(err)
	}
	var raws [][]byte
	for _, u := range ed.UUIDs(catalog.WeaponSkins) {
		raws = append(raws, ed.Item(catalog.WeaponSkins, u, catalog.DefaultLocale).JSON)
	}
	b.ResetTimer()
	for range b.N {
		for _, raw := range raws {
			representation.NewBody(raw, "").Compress()
		}
	}
}

// TestReuseCompressed: a new version takes the compressed representations of the
// bodies it shares with the previous one, byte for byte, and compresses the rest
// itself; bodies that changed are never given the old bytes.
func TestReuseCompressed(t *testing.T) {
	old, cur := protocolEdition(t, 0), protocolEdition(t, 1)
	representation.CompressAll(old.Bodies())
	oldByETag := map[string]*representation.Body{}
	for _, b := range old.Bodies() {
		oldByETag[b.ETag()] = b
	}
	n := representation.Reuse(cur.Bodies(), old.Bodies())
	shared := 0
	for _, b := range cur.Bodies() {
		p, ok := oldByETag[b.ETag()]
		if !ok {
			if len(b.JSON) >= 256 && len(b.Representations()) > 1 {
				t.Fatal("a changed body has compressed representations before Compress")
			}
			continue
		}
		shared++
		if len(b.JSON) >= 256 && (len(b.Representations()) != len(p.Representations()) || !bytes.Equal(p.Pick([]string{"br"}).Bytes, b.Pick([]string{"br"}).Bytes)) {
			t.Fatalf("a body with the old bytes does not have the old brotli bytes")
		}
	}
	if n == 0 || n != shared {
		t.Errorf("reused %d bodies, %d have the old bytes", n, shared)
	}
	if n == len(cur.Bodies()) {
		t.Error("every body was reused: the versions do not differ")
	}
	representation.CompressAll(cur.Bodies())
	for _, b := range cur.Bodies() {
		for _, r := range b.Representations() {
			if r.Encoding.Value == nil {
				continue
			}
			var rd io.Reader = bytes.NewReader(r.Bytes)
			if r.Encoding.Value[0] == "gzip" {
				zr, err := gzip.NewReader(rd)
				if err != nil {
					t.Fatal(err)
				}
				rd = zr
			} else {
				rd = brotli.NewReader(rd)
			}
			if got, err := io.ReadAll(rd); err != nil || !bytes.Equal(got, b.JSON) {
				t.Fatalf("%s of a body does not decode to it after reuse", r.Encoding.Value[0])
			}
		}
	}
	t.Logf("%d of %d bodies reused", n, len(cur.Bodies()))
}

// BenchmarkCompressEdition: compressing every body of the newest sample, as a
// start-up or hot swap does (GOMAXPROCS workers).
func BenchmarkCompressEdition(b *testing.B) {
	for range b.N {
		b.StopTimer()
		ed, err := fixtures.Newest()
		if err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
		representation.CompressAll(ed.Bodies())
	}
}
