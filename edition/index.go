package edition

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"
	"weak"

	"github.com/refdata/refdata/blob"
	"github.com/refdata/refdata/catalog"
	"github.com/refdata/refdata/gen"
	"github.com/refdata/refdata/representation"
)

// An index is an edition as a store keeps it: what an import writes once and
// every server reads, its bodies' bytes kept apart in segments (package blob),
// each stored once however many versions name it. Its layout is this
// package's own, little-endian:
//
//	"refdata-index/1\n"
//	u32 length, then the meta record as JSON (manifestId, contentHash,
//	    version, effort, the fields openapi.yaml does not describe)
//	u32 segments; per segment: its sha256 and u64 size
//	u32 bodies; per body: u8 language (a locale's index, 18 for
//	    language=all, 255 for none), its address (catalog.Sum of its
//	    identity bytes, 16 bytes), then identity, gzip and brotli, each: u32
//	    length (0 for gzip or brotli: no such encoding), u64 checksum
//	    (blob.Checksum, the ETag's hash), u16 segment (noSegment: not
//	    stored) and, when stored, u32 offset. An identity is stored only
//	    where no gzip is: elsewhere it is the gzip decompressed.
//	the routes, as body indexes: the version record, the locale list, the 18
//	    string tables; then u32 categories, each: u16 length and name, u32
//	    items, 19 list bodies, per item its 16-byte uuid and 19 bodies, and
//	    u16 filters, each: u16 length and field name, 2 × 19 list bodies
//	u32 bulk files, 0 or 19 (the 18 locales, then language=all), each: its
//	    body and the sha256 of its identity bytes
//
// An index "refdata-index/1\n" (written before there were bulk files) is
// the same without them.
//
// By hand: the reader refuses a broken index before it allocates for it
// (encoding/gob allocates what a header announces), and the layout is a flat
// table a replica reads in one pass. The store checks an index's checksum.
const (
	indexMagic   = "refdata-index/2\n"
	indexMagicV1 = "refdata-index/1\n"
)

// The language bytes of a language=all body and of a body without text.
const (
	allLang = catalog.NumLocales
	noLang  = 255
)

var jsonUnmarshal = json.Unmarshal

// noSegment marks an encoding that is not stored (an identity kept as gzip);
// an index names fewer segments, and a segment is under maxSegment bytes, so
// offsets fit in 32 bits.
const (
	noSegment  = ^uint16(0)
	maxSegment = 1<<32 - 1
)

// meta is the index's JSON record.
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
	// Base, when not nil, is the edition this one follows (the active
	// version): a body it has byte for byte, compressed at Effort, is not
	// compressed or stored again but named where Base keeps it. Consecutive
	// versions share most bodies, and compressing is most of an import.
	Base *Edition
	// Dir is where the new segment is written (a store's staging
	// directory); "" keeps it in memory.
	Dir string
}

// Encoded is what Encode made: the index, and the segment of the blobs no
// segment the index names had before (nil when there were none).
type Encoded struct {
	Index   []byte
	Segment *blob.Finished
	// Segments are the sha256 of every segment the index names, the new one
	// included: the store keeps them while it keeps the version.
	Segments []string
	// Stored is the bytes the new segment holds; Copied, of those, the bytes
	// copied from segments the version mostly no longer needs (reuse).
	Stored, Copied int64
}

// Discard removes the new segment's temporary file, if the store has not
// taken it over (Publish moves it); for an import that stopped before that.
func (e *Encoded) Discard() {
	if e.Segment != nil && e.Segment.Path != "" {
		_ = os.Remove(e.Segment.Path)
	}
}

// body is one distinct body of an index: its address, language and encodings.
type body struct {
	id   catalog.Sum
	lang byte
	enc  [3]slot // identity, gzip, brotli
}

// slot is where one encoding of a body is. n == 0 for a gzip or brotli:
// none. 24 bytes: an import holds one per encoding of every body.
type slot struct {
	sum uint64
	at  *blob.Segment // nil: not stored (an identity kept as gzip); pending: the new segment
	off uint32        // a segment is under maxSegment bytes
	n   uint32
}

// pending stands for the segment being written until it has its name.
var pending = new(blob.Segment)

// Encode compresses every body of r at opt.Effort that opt.Base does not
// have, on every core, writes the new blobs to a new segment and returns the
// index. A body in a language the index cannot name is an error.
func Encode(r *catalog.Rendered, opt Options) (*Encoded, error) {
	e, err := NewEncoder(opt)
	if err != nil {
		return nil, err
	}
	if err := e.Add(r.Docs()); err != nil {
		return nil, err
	}
	return e.Finish(r)
}

// Encoder writes an index and its new segment as a rendered version's bodies
// arrive, a group at a time (Add), so an import need never hold a version's
// bodies whole: once added, a doc's bytes are not needed again.
type Encoder struct {
	opt    Options
	seg    *blob.Writer
	base   map[bodyKey]ref // the Base's bodies
	index  map[*catalog.Doc]uint32
	first  map[bodyKey]uint32
	bodies []body
	// small are each core's compressor (gzip, and brotli at the small
	// window); large are those that compress at brotli's large window, one
	// per kind of tables (representation.BrotliTables), 32 MB each: one
	// per import, not one per core. A writer keeps its tables, so none go
	// through go-brrr's pool, whose Put and Get on different cores made new
	// ones beside those kept.
	small []*representation.Compressor
	large [2]*representation.Compressor
	// bulkSums: the sha256 of each bulk file's identity (bulk.go).
	bulkSums map[*catalog.Doc][sha256.Size]byte

	stored, copied int64
}

type bodyKey struct {
	id   catalog.Sum
	lang byte
}

// NewEncoder starts an index, its new segment in opt.Dir.
func NewEncoder(opt Options) (*Encoder, error) {
	seg, err := blob.NewWriter(opt.Dir)
	if err != nil {
		return nil, err
	}
	e := &Encoder{opt: opt, seg: seg, index: map[*catalog.Doc]uint32{}, first: map[bodyKey]uint32{}, bulkSums: map[*catalog.Doc][sha256.Size]byte{}}
	e.small = make([]*representation.Compressor, runtime.GOMAXPROCS(0))
	for i := range e.small {
		e.small[i] = representation.NewCompressor(opt.Effort)
	}
	for i := range e.large {
		e.large[i] = representation.NewCompressor(opt.Effort)
	}
	if b := opt.Base; b != nil && b.Effort == opt.Effort && opt.Effort != (representation.Effort{}) {
		e.base = make(map[bodyKey]ref, b.bodies.count())
		b.bodies.each(func(r ref, id catalog.Sum, lang string) {
			l, _ := langByte(lang)
			e.base[bodyKey{id, l}] = r
		})
	}
	return e, nil
}

// Abort drops the new segment: an import that stopped.
func (e *Encoder) Abort() { e.seg.Abort() }

// batch and batchBytes bound the bodies compressed before they are written:
// what the encoder holds at once beyond the docs it is given.
const (
	batch      = 1024
	batchBytes = 16 << 20
)

// Add encodes docs: each body the version has not had yet is hashed (its
// Sum), and, unless the Base has it, compressed on every core and written
// to the new segment, in order, so the same version makes the same segment.
// A bulk file is made last (addBulk), of items added before it or with it.
// A doc in a language the index cannot name is an error.
func (e *Encoder) Add(docs []*catalog.Doc) error {
	var bulk []*catalog.Doc
	for _, d := range docs {
		if _, ok := langByte(d.Lang); !ok {
			return fmt.Errorf("encode: a body in language %.40q", d.Lang)
		}
		if d.IsBulk() {
			bulk = append(bulk, d)
		}
	}
	if bulk != nil {
		docs = slices.DeleteFunc(slices.Clone(docs), (*catalog.Doc).IsBulk)
	}
	if err := e.add(docs); err != nil {
		return err
	}
	if bulk != nil {
		return e.addBulk(bulk)
	}
	return nil
}

// add is Add for docs that are not bulk files.
func (e *Encoder) add(docs []*catalog.Doc) error {
	parallel(len(docs), func(i int) {
		h := sha256.New()
		_, _ = docs[i].WriteTo(h)
		docs[i].Sum = catalog.Sum(h.Sum(nil))
	})
	var fresh []*catalog.Doc
	var at []uint32
	for _, d := range docs {
		lang, _ := langByte(d.Lang)
		k := bodyKey{d.Sum, lang}
		if j, ok := e.first[k]; ok {
			e.index[d] = j // the same bytes in the same language: one body
			continue
		}
		j := uint32(len(e.bodies))
		e.first[k], e.index[d] = j, j
		b := body{id: d.Sum, lang: lang}
		if old, ok := e.base[k]; ok {
			e.reuse(&b, e.opt.Base.bodies.sourcesAt(old))
		} else {
			fresh = append(fresh, d)
			at = append(at, j)
		}
		e.bodies = append(e.bodies, b)
	}
	for lo, hi := 0, 0; lo < len(fresh); lo = hi {
		size := 0
		for hi = lo; hi < len(fresh) && hi-lo < batch && (hi == lo || size+fresh[hi].Len() <= batchBytes); hi++ {
			size += fresh[hi].Len()
		}
		data := e.compress(fresh[lo:hi])
		for k := range data {
			if err := e.write(&e.bodies[at[lo+k]], data[k]); err != nil {
				e.Abort()
				return err
			}
		}
	}
	return nil
}

// compress is each doc's identity, gzip and brotli (nil where none): gzip
// and small-window brotli on every core, large-window brotli meanwhile on
// one goroutine with the large writers.
func (e *Encoder) compress(docs []*catalog.Doc) [][3][]byte {
	data := make([][3][]byte, len(docs))
	parallel(len(docs), func(k int) { data[k][0] = docs[k].Bytes() })
	if e.opt.Effort == (representation.Effort{}) {
		return data
	}
	var large []int
	for k := range data {
		if representation.LargeWindow(len(data[k][0])) {
			large = append(large, k)
		}
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		for _, k := range large {
			z := e.large[representation.BrotliTables(len(data[k][0]))]
			if z == nil { // let go of by the bulk files
				z = representation.NewCompressor(e.opt.Effort)
				e.large[1] = z
			}
			data[k][2] = z.Brotli(data[k][0])
		}
	}()
	parallelN(len(docs), len(e.small), func(w, k int) {
		z := e.small[w]
		data[k][1] = z.Gzip(data[k][0])
		if !representation.LargeWindow(len(data[k][0])) {
			data[k][2] = z.Brotli(data[k][0])
		}
	})
	<-done
	return data
}

// reuse names, for a body the Base has, its encodings where the Base keeps
// them (in memory: they are written anew).
func (e *Encoder) reuse(b *body, old [3]representation.Source) {
	for j, src := range old {
		if j > 0 && src.Len == 0 && src.Mem == nil {
			continue // no such encoding
		}
		b.enc[j] = slot{n: uint32(src.Len), sum: src.Sum, at: src.Seg, off: uint32(src.Off)}
		if src.Mem != nil {
			b.enc[j].at = nil
			if j == 0 && old[1].Len == 0 || j > 0 {
				if err := e.append(&b.enc[j], src.Mem); err != nil {
					e.seg.Abort() // reported by Finish: the segment is gone
				}
			}
		}
	}
}

// write puts a new body's encodings into the new segment, all but an
// identity with a gzip beside it: that is the gzip decompressed.
func (e *Encoder) write(b *body, data [3][]byte) error {
	for j, x := range data {
		if x == nil {
			continue
		}
		b.enc[j] = slot{n: uint32(len(x)), sum: blob.Checksum(x)}
		if j == 0 && data[1] != nil {
			continue
		}
		if err := e.append(&b.enc[j], x); err != nil {
			return err
		}
	}
	return nil
}

func (e *Encoder) append(s *slot, x []byte) error {
	if e.seg.Len()+int64(len(x)) > maxSegment {
		return fmt.Errorf("the bodies a version adds are over %d bytes, more than one segment holds", int64(maxSegment))
	}
	off, err := e.seg.Append(x)
	if err != nil {
		return err
	}
	e.stored += int64(len(x))
	s.at, s.off = pending, uint32(off)
	return nil
}

// compact copies into the new segment the blobs the version keeps of each
// old segment it would name less than half of: once the versions that name
// the old one are gone, the sweep deletes it, so a store holds no more than
// about twice what its versions name.
func (e *Encoder) compact() error {
	live := map[*blob.Segment]int64{}
	for i := range e.bodies {
		for _, s := range e.bodies[i].enc {
			if s.at != nil && s.at != pending {
				live[s.at] += int64(s.n)
			}
		}
	}
	for i := range e.bodies {
		for j := range e.bodies[i].enc {
			s := &e.bodies[i].enc[j]
			if s.at == nil || s.at == pending || s.at.InMemory() || live[s.at]*2 >= s.at.Size {
				continue
			}
			x, err := s.at.Read(int64(s.off), int(s.n), s.sum)
			if err != nil {
				return fmt.Errorf("compact: %w", err)
			}
			if err := e.append(s, x); err != nil {
				return err
			}
			e.copied += int64(s.n)
		}
	}
	return nil
}

// Finish writes what is left and the index of r's routes: every doc of r
// must have been added.
func (e *Encoder) Finish(r *catalog.Rendered) (*Encoded, error) {
	if err := e.compact(); err != nil {
		e.Abort()
		return nil, err
	}
	for _, d := range r.Docs() {
		if _, ok := e.index[d]; !ok {
			e.Abort()
			return nil, fmt.Errorf("encode %s: a body of its routes was not added", r.ManifestID)
		}
	}
	m := meta{ManifestID: r.ManifestID, ContentHash: r.ContentHash, Version: r.Version, Effort: e.opt.Effort, Unknown: r.Unknown}
	return e.finish(m, e.bodies, func(b []byte) []byte { return appendRoutes(b, r, e.index, e.bulkSums) })
}

// finish closes the new segment and writes the index.
func (w *Encoder) finish(m meta, bodies []body, routes func([]byte) []byte) (*Encoded, error) {
	out := &Encoded{Stored: w.stored, Copied: w.copied}
	var table []*blob.Segment
	at := map[*blob.Segment]uint32{}
	for i := range bodies {
		for _, s := range bodies[i].enc {
			if _, ok := at[s.at]; s.at != nil && !ok {
				at[s.at] = uint32(len(table))
				table = append(table, s.at)
			}
		}
	}
	if w.seg.Blobs() {
		f, err := w.seg.Finish()
		if err != nil {
			return nil, err
		}
		out.Segment = &f
		if i, ok := at[pending]; ok {
			table[i] = blob.Memory(f.Sum, nil) // named; its size is f.Size
			table[i].Size = f.Size
		}
	} else {
		w.seg.Abort()
	}
	mj, err := json.Marshal(m)
	if err != nil {
		return nil, fmt.Errorf("encode %s: %w", m.ManifestID, err)
	}
	if len(table) >= int(noSegment) {
		return nil, fmt.Errorf("encode %s: %d segments, more than an index names", m.ManifestID, len(table))
	}
	b := make([]byte, 0, len(indexMagic)+len(mj)+len(table)*40+len(bodies)*70+1<<16)
	u32 := func(n uint32) { b = binary.LittleEndian.AppendUint32(b, n) }
	u16 := func(n uint16) { b = binary.LittleEndian.AppendUint16(b, n) }
	b = append(b, indexMagic...)
	u32(uint32(len(mj)))
	b = append(b, mj...)
	u32(uint32(len(table)))
	for _, s := range table {
		sum, _ := hex.DecodeString(s.Sum)
		b = append(b, sum...)
		b = binary.LittleEndian.AppendUint64(b, uint64(s.Size))
		out.Segments = append(out.Segments, s.Sum)
	}
	u32(uint32(len(bodies)))
	for i := range bodies {
		bd := &bodies[i]
		b = append(b, bd.lang)
		b = append(b, bd.id[:]...)
		for _, s := range bd.enc {
			u32(s.n)
			b = binary.LittleEndian.AppendUint64(b, s.sum)
			if s.at == nil {
				u16(noSegment)
				continue
			}
			u16(uint16(at[s.at]))
			u32(uint32(s.off))
		}
	}
	out.Index = routes(b)
	return out, nil
}

// appendRoutes writes r's routes as indexes of their docs' bodies.
func appendRoutes(b []byte, r *catalog.Rendered, index map[*catalog.Doc]uint32, sums map[*catalog.Doc][sha256.Size]byte) []byte {
	u32 := func(n int) { b = binary.LittleEndian.AppendUint32(b, uint32(n)) }
	name := func(s string) { b = append(binary.LittleEndian.AppendUint16(b, uint16(len(s))), s...) }
	refs := func(ds ...*catalog.Doc) {
		for _, d := range ds {
			u32(int(index[d]))
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
	if slices.Contains(r.Bulk[:], nil) {
		u32(0) // a version rendered without bulk files
		return b
	}
	u32(len(r.Bulk))
	for _, d := range r.Bulk {
		refs(d)
		sum := sums[d]
		b = append(b, sum[:]...)
	}
	return b
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

// parallel calls f(0) … f(n-1) from one goroutine per core.
func parallel(n int, f func(i int)) {
	parallelN(n, runtime.GOMAXPROCS(0), func(_, i int) { f(i) })
}

// parallelN calls f(w, 0) … f(w, n-1) from workers goroutines, w the
// goroutine's number.
func parallelN(n, workers int, f func(w, i int)) {
	var next atomic.Int64
	var wg sync.WaitGroup
	for w := range workers {
		wg.Go(func() {
			for i := int(next.Add(1)) - 1; i < n; i = int(next.Add(1)) - 1 {
				f(w, i)
			}
		})
	}
	wg.Wait()
}

// Opener opens a segment an index names, by its sha256 and size.
type Opener func(sum string, size int64) (*blob.Segment, error)

// Segments lists the sha256 of the segments an index names, reading only its
// head: what a store keeps while it keeps the version.
func Segments(index []byte) ([]string, error) {
	d := &reader{b: index}
	if magic := string(d.next(len(indexMagic))); magic != indexMagic && magic != indexMagicV1 {
		return nil, fmt.Errorf("%w: no index header", ErrBadPack)
	}
	d.next(int(d.uint(4)))
	var out []string
	for range d.count(sha256.Size + 8) {
		out = append(out, hex.EncodeToString(d.next(sha256.Size)))
		d.uint(8)
	}
	if d.err != nil {
		return nil, fmt.Errorf("%w: %v", ErrBadPack, d.err)
	}
	return out, nil
}

// Decode reads an index Encode wrote (or a pack, DecodePack), opening the
// segments it names with open. A broken index is an error wrapping
// ErrBadPack, never a panic or an allocation past what index can hold; a
// segment that cannot be opened is open's error.
func Decode(index []byte, open Opener) (*Edition, error) {
	if bytes.HasPrefix(index, []byte(packMagic)) {
		return DecodePack(index) // a version stored before its bodies were stored by content
	}
	d := &reader{b: index}
	magic := string(d.next(len(indexMagic)))
	if magic != indexMagic && magic != indexMagicV1 {
		return nil, fmt.Errorf("%w: no index header", ErrBadPack)
	}
	m := d.meta()
	type segRef struct {
		sum  string
		size int64
	}
	refs := make([]segRef, d.count(sha256.Size+8))
	for i := range refs {
		refs[i] = segRef{hex.EncodeToString(d.next(sha256.Size)), int64(d.uint(8))}
	}
	entries := make([]entry, d.count(1+len(catalog.Sum{})+3*14))
	for i := range entries {
		e := &entries[i]
		e.lang = byte(d.uint(1))
		copy(e.id[:], d.next(len(catalog.Sum{})))
		for j := range e.enc {
			x := &e.enc[j]
			x.n, x.sum, x.seg = uint32(d.uint(4)), d.uint(8), uint16(d.uint(2))
			if x.seg != noSegment {
				x.off = uint32(d.uint(4))
				if d.err == nil && (int(x.seg) >= len(refs) || int64(x.off)+int64(x.n) > refs[x.seg].size) {
					d.fail(fmt.Errorf("body %d: a blob outside its segment", i))
				}
			} else if j > 0 && x.n > 0 && d.err == nil {
				d.fail(fmt.Errorf("body %d: a compressed encoding that is not stored", i))
			}
		}
		if d.err == nil && (e.lang > allLang && e.lang != noLang || e.enc[0].seg == noSegment && e.enc[1].n == 0) {
			d.fail(fmt.Errorf("body %d: language %d, or an identity neither stored nor compressed", i, e.lang))
		}
		if d.err != nil {
			break
		}
	}
	ed := &Edition{Effort: m.Effort}
	ed.setMeta(m.ManifestID, m.Version, m.ContentHash, m.Unknown)
	readRoutes(d, ed, len(entries))
	if magic == indexMagic {
		readBulk(d, ed, len(entries))
	}
	if d.err == nil && d.off != len(index) {
		d.fail(fmt.Errorf("%d bytes after the routes", len(index)-d.off))
	}
	if d.err != nil {
		return nil, fmt.Errorf("%w: %v", ErrBadPack, d.err)
	}
	segs := make([]*blob.Segment, len(refs))
	for i, s := range refs {
		if !blob.ValidSum(s.sum) {
			return nil, fmt.Errorf("%w: segment %d is not named by a sha256", ErrBadPack, i)
		}
		seg, err := open(s.sum, s.size)
		if err != nil {
			return nil, err
		}
		segs[i] = seg
	}
	ed.bodies = bodySet{entries: entries, segs: segs, live: make([]weak.Pointer[representation.Body], len(entries))}
	if err := ed.makeRules(); err != nil {
		return nil, fmt.Errorf("edition %s: %w", ed.ManifestID, err)
	}
	return ed, nil
}

// Segment is the open segment named sum that e's bodies are in; nil if none.
func (e *Edition) Segment(sum string) *blob.Segment {
	for _, s := range e.bodies.segs {
		if s.Sum == sum {
			return s
		}
	}
	return nil
}

// Build encodes r in memory and reads the index back, as a server reads an
// import's: an edition for tests and the embedded sample.
func Build(r *catalog.Rendered, opt Options) (*Edition, error) {
	opt.Dir = ""
	enc, err := Encode(r, opt)
	if err != nil {
		return nil, err
	}
	return Decode(enc.Index, func(sum string, size int64) (*blob.Segment, error) {
		if s := enc.Segment; s != nil && s.Sum == sum {
			return blob.Memory(sum, s.Mem), nil
		}
		if opt.Base != nil {
			for _, s := range opt.Base.bodies.segs {
				if s.Sum == sum {
					return s, nil
				}
			}
		}
		return nil, fmt.Errorf("segment %s: not in memory", sum)
	})
}
