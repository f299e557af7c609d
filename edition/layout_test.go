package edition_test

import (
	"encoding/binary"
	"encoding/json"
	"testing"

	"github.com/refdata/refdata/catalog"
)

// The first line of every index (index.go), of an index written before
// there were bulk files, and of every pack (pack.go).
const (
	indexMagic   = "refdata-index/2\n"
	indexMagicV1 = "refdata-index/1\n"
	packMagic    = "refdata-edition/1\n"
)

// notStored is an encoding's segment number when it is not stored.
const notStored = 0xffff

// layout is where the fields of an index are, found by walking it as
// index.go documents it: for tests that break one field at a time.
type layout struct {
	metaLen, meta       int // offsets of the meta record's length and of its JSON
	segments            int // offset of the segment count
	segs                []segField
	bodies              int // offset of the body count
	heads               []head
	version, locresList int   // offsets of body indexes
	locres              []int // offsets of body indexes
	categories          int   // offset of the category count
	cats                []category
	bulkCount           int   // offset of the bulk file count
	bulk                []int // offsets of each bulk file's body index (its sha256 follows)
}

type segField struct {
	sum, size int // offsets
	sizeOf    uint64
}

type head struct {
	at  int // offset of the language byte
	enc [3]encField
}

// encField is one encoding of a body: the offsets of its fields (off is -1
// when it is not stored) and their values.
type encField struct {
	n, sum, seg, off int
	nOf              uint32
	segOf            uint16
	offOf            uint32
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
			t.Fatalf("index layout: %d bytes at %d of %d", n, off, len(b))
		}
		at := off
		off += n
		return at
	}
	u16 := func() (int, uint16) { at := take(2); return at, binary.LittleEndian.Uint16(b[at:]) }
	u32 := func() (int, uint32) { at := take(4); return at, binary.LittleEndian.Uint32(b[at:]) }
	if string(b[take(len(indexMagic)):off]) != indexMagic {
		t.Fatal("index layout: no magic")
	}
	var l layout
	var n uint32
	l.metaLen, n = u32()
	l.meta = take(int(n))
	if !json.Valid(b[l.meta:off]) {
		t.Fatal("index layout: the meta record is not JSON")
	}
	l.segments, n = u32()
	for range n {
		s := segField{sum: take(32), size: take(8)}
		s.sizeOf = binary.LittleEndian.Uint64(b[s.size:])
		l.segs = append(l.segs, s)
	}
	l.bodies, n = u32()
	for range n {
		h := head{at: take(1)}
		take(len(catalog.Sum{}))
		for j := range h.enc {
			e := &h.enc[j]
			e.n, e.nOf = u32()
			e.sum = take(8)
			e.seg, e.segOf = u16()
			e.off = -1
			if e.segOf != notStored {
				e.off, e.offOf = u32()
				if int(e.segOf) >= len(l.segs) || uint64(e.offOf)+uint64(e.nOf) > l.segs[e.segOf].sizeOf {
					t.Fatalf("index layout: body %d, encoding %d outside its segment", len(l.heads), j)
				}
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
		_, nf := u16()
		for range nf {
			_, nameLen := u16()
			take(int(nameLen))
			for range 2 * (catalog.NumLocales + 1) {
				at, _ := u32()
				c.filters = append(c.filters, at)
			}
		}
		l.cats = append(l.cats, c)
	}
	l.bulkCount, n = u32()
	for range n {
		at, _ := u32()
		take(32)
		l.bulk = append(l.bulk, at)
	}
	if off != len(b) {
		t.Fatalf("index layout: %d bytes after the bulk files", len(b)-off)
	}
	if len(l.cats) != int(catalog.NumCategories) || len(l.segs) == 0 {
		t.Fatalf("index layout: %d categories, %d segments", len(l.cats), len(l.segs))
	}
	return l
}

// stored finds the first body whose encoding j is stored and satisfies ok.
func (l layout) stored(t testing.TB, j int, ok func(h head) bool) head {
	t.Helper()
	for _, h := range l.heads {
		if h.enc[j].off >= 0 && ok(h) {
			return h
		}
	}
	t.Fatalf("no body has encoding %d stored", j)
	return head{}
}
