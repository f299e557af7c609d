package edition

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"

	"github.com/refdata/refdata/catalog"
	"github.com/refdata/refdata/gen"
	"github.com/refdata/refdata/representation"
)

// A pack is an edition as bytes: what an import writes once and every server
// reads. Its layout is this package's own, little-endian:
//
//	"refdata-edition/1\n"
//	u32 length, then the meta record as JSON (manifestId, contentHash,
//	    version, effort, the fields openapi.yaml does not describe)
//	u32 bodies; per body: u8 language (a locale's index, 18 for
//	    language=all, 255 for none), u32 lengths of identity, gzip and brotli
//	    (0: no such encoding), and the ETag hash of each encoding present
//	the routes, as body indexes: the version record, the locale list, the 18
//	    string tables; then u32 categories, each: u16 length and name, u32
//	    items, 19 list bodies, per item its 16-byte uuid and 19 bodies, and
//	    u16 filters, each: u16 length and field name, 2 × 19 list bodies
//	u64 length, then every body's encodings, in body order
//
// By hand: the reader slices the bodies out of one buffer without copying and
// refuses a broken pack before it allocates for it (encoding/gob allocates
// what a header announces). The store checks a pack's checksum.
const packMagic = "refdata-edition/1\n"

// The language bytes of a language=all body and of a body without text.
const (
	allLang = catalog.NumLocales
	noLang  = 255
)

// meta is the pack's JSON record.
type meta struct {
	ManifestID  string                `json:"manifestId"`
	ContentHash string                `json:"contentHash"`
	Version     gen.Version           `json:"version"`
	Effort      representation.Effort `json:"effort"`
	Unknown     []catalog.Unknown     `json:"unknown,omitempty"`
}

// Options tune Encode.
type Options struct {
	Effort representation.Effort // zero: compress nothing
	// Previous, when not nil and compressed at Effort, lends the encodings
	// of its bodies that r has byte for byte: consecutive versions share most
	// bodies, and compressing is most of the cost.
	Previous *Edition
}

// encoded is one distinct body of a pack being written.
type encoded struct {
	doc       *catalog.Doc
	sum       [representation.ETagSize]byte
	gz, br    []byte
	gzS, brS  [representation.ETagSize]byte
	duplicate int // index of the body with the same bytes and language, or -1
}

// Encode compresses every body of r at opt.Effort, on every core, and writes
// the pack. A body in a language the pack cannot name is an error.
func Encode(r *catalog.Rendered, opt Options) ([]byte, error) {
	docs := r.Docs()
	for _, d := range docs {
		if _, ok := langByte(d.Lang); !ok {
			return nil, fmt.Errorf("encode %s: a body in language %.40q", r.ManifestID, d.Lang)
		}
	}
	enc := make([]encoded, len(docs))
	parallel(len(docs), func(i int) {
		enc[i] = encoded{doc: docs[i], sum: sum(docs[i].JSON)}
	})
	// Bodies with the same bytes and language are one body.
	type key struct {
		sum  [representation.ETagSize]byte
		lang string
	}
	first := map[key]int{}
	for i := range enc {
		k := key{enc[i].sum, enc[i].doc.Lang}
		if j, ok := first[k]; ok && bytes.Equal(enc[j].doc.JSON, enc[i].doc.JSON) {
			enc[i].duplicate = j
			continue
		}
		first[k] = i
		enc[i].duplicate = -1
	}
	lend := lender(opt)
	compressors := sync.Pool{New: func() any { return representation.NewCompressor(opt.Effort) }}
	parallel(len(enc), func(i int) {
		e := &enc[i]
		if e.duplicate >= 0 || opt.Effort == (representation.Effort{}) {
			return
		}
		if p := lend[e.sum]; p != nil && bytes.Equal(p.JSON, e.doc.JSON) {
			e.gz, e.br = bytesOf(p.Gzip()), bytesOf(p.Brotli())
		} else {
			z := compressors.Get().(*representation.Compressor)
			e.gz, e.br = z.Compress(e.doc.JSON)
			compressors.Put(z)
		}
		e.gzS, e.brS = sum(e.gz), sum(e.br) // written only for an encoding present
	})
	return write(r, opt.Effort, enc)
}

// lender indexes the bodies Options.Previous can lend by ETag hash.
func lender(opt Options) map[[representation.ETagSize]byte]*representation.Body {
	p := opt.Previous
	if p == nil || p.Effort != opt.Effort {
		return nil
	}
	out := make(map[[representation.ETagSize]byte]*representation.Body, len(p.bodies))
	for _, b := range p.bodies {
		if h, err := representation.ParseETag(b.ETag()); err == nil {
			out[[representation.ETagSize]byte(h)] = b
		}
	}
	return out
}

func bytesOf(e *representation.Encoded) []byte {
	if e == nil {
		return nil
	}
	return e.Bytes
}

func sum(b []byte) [representation.ETagSize]byte {
	return [representation.ETagSize]byte(representation.Sum(b))
}

// parallel calls f(0) … f(n-1) from one goroutine per core.
func parallel(n int, f func(int)) {
	var next atomic.Int64
	var wg sync.WaitGroup
	for range runtime.GOMAXPROCS(0) {
		wg.Go(func() {
			for i := int(next.Add(1)) - 1; i < n; i = int(next.Add(1)) - 1 {
				f(i)
			}
		})
	}
	wg.Wait()
}

func write(r *catalog.Rendered, eff representation.Effort, enc []encoded) ([]byte, error) {
	m, err := json.Marshal(meta{ManifestID: r.ManifestID, ContentHash: r.ContentHash, Version: r.Version, Effort: eff, Unknown: r.Unknown})
	if err != nil {
		return nil, fmt.Errorf("encode %s: %w", r.ManifestID, err)
	}
	// Body indexes in the pack: duplicates take their first's.
	index := make(map[*catalog.Doc]uint32, len(enc))
	var bodies []int
	for i := range enc {
		if d := enc[i].duplicate; d >= 0 {
			index[enc[i].doc] = index[enc[d].doc] // d < i
			continue
		}
		index[enc[i].doc] = uint32(len(bodies))
		bodies = append(bodies, i)
	}
	blob := 0
	for _, i := range bodies {
		blob += len(enc[i].doc.JSON) + len(enc[i].gz) + len(enc[i].br)
	}
	b := make([]byte, 0, len(packMagic)+len(m)+len(bodies)*70+blob+1<<16)
	u32 := func(n int) { b = binary.LittleEndian.AppendUint32(b, uint32(n)) }
	name := func(s string) { b = append(binary.LittleEndian.AppendUint16(b, uint16(len(s))), s...) }
	refs := func(ds ...*catalog.Doc) {
		for _, d := range ds {
			u32(int(index[d]))
		}
	}
	b = append(b, packMagic...)
	u32(len(m))
	b = append(b, m...)
	u32(len(bodies))
	for _, i := range bodies {
		e := &enc[i]
		lang, _ := langByte(e.doc.Lang)
		b = append(b, lang)
		for _, n := range []int{len(e.doc.JSON), len(e.gz), len(e.br)} {
			u32(n)
		}
		b = append(b, e.sum[:]...)
		if e.gz != nil {
			b = append(b, e.gzS[:]...)
		}
		if e.br != nil {
			b = append(b, e.brS[:]...)
		}
	}
	refs(r.VersionBody, r.LocresList)
	refs(r.Locres[:]...)
	u32(int(catalog.NumCategories))
	for _, c := range catalog.Categories() {
		t := &r.Tables[c]
		name(c.Name())
		u32(len(t.Order))
		refs(t.List[:]...)
		for _, u := range t.Order {
			b = append(b, u[:]...)
			refs(t.Items[u][:]...)
		}
		fields := slices.Sorted(maps.Keys(t.Filtered))
		b = binary.LittleEndian.AppendUint16(b, uint16(len(fields)))
		for _, f := range fields {
			name(f)
			refs(slices.Concat(t.Filtered[f][0][:], t.Filtered[f][1][:])...)
		}
	}
	b = binary.LittleEndian.AppendUint64(b, uint64(blob))
	for _, i := range bodies {
		b = append(b, enc[i].doc.JSON...)
		b = append(b, enc[i].gz...)
		b = append(b, enc[i].br...)
	}
	return b, nil
}

// langByte is a body's language byte; false for one langOf would not give back.
func langByte(lang string) (byte, bool) {
	switch lang {
	case "":
		return noLang, true
	case catalog.AllLanguages:
		return allLang, true
	}
	loc, ok := catalog.ParseLocale(lang)
	return byte(loc), ok && catalog.Locales[loc] == lang
}

// Build encodes r and reads the pack back, as a server reads an import's.
func Build(r *catalog.Rendered, opt Options) (*Edition, error) {
	b, err := Encode(r, opt)
	if err != nil {
		return nil, err
	}
	return Decode(b)
}

// ErrBadPack is wrapped by Decode's errors.
var ErrBadPack = errors.New("not a pack this program reads")

// Decode reads a pack Encode wrote; the bodies are slices of b, which must not
// change. A broken pack is an error wrapping ErrBadPack, never a panic or an
// allocation past what b can hold.
func Decode(b []byte) (*Edition, error) {
	d := &reader{b: b}
	if string(d.next(len(packMagic))) != packMagic {
		return nil, fmt.Errorf("%w: no pack header", ErrBadPack)
	}
	var m meta
	if raw := d.next(int(d.uint(4))); d.err == nil {
		if err := json.Unmarshal(raw, &m); err != nil {
			d.fail(fmt.Errorf("meta record: %v", err))
		}
	}
	type head struct {
		lang  byte
		n     [3]uint32 // lengths of identity, gzip and brotli
		etags [3]string // "" and enc nil for an encoding not present
		enc   [3][]byte
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
				h.etags[j] = representation.FormatETag(d.next(representation.ETagSize))
			}
		}
		if h.lang > allLang && h.lang != noLang {
			d.fail(fmt.Errorf("body %d: language %d", i, h.lang))
		}
	}
	// The routes, as a rendered version whose docs stand for the bodies.
	docs := make([]catalog.Doc, len(heads))
	r := &catalog.Rendered{ManifestID: m.ManifestID, Version: m.Version, ContentHash: m.ContentHash, Unknown: m.Unknown}
	body := func() *catalog.Doc {
		i := d.uint(4)
		if d.err == nil && i >= uint64(len(heads)) {
			d.fail(fmt.Errorf("body %d of %d", i, len(heads)))
		}
		if d.err != nil {
			return nil
		}
		return &docs[i]
	}
	readBodies := func(ds []*catalog.Doc) {
		for i := range ds {
			ds[i] = body()
		}
	}
	r.VersionBody, r.LocresList = body(), body()
	readBodies(r.Locres[:])
	if n := d.uint(4); d.err == nil && n != uint64(catalog.NumCategories) {
		d.fail(fmt.Errorf("%d categories, this program serves %d", n, catalog.NumCategories))
	}
	for range catalog.NumCategories {
		name := string(d.next(int(d.uint(2))))
		c, ok := catalog.CategoryNamed(name)
		if d.err == nil && (!ok || r.Tables[c].Items != nil) {
			d.fail(fmt.Errorf("category %.40q unknown or repeated", name))
		}
		if d.err != nil {
			break
		}
		t := &r.Tables[c]
		n := d.count(16 + 4*(catalog.NumLocales+1))
		readBodies(t.List[:])
		t.Items = make(map[catalog.UUID]*[catalog.NumLocales + 1]*catalog.Doc, n)
		t.Order = make([]catalog.UUID, 0, n)
		for range n {
			raw := d.next(16)
			if d.err != nil {
				break // a body index of the item before was out of range
			}
			u := catalog.UUID(raw)
			var ds [catalog.NumLocales + 1]*catalog.Doc
			readBodies(ds[:])
			if d.err == nil && t.Items[u] != nil {
				d.fail(fmt.Errorf("%s: uuid %s twice", name, u))
			}
			t.Items[u] = &ds
			t.Order = append(t.Order, u)
		}
		for range d.uint(2) {
			field := string(d.next(int(d.uint(2))))
			if d.err == nil && !slices.Contains(c.Filters(), field) {
				d.fail(fmt.Errorf("%s: no filter %q", name, field))
			}
			if d.err != nil {
				break
			}
			ds := new([2][catalog.NumLocales + 1]*catalog.Doc)
			readBodies(ds[0][:])
			readBodies(ds[1][:])
			if t.Filtered == nil {
				t.Filtered = map[string]*[2][catalog.NumLocales + 1]*catalog.Doc{}
			}
			t.Filtered[field] = ds
		}
		for _, field := range c.Filters() {
			if d.err == nil && t.Filtered[field] == nil {
				d.fail(fmt.Errorf("%s: no lists filtered by %q", name, field))
			}
		}
	}
	blob := d.next(int(min(d.uint(8), uint64(len(b)+1))))
	if d.err == nil && d.off != len(b) {
		d.fail(fmt.Errorf("%d bytes after the bodies", len(b)-d.off))
	}
	for i := range heads {
		h := &heads[i]
		total := uint64(h.n[0]) + uint64(h.n[1]) + uint64(h.n[2])
		if d.err != nil || total > uint64(len(blob)) {
			d.fail(fmt.Errorf("body %d runs past the bodies", i))
			break
		}
		for j, n := range h.n {
			if n > 0 || j == 0 {
				h.enc[j] = blob[:n:n]
			}
			blob = blob[n:]
		}
	}
	if d.err == nil && len(blob) != 0 {
		d.fail(fmt.Errorf("%d bytes of bodies no body names", len(blob)))
	}
	if d.err != nil {
		return nil, fmt.Errorf("%w: %v", ErrBadPack, d.err)
	}

	bodies := make([]*representation.Body, len(heads))
	ptrs := make([]*catalog.Doc, len(heads))
	for i, h := range heads {
		bodies[i] = representation.Assemble(h.enc[0], h.etags[0], langOf(h.lang), h.enc[1], h.etags[1], h.enc[2], h.etags[2])
		ptrs[i] = &docs[i]
	}
	return assemble(r, m.Effort, ptrs, bodies), nil
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

// reader reads a pack's fields; the first error sticks, later reads give zero.
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
