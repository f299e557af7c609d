package pages

import (
	"encoding/json"
	"sync"
	"sync/atomic"

	"github.com/refdata/refdata/bounded"
	"github.com/refdata/refdata/media"
	"github.com/refdata/refdata/representation"
)

// pageCache keeps rendered pages, at most maxN and maxBytes of their text (0:
// no bound), dropping the one used least recently first. One render at a time:
// a crawler takes one core, not all, and two requests for a page render it once.
type pageCache[K comparable] struct {
	rendering sync.Mutex
	kept      *bounded.Cache[K, *kept]
}

func newPageCache[K comparable](maxN int, maxBytes int64) *pageCache[K] {
	size := func(_ K, k *kept) int64 { return int64(k.size()) }
	return &pageCache[K]{kept: bounded.New(bounded.Limits{Count: maxN, Bytes: maxBytes}, size)}
}

// kept is a rendered page (a changelog's: one per locale) and the images it shows.
type kept struct {
	bodies []*representation.Body
	img    *images // nil: none
}

func (k *kept) size() (n int) {
	for _, b := range k.bodies {
		n += b.Len()
	}
	return n
}

// get returns the pages kept for key, rendering them when they are not kept or
// the mirror now holds an image they show from upstream.
func (c *pageCache[K]) get(key K, render func() (*kept, error)) (*kept, error) {
	if k := c.fresh(key); k != nil {
		return k, nil
	}
	c.rendering.Lock()
	defer c.rendering.Unlock()
	if k := c.fresh(key); k != nil {
		return k, nil // rendered while this request waited
	}
	k, err := render()
	if err != nil {
		return nil, err
	}
	c.kept.Add(key, k)
	return k, nil
}

// fresh is the pages kept for key unless the mirror now holds an image they lack.
func (c *pageCache[K]) fresh(key K) *kept {
	k, _ := c.kept.Get(key)
	if k == nil || k.img.held() {
		return nil
	}
	return k
}

// images resolves a page's image URLs through the mirror as it renders, then
// tells when the mirror holds one the page shows from upstream (to render it again).
type images struct {
	lib     media.Library   // nil: no mirror
	seen    atomic.Int64    // lib's Len when last looked at
	lacking map[string]bool // the upstream URLs shown that lib did not hold
}

func newImages(lib media.Library) *images {
	i := &images{lib: lib, lacking: map[string]bool{}}
	if lib != nil {
		i.seen.Store(int64(lib.Len()))
	}
	return i
}

// src is where a page loads the image at upstream from: the mirror's path when
// it holds the file, else upstream itself. A nil *images resolves nothing.
func (i *images) src(upstream string) string {
	if upstream == "" || i == nil || i.lib == nil {
		return upstream
	}
	if f, ok := i.lib.Lookup(upstream); ok {
		return f.Path()
	}
	i.lacking[upstream] = true
	return upstream
}

// held reports whether the mirror now holds an image the page lacked, looking
// only when the mirror has grown since it last did.
func (i *images) held() bool {
	if i == nil || len(i.lacking) == 0 {
		return false
	}
	n := int64(i.lib.Len())
	if i.seen.Load() == n {
		return false
	}
	for u := range i.lacking {
		if _, ok := i.lib.Lookup(u); ok {
			return true
		}
	}
	i.seen.Store(n)
	return false
}

// unmarshalBody decodes a body's JSON into v; an error too when its stored
// bytes cannot be read.
func unmarshalBody(b *representation.Body, v any) error {
	data, err := b.JSON()
	if err != nil {
		return err
	}
	return json.Unmarshal(data, v)
}
