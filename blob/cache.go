package blob

import (
	"sync"

	"github.com/hashicorp/golang-lru/v2/simplelru"
)

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
// a nil Cache keeps nothing.
type Cache struct {
	mu    sync.Mutex
	lru   *simplelru.LRU[Key, []byte]
	bytes int64
	max   int64
}

// DefaultCacheBytes bounds a replica's cache unless told otherwise.
const DefaultCacheBytes = 64 << 20

// NewCache makes a cache of at most maxBytes.
func NewCache(maxBytes int64) *Cache {
	c := &Cache{max: maxBytes}
	// The count bound is never the one reached: bytes are.
	c.lru, _ = simplelru.NewLRU[Key, []byte](1<<30, func(_ Key, b []byte) { c.bytes -= int64(len(b)) })
	return c
}

// Get returns a kept blob.
func (c *Cache) Get(k Key) ([]byte, bool) {
	if c == nil {
		return nil, false
	}
	c.mu.Lock()
	b, ok := c.lru.Get(k)
	c.mu.Unlock()
	return b, ok
}

// Keeps says whether a blob of n bytes would be kept.
func (c *Cache) Keeps(n int) bool { return c != nil && int64(n) <= c.max/8 }

// Add keeps b, dropping the blobs used least recently until the bound holds.
func (c *Cache) Add(k Key, b []byte) {
	if !c.Keeps(len(b)) {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.lru.Contains(k) {
		return
	}
	c.lru.Add(k, b)
	c.bytes += int64(len(b))
	for c.bytes > c.max {
		c.lru.RemoveOldest()
	}
}

// Bytes is how many bytes are kept.
func (c *Cache) Bytes() int64 {
	if c == nil {
		return 0
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.bytes
}
