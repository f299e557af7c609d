package representation

import (
	"bytes"
	"sync"
	"testing"
)

// TestReleaseFreesCompressors: after CompressAndRelease no pooled compressor
// is left (a brotli writer for a large window holds tens of megabytes; one
// collection only moves them to sync.Pool's victim cache, where they stayed
// live until the heap next doubled).
func TestReleaseFreesCompressors(t *testing.T) {
	b := NewBody(bytes.Repeat([]byte(`{"status":200,"data":"abcdefgh"}`), 4096), "")
	CompressAndRelease([]*Body{b}, 1)
	if len(b.Representations()) != 3 {
		t.Fatal("not compressed")
	}
	compressors.Range(func(e, p any) bool {
		if z := p.(*sync.Pool).Get(); z != nil {
			t.Errorf("effort %v: a compressor is still pooled after CompressAndRelease", e)
		}
		return true
	})
}
