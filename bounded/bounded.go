// Package bounded is a cache bounded by the bytes (and optionally the number)
// of the values it keeps, dropping the least recently used first: the cache
// type of the bodies read from segments, the recolored logos, the rendered
// pages and the compressions a test binary shares.
package bounded

import (
	"sync"

	"github.com/hashicorp/golang-lru/v2/simplelru"
)

// Limits bound a Cache. A zero field is no bound.
type Limits struct {
	Bytes   int64 // the sum of the values' sizes
	Count   int   // the number of values
	Largest int64 // a value over it is never kept
}

// Cache keeps values by key within Limits, each of the size its size function
// gives when it is added. The value added last is kept even when it alone
// passes Bytes (within Largest): dropping it would make every request for it
// make it again. Safe for concurrent use.
type Cache[K comparable, V any] struct {
	limits Limits
	size   func(K, V) int64

	mu    sync.Mutex
	lru   *simplelru.LRU[K, entry[V]]
	bytes int64
}

type entry[V any] struct {
	v V
	n int64 // its size when added, taken back when it leaves
}

// New makes a cache within l, sizing each value with size.
func New[K comparable, V any](l Limits, size func(K, V) int64) *Cache[K, V] {
	c := &Cache[K, V]{limits: l, size: size}
	count := l.Count
	if count <= 0 {
		count = 1 << 30 // bytes are the bound that is reached
	}
	// simplelru only errs on a count below 1.
	c.lru, _ = simplelru.NewLRU[K, entry[V]](count, func(_ K, e entry[V]) { c.bytes -= e.n })
	return c
}

// Get returns the value kept for k, marking it used.
func (c *Cache[K, V]) Get(k K) (V, bool) {
	c.mu.Lock()
	e, ok := c.lru.Get(k)
	c.mu.Unlock()
	return e.v, ok
}

// Keeps says whether a value of n bytes would be kept.
func (c *Cache[K, V]) Keeps(n int64) bool { return c.limits.Largest <= 0 || n <= c.limits.Largest }

// Add keeps v for k (replacing a value kept for k), then drops the values
// used least recently until the limits hold. A value Keeps refuses is not
// added (and one kept for k stays).
func (c *Cache[K, V]) Add(k K, v V) {
	n := c.size(k, v)
	if !c.Keeps(n) {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.lru.Remove(k)
	c.lru.Add(k, entry[V]{v, n})
	c.bytes += n
	for c.limits.Bytes > 0 && c.bytes > c.limits.Bytes && c.lru.Len() > 1 {
		c.lru.RemoveOldest()
	}
}

// Bytes is the sum of the kept values' sizes.
func (c *Cache[K, V]) Bytes() int64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.bytes
}

// Len is the number of values kept.
func (c *Cache[K, V]) Len() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.lru.Len()
}
