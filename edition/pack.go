package edition

import (
	"errors"
	"fmt"
	"slices"

	"github.com/refdata/refdata/catalog"
	"github.com/refdata/refdata/representation"
)

// A pack is an edition as one blob, as stores kept it before bodies were
// stored by content (index.go): only read now (DecodePack, which Decode hands
// such a version), so an older store's versions are served and exported as
// they are. Its layout, little-endian:
//
//	"refdata-edition/1\n"
//	u32 length, then the meta record as JSON (as an index's)
//	u32 bodies; per body: u8 language (as an index's), u32 lengths of
//	    identity, gzip and brotli (0: no such encoding), and the 8-byte ETag
//	    hash of each encoding present
//	the routes, as an index's
//	u64 length, then every body's encodings, in body order
const packMagic = "refdata-edition/1\n"

// ErrBadPack is wrapped by DecodePack's and Decode's errors.
var ErrBadPack = errors.New("not a pack or index this program reads")

// DecodePack reads a pack; the bodies are slices of b, which must not change.
// A broken pack is an error wrapping ErrBadPack, never a panic or an
// allocation past what b can hold.
func DecodePack(b []byte) (*Edition, error) {
	d := &reader{b: b}
	if string(d.next(len(packMagic))) != packMagic {
		return nil, fmt.Errorf("%w: no pack header", ErrBadPack)
	}
	m := d.meta()
	type head struct {
		lang byte
		n    [3]uint32 // lengths of identity, gzip and brotli
		sums [3]uint64
	}
	heads := make([]head, d.count(1+12+representation.ETagSize))
	for i := range heads {
		h := &heads[i]
		h.lang = byte(d.uint(1))
		for j := range h.n {
			h.n[j] = uint32(d.uint(4))
		}
		for j, n := range h.n {
			if n > 0 || j == 0 {
				h.sums[j] = d.uint64be()
			}
		}
		if h.lang > allLang && h.lang != noLang {
			d.fail(fmt.Errorf("body %d: language %d", i, h.lang))
		}
	}
	ed := &Edition{Effort: m.Effort}
	ed.setMeta(m.ManifestID, m.Version, m.ContentHash, m.Unknown)
	readRoutes(d, ed, len(heads))
	blob := d.next(int(min(d.uint(8), uint64(len(b)+1))))
	if d.err == nil && d.off != len(b) {
		d.fail(fmt.Errorf("%d bytes after the bodies", len(b)-d.off))
	}
	bodies := make([]*representation.Body, len(heads))
	for i := range heads {
		h := &heads[i]
		total := uint64(h.n[0]) + uint64(h.n[1]) + uint64(h.n[2])
		if d.err != nil || total > uint64(len(blob)) {
			d.fail(fmt.Errorf("body %d runs past the bodies", i))
			break
		}
		var src [3]representation.Source
		for j, n := range h.n {
			if n > 0 || j == 0 {
				src[j] = representation.Source{Mem: blob[:n:n], Len: int(n), Sum: h.sums[j]}
			}
			blob = blob[n:]
		}
		bodies[i] = representation.Stored(langOf(h.lang), src[0], src[1], src[2])
		bodies[i].ID = catalog.SumOf(src[0].Mem) // a pack has no addresses: made once, here
	}
	if d.err == nil && len(blob) != 0 {
		d.fail(fmt.Errorf("%d bytes of bodies no body names", len(blob)))
	}
	if d.err != nil {
		return nil, fmt.Errorf("%w: %v", ErrBadPack, d.err)
	}
	ed.bodies = bodySet{made: bodies}
	if err := ed.makeRules(); err != nil {
		return nil, fmt.Errorf("edition %s: %w", ed.ManifestID, err)
	}
	return ed, nil
}

// meta reads the JSON record.
func (d *reader) meta() meta {
	var m meta
	if raw := d.next(int(d.uint(4))); d.err == nil {
		if err := jsonUnmarshal(raw, &m); err != nil {
			d.fail(fmt.Errorf("meta record: %v", err))
		}
	}
	return m
}

// readRoutes reads the routes of a pack or an index into ed, as refs to its
// n bodies.
func readRoutes(d *reader, ed *Edition, n int) {
	body := func() ref {
		i := d.uint(4)
		if d.err == nil && i >= uint64(n) {
			d.fail(fmt.Errorf("body %d of %d", i, n))
		}
		return ref(i)
	}
	readBodies := func(rs []ref) {
		for i := range rs {
			rs[i] = body()
		}
	}
	ed.version, ed.locresList = body(), body()
	readBodies(ed.locres[:])
	if n := d.uint(4); d.err == nil && n != uint64(catalog.NumCategories) {
		d.fail(fmt.Errorf("%d categories, this program serves %d", n, catalog.NumCategories))
	}
	for range catalog.NumCategories {
		name := string(d.next(int(d.uint(2))))
		c, ok := catalog.CategoryNamed(name)
		if d.err == nil && (!ok || ed.tables[c].items != nil) {
			d.fail(fmt.Errorf("category %.40q unknown or repeated", name))
		}
		if d.err != nil {
			break
		}
		t := &ed.tables[c]
		items := d.count(16 + 4*(catalog.NumLocales+1))
		readBodies(t.list[:])
		t.items = make(map[catalog.UUID]*[catalog.NumLocales + 1]ref, items)
		t.order = make([]catalog.UUID, 0, items)
		for range items {
			raw := d.next(16)
			if d.err != nil {
				break // a body index of the item before was out of range
			}
			u := catalog.UUID(raw)
			var rs [catalog.NumLocales + 1]ref
			readBodies(rs[:])
			if d.err == nil && t.items[u] != nil {
				d.fail(fmt.Errorf("%s: uuid %s twice", name, u))
			}
			t.items[u] = &rs
			t.order = append(t.order, u)
		}
		for range d.uint(2) {
			field := string(d.next(int(d.uint(2))))
			if d.err == nil && !slices.Contains(c.Filters(), field) {
				d.fail(fmt.Errorf("%s: no filter %q", name, field))
			}
			if d.err != nil {
				break
			}
			rs := new([2][catalog.NumLocales + 1]ref)
			readBodies(rs[0][:])
			readBodies(rs[1][:])
			if t.filtered == nil {
				t.filtered = map[string]*[2][catalog.NumLocales + 1]ref{}
			}
			t.filtered[field] = rs
		}
		for _, field := range c.Filters() {
			if d.err == nil && t.filtered[field] == nil {
				d.fail(fmt.Errorf("%s: no lists filtered by %q", name, field))
			}
		}
	}
}

func langOf(b byte) string {
	switch b {
	case noLang:
		return ""
	case allLang:
		return catalog.AllLanguages
	}
	return catalog.Locales[b]
}

// reader reads a pack's or an index's fields; the first error sticks, later
// reads give zero.
type reader struct {
	b   []byte
	off int
	err error
}

func (d *reader) fail(err error) {
	if d.err == nil {
		d.err = err
	}
}

func (d *reader) next(n int) []byte {
	if d.err != nil {
		return nil
	}
	if n < 0 || n > len(d.b)-d.off {
		d.fail(fmt.Errorf("a field of %d bytes at %d, %d left", n, d.off, len(d.b)-d.off))
		return nil
	}
	out := d.b[d.off : d.off+n : d.off+n]
	d.off += n
	return out
}

// uint reads an n-byte little-endian number.
func (d *reader) uint(n int) uint64 {
	var v uint64
	for i, c := range d.next(n) {
		v |= uint64(c) << (8 * i)
	}
	return v
}

// uint64be reads an 8-byte big-endian number (a pack's ETag hash).
func (d *reader) uint64be() uint64 {
	var v uint64
	for _, c := range d.next(8) {
		v = v<<8 | uint64(c)
	}
	return v
}

// count reads a count of things of at least min bytes each that what is left
// can hold, so allocating for it stays within b.
func (d *reader) count(min int) int {
	n := int(d.uint(4))
	if d.err == nil && n > (len(d.b)-d.off)/min {
		d.fail(fmt.Errorf("%d entries do not fit in the %d bytes left", n, len(d.b)-d.off))
	}
	if d.err != nil {
		return 0
	}
	return n
}
