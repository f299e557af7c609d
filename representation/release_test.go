package representation

import (
	"bytes"
	"runtime/metrics"
	"sync"
	"testing"
)

// TestReleaseFreesCompressors: after CompressAndRelease no pooled compressor
// for a large window is left (a brotli writer for one holds tens of
// megabytes; one collection only moves it to sync.Pool's victim cache, where
// it stayed live until the heap next doubled), and the collection that frees
// it is made only when such a compressor was pooled: bodies under 64 KiB
// leave compressors of 2–3 MB, not worth marking the heap again. Bodies that
// came compressed (a stored part and brotli) leave nothing to release: no
// collection at all.
func TestReleaseFreesCompressors(t *testing.T) {
	for _, tc := range []struct {
		name       string
		size       int
		compressed bool   // the body has its representations already
		forced     uint64 // collections CompressAndRelease makes
	}{
		{"large", 128 << 10, false, 2},
		{"small", 4 << 10, false, 1},
		{"came compressed", 128 << 10, true, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b := NewBody(bytes.Repeat([]byte(`{"status":200,"data":"abcdefgh"}`), tc.size/32), "")
			if tc.compressed {
				b.Compress()
			}
			CompressAndRelease(nil, 1) // releases whatever earlier tests (and the set-up) pooled
			before := forcedCollections()
			CompressAndRelease([]*Body{b}, 1)
			if got := forcedCollections() - before; got != tc.forced {
				t.Errorf("%d forced collections, want %d", got, tc.forced)
			}
			if len(b.Representations()) != 3 {
				t.Fatal("not compressed")
			}
			if tc.forced < 2 {
				return
			}
			compressors.Range(func(e, p any) bool {
				if z := p.(*sync.Pool).Get(); z != nil {
					t.Errorf("effort %v: a compressor is still pooled after CompressAndRelease", e)
				}
				return true
			})
		})
	}
}

func forcedCollections() uint64 {
	s := []metrics.Sample{{Name: "/gc/cycles/forced:gc-cycles"}}
	metrics.Read(s)
	return s[0].Value.Uint64()
}
