package blob

import "github.com/refdata/refdata/bounded"

// Key names a cached blob: a segment (as opened), an offset in it and the
// blob's checksum (blobs at one offset, an empty one and the next, or those a
// damaged index names, are not one another); derived is a value made from
// the blob (its identity, decompressed).
type Key struct {
	segment uint64
	off     int64
	sum     uint64
	derived bool
}

// Cache keeps the blobs read last, up to a number of bytes: the bodies a
// replica serves most stay in memory, the rest are read from the page cache.
// A blob over an eighth of the bound is never kept. Safe for concurrent use;
// a nil Cache, or one of 0 bytes, keeps nothing.
type Cache struct {
	c   *bounded.Cache[Key, []byte]
	max int64
}

// DefaultCacheBytes bounds a replica's cache unless told otherwise.
const DefaultCacheBytes = 64 << 20

// NewCache makes a cache of at most maxBytes.
func NewCache(maxBytes int64) *Cache {
	size := func(_ Key, b []byte) int64 { return int64(len(b)) }
	return &Cache{bounded.New(bounded.Limits{Bytes: maxBytes, Largest: maxBytes / 8}, size), maxBytes}
}

// Get returns a kept blob.
func (c *Cache) Get(k Key) ([]byte, bool) {
	if c == nil {
		return nil, false
	}
	return c.c.Get(k)
}

// Keeps says whether a blob of n bytes would be kept: at most an eighth of
// the bound, and none in a cache of 0 bytes (to bounded, 0 is no bound).
func (c *Cache) Keeps(n int) bool { return c != nil && c.max > 0 && int64(n) <= c.max/8 }

// Add keeps b, dropping the blobs used least recently until the bound holds.
func (c *Cache) Add(k Key, b []byte) {
	if c.Keeps(len(b)) {
		c.c.Add(k, b)
	}
}

// Bytes is how many bytes are kept.
func (c *Cache) Bytes() int64 {
	if c == nil {
		return 0
	}
	return c.c.Bytes()
}
