package edition_test

import (
	"encoding/binary"
	"encoding/json"
	"testing"

	"github.com/refdata/refdata/catalog"
	"github.com/refdata/refdata/representation"
)

// packMagic is the first line of every pack (pack.go).
const packMagic = "refdata-edition/1\n"

// layout is where the fields of a pack are, found by walking it as pack.go
// documents it: for tests that break one field at a time.
type layout struct {
	metaLen, meta       int // offsets of the meta record's length and of its JSON
	bodies              int // offset of the body count
	heads               []head
	version, locresList int   // offsets of body indexes
	locres              []int // offsets of body indexes
	categories          int   // offset of the category count
	cats                []category
	blobLenAt, blob     int // offsets of the length of the bodies and of the bodies
	blobLen             int
}

type head struct {
	at   int       // offset of the language byte
	lens [3]uint32 // identity, gzip, brotli
}

type category struct {
	nameLen, name, items int // offsets
	nameText             string
	lists                []int   // offsets of the 19 list body indexes
	uuids                []int   // offsets of each item's uuid
	refs                 [][]int // offsets of each item's 19 body indexes
	filters              []int   // offsets of each filter's 2 × 19 list body indexes
}

func layoutOf(t testing.TB, b []byte) layout {
	t.Helper()
	off := 0
	take := func(n int) int {
		t.Helper()
		if n < 0 || off+n > len(b) {
			t.Fatalf("pack layout: %d bytes at %d of %d", n, off, len(b))
		}
		at := off
		off += n
		return at
	}
	u32 := func() (int, uint32) { at := take(4); return at, binary.LittleEndian.Uint32(b[at:]) }
	if string(b[take(len(packMagic)):off]) != packMagic {
		t.Fatal("pack layout: no magic")
	}
	var l layout
	var n uint32
	l.metaLen, n = u32()
	l.meta = take(int(n))
	if !json.Valid(b[l.meta:off]) {
		t.Fatal("pack layout: the meta record is not JSON")
	}
	l.bodies, n = u32()
	for range n {
		h := head{at: take(1)}
		for j := range h.lens {
			_, h.lens[j] = u32()
		}
		for j, n := range h.lens {
			if n > 0 || j == 0 {
				take(representation.ETagSize)
			}
		}
		l.heads = append(l.heads, h)
	}
	l.version, _ = u32()
	l.locresList, _ = u32()
	for range catalog.NumLocales {
		at, _ := u32()
		l.locres = append(l.locres, at)
	}
	l.categories, n = u32()
	for range n {
		var c category
		c.nameLen = take(2)
		c.name = take(int(binary.LittleEndian.Uint16(b[c.nameLen:])))
		c.nameText = string(b[c.name:off])
		var items uint32
		c.items, items = u32()
		for range catalog.NumLocales + 1 {
			at, _ := u32()
			c.lists = append(c.lists, at)
		}
		for range items {
			c.uuids = append(c.uuids, take(16))
			var refs []int
			for range catalog.NumLocales + 1 {
				at, _ := u32()
				refs = append(refs, at)
			}
			c.refs = append(c.refs, refs)
		}
		nf := binary.LittleEndian.Uint16(b[take(2):])
		for range nf {
			take(int(binary.LittleEndian.Uint16(b[take(2):])))
			for range 2 * (catalog.NumLocales + 1) {
				at, _ := u32()
				c.filters = append(c.filters, at)
			}
		}
		l.cats = append(l.cats, c)
	}
	l.blobLenAt = take(8)
	l.blobLen = int(binary.LittleEndian.Uint64(b[l.blobLenAt:]))
	l.blob = take(l.blobLen)
	if off != len(b) {
		t.Fatalf("pack layout: %d bytes after the bodies", len(b)-off)
	}
	sum := 0
	for _, h := range l.heads {
		sum += int(h.lens[0] + h.lens[1] + h.lens[2])
	}
	if sum != l.blobLen || len(l.cats) != int(catalog.NumCategories) {
		t.Fatalf("pack layout: bodies of %d bytes in %d, %d categories", sum, l.blobLen, len(l.cats))
	}
	return l
}
