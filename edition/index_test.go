package edition_test

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"runtime/metrics"
	"slices"
	"strconv"
	"testing"

	"github.com/refdata/refdata/blob"
	"github.com/refdata/refdata/catalog"
	"github.com/refdata/refdata/edition"
	"github.com/refdata/refdata/representation"
	"github.com/refdata/refdata/router/apitest"
)

// TestBaseLends: an import encodes a version after the active one's edition
// (Options.Base); the bodies the two share are neither compressed nor stored
// again but named where the base keeps them, so the new segment holds only
// the encodings of the bodies the base lacks (an identity only where there
// is no gzip), and the edition serves what one encoded without a base
// serves, byte for byte and ETag for ETag. A base without compressed
// encodings, or at another effort, lends nothing.
func TestBaseLends(t *testing.T) {
	t.Parallel()
	this, other := efforts()
	r14, r15 := small(t, "14"), small(t, "15")
	fresh := encode(t, r15, edition.Options{Effort: this})
	freshEd := decode(t, fresh.Index)
	e14 := encode(t, r14, edition.Options{Effort: this})
	prev := decode(t, e14.Index)
	based := encode(t, r15, edition.Options{Effort: this, Base: prev})
	basedEd := decode(t, based.Index)
	apitest.SameEdition(t, freshEd, basedEd)
	servesAsNew(t, edition.New(r15), basedEd)

	in14 := map[bodyKey]bool{}
	for _, b := range distinct(routes(prev)) {
		in14[keyOf(b)] = true
	}
	var lacks int64
	added := 0
	for _, b := range distinct(routes(basedEd)) {
		if !in14[keyOf(b)] {
			added++
			lacks += storedBytes(b)
		}
	}
	if added == 0 || based.Stored != lacks || based.Copied != 0 {
		t.Errorf("after 14, 15 stored %d bytes (%d copied); want the %d bytes of the %d bodies 14 lacks", based.Stored, based.Copied, lacks, added)
	}
	// Measured, the bulk files left out (they change with any item): 46 %
	// (48 % at Best) of what 15 stores alone; the trimmed versions' lists,
	// most of their bytes, change with any item too.
	if rest := based.Stored - bulkBytes(basedEd); rest*3 > (fresh.Stored-bulkBytes(freshEd))*2 {
		t.Errorf("after 14, 15 stored %d bytes besides its bulk files, alone %d: the versions share too little to test reuse", rest, fresh.Stored-bulkBytes(freshEd))
	}
	t.Logf("15 alone stores %d bytes; after 14, %d (%d bodies of %d)", fresh.Stored, based.Stored, added, len(distinct(routes(basedEd))))
	if len(based.Segments) != 2 || !slices.Contains(based.Segments, e14.Segment.Sum) || !slices.Contains(based.Segments, based.Segment.Sum) {
		t.Errorf("15 after 14 names segments %.12q; want 14's %.12s and its own %.12s", based.Segments, e14.Segment.Sum, based.Segment.Sum)
	}

	if x := encode(t, r15, edition.Options{Effort: this, Base: edition.New(r14)}); !bytes.Equal(x.Index, fresh.Index) {
		t.Error("an edition without compressed encodings lent some")
	}
	// Another Effort's bytes differ, so whether they are lent shows.
	otherEnc := encode(t, r14, edition.Options{Effort: other})
	if x := encode(t, r15, edition.Options{Effort: this, Base: decode(t, otherEnc.Index)}); !bytes.Equal(x.Index, fresh.Index) {
		t.Error("an edition of another effort lent its encodings")
	}
	// The same bytes labelled as this effort are lent.
	forged := decode(t, withMeta(t, otherEnc.Index, func(m map[string]any) { m["effort"] = this }))
	if forged.Effort != this {
		t.Fatalf("the relabelled edition's effort is %v", forged.Effort)
	}
	lent := decode(t, encode(t, r15, edition.Options{Effort: this, Base: forged}).Index)
	byKey := func(ed *edition.Edition) map[bodyKey]*representation.Body {
		out := map[bodyKey]*representation.Body{}
		for _, b := range distinct(routes(ed)) {
			out[keyOf(b)] = b
		}
		return out
	}
	from, want := byKey(forged), byKey(freshEd)
	kept, made, differs := 0, 0, 0
	for _, b := range distinct(routes(lent)) {
		f, w := from[keyOf(b)], want[keyOf(b)]
		if f == nil {
			f = w
			made++
		} else if f.Gzip() != nil {
			kept++
			if !bytes.Equal(bytesOf(t, f.Gzip()), bytesOf(t, w.Gzip())) || !bytes.Equal(bytesOf(t, f.Brotli()), bytesOf(t, w.Brotli())) {
				differs++
			}
		}
		for i, enc := range []*representation.Encoded{b.Gzip(), b.Brotli()} {
			src := []*representation.Encoded{f.Gzip(), f.Brotli()}[i]
			if !bytes.Equal(bytesOf(t, enc), bytesOf(t, src)) || enc != nil && enc.ETag() != representation.ETag(bytesOf(t, enc)) {
				t.Fatalf("%.60s: encoding %d is not the one expected (%d bytes, want %d)", apitest.JSON(t, b), i, len(bytesOf(t, enc)), len(bytesOf(t, src)))
			}
		}
	}
	if kept == 0 || made == 0 || differs == 0 {
		t.Errorf("%d bodies lent (%d of them unlike this effort's), %d compressed anew: the fixtures do not test lending", kept, differs, made)
	}
}

// bulkBytes is what ed's bulk files take in its segments.
func bulkBytes(ed *edition.Edition) int64 {
	var n int64
	seen := map[*representation.Body]bool{}
	for loc := range catalog.NumLocales + 1 {
		if b := ed.Bulk(loc); !seen[b] {
			seen[b] = true
			n += storedBytes(b)
		}
	}
	return n
}

// bodyKey is what makes a body one: its bytes (by their ETag) and language.
type bodyKey struct{ etag, lang string }

func keyOf(b *representation.Body) bodyKey { return bodyKey{b.ETag(), b.Lang} }

// storedBytes is what a body's blobs take in a segment: its gzip and brotli,
// and its identity where it has no gzip.
func storedBytes(b *representation.Body) int64 {
	n := 0
	for _, e := range []*representation.Encoded{b.Gzip(), b.Brotli()} {
		if e != nil {
			n += e.Len()
		}
	}
	if b.Gzip() == nil {
		n += b.Len()
	}
	return int64(n)
}

// TestCompaction: a version that names less than half of an old segment's
// bytes copies the blobs it needs from it into its own new segment, so its
// index no longer names the old one (which a store deletes once no retained
// version names it), and it serves from its own segment alone; a version
// naming more keeps naming the old segment. A blob is checked as it is
// copied: a damaged old segment fails the encode, leaving no segment behind.
//
// The versions are without bulk files: in the trimmed ones those are 40 % of
// a segment's bytes (at the public API's size 17 %), and they all change
// from 14 to 15, so 15 would name less than half of 14's segment.
func TestCompaction(t *testing.T) {
	t.Parallel()
	e := apitest.Effort()
	dir := t.TempDir()
	small := func(t testing.TB, nn string) *catalog.Rendered {
		r := small(t, nn)
		r.Bulk = [catalog.NumLocales + 1]*catalog.Doc{}
		return r
	}
	r14 := small(t, "14")
	e14 := encode(t, r14, edition.Options{Effort: e, Dir: dir})
	if e14.Segment == nil || e14.Segment.Path == "" || e14.Segment.Mem != nil {
		t.Fatalf("a segment written in a directory: %+v", e14.Segment)
	}
	ed14 := decodeWith(t, e14.Index, openFiles(e14))

	// 15 shares most of 14's bodies: it names 14's segment and copies nothing.
	e15 := encode(t, small(t, "15"), edition.Options{Effort: e, Base: ed14, Dir: dir})
	if e15.Copied != 0 || !slices.Contains(e15.Segments, e14.Segment.Sum) {
		t.Errorf("15 after 14 copied %d bytes, names segments %.12q; want none copied and 14's %.12s named", e15.Copied, e15.Segments, e14.Segment.Sum)
	}
	servesAsNew(t, edition.New(small(t, "15")), decodeWith(t, e15.Index, openFiles(e14, e15)))

	// A version of 14 whose bodies over 2 KiB all changed (a space after
	// the JSON) shares only 14's small bodies.
	changed := small(t, "14")
	for _, d := range changed.Docs() {
		if !d.IsList() && len(d.JSON) > 2<<10 {
			d.JSON = append(bytes.Clone(d.JSON), ' ')
		}
	}
	// A list is made of its items: it changed when one of them did.
	keep := map[bodyKey]bool{}
	for _, d := range changed.Docs() {
		if b := d.Bytes(); len(b) <= 2<<10 || d.IsList() {
			keep[bodyKey{representation.ETag(b), d.Lang}] = true
		}
	}
	var shared int64
	for _, b := range distinct(routes(ed14)) {
		if keep[keyOf(b)] {
			shared += storedBytes(b)
		}
	}
	if shared == 0 || shared*2 >= e14.Stored-e14.Copied {
		t.Fatalf("the changed version shares %d of the %d bytes 14 stored: it does not test compaction", shared, e14.Stored)
	}
	alone := encode(t, changed, edition.Options{Effort: e})
	eb := encode(t, changed, edition.Options{Effort: e, Base: ed14, Dir: dir})
	if eb.Copied != shared || eb.Stored != alone.Stored || !slices.Equal(eb.Segments, []string{eb.Segment.Sum}) {
		t.Errorf("copied %d bytes, stored %d, names segments %.12q; want the %d bytes it shares with 14 copied, the %d it needs stored, its own segment %.12s alone",
			eb.Copied, eb.Stored, eb.Segments, shared, alone.Stored, eb.Segment.Sum)
	}
	own := func(sum string, size int64) (*blob.Segment, error) {
		if sum != eb.Segment.Sum {
			return nil, fmt.Errorf("segment %.12s: %w", sum, errNoSegment)
		}
		return blob.Open(eb.Segment.Path, sum, size, nil)
	}
	apitest.SameEdition(t, decode(t, alone.Index), decodeWith(t, eb.Index, own))

	// Damage 14's segment: copying from it fails.
	before, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	seg, err := os.ReadFile(e14.Segment.Path)
	if err != nil {
		t.Fatal(err)
	}
	for i := len(blob.Magic); i < len(seg); i++ {
		seg[i] ^= 0x20
	}
	if err := os.WriteFile(e14.Segment.Path, seg, 0o644); err != nil {
		t.Fatal(err)
	}
	if enc, err := edition.Encode(changed, edition.Options{Effort: e, Base: ed14, Dir: dir}); !errors.Is(err, blob.ErrCorrupt) {
		t.Errorf("encoding after a damaged segment: %v, want ErrCorrupt", err)
		if enc != nil {
			enc.Discard()
		}
	}
	if after, err := os.ReadDir(dir); err != nil || len(after) != len(before) {
		t.Errorf("a failed encode left %d files in its directory, %d before (%v)", len(after), len(before), err)
	}
}

// bytesOf reads an encoding's bytes, nil for none; t fails when they cannot
// be read.
func bytesOf(t testing.TB, e *representation.Encoded) []byte {
	t.Helper()
	if e == nil {
		return nil
	}
	return encBytes(t, e)
}

// withMeta returns index with its meta record changed by f.
func withMeta(t testing.TB, index []byte, f func(map[string]any)) []byte {
	t.Helper()
	l := layoutOf(t, index)
	var m map[string]any
	if err := json.Unmarshal(index[l.meta:l.segments], &m); err != nil {
		t.Fatal(err)
	}
	f(m)
	meta, err := json.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	out := append([]byte(indexMagic), binary.LittleEndian.AppendUint32(nil, uint32(len(meta)))...)
	out = append(out, meta...)
	return append(out, index[l.segments:]...)
}

// tiny is the trimmed newest version made smaller still, for tests that
// decode its index thousands of times: its version record and one item per
// category (two in the first), with bodies of a few dozen bytes, a few of
// them long enough to compress, shared between locales as rendering shares
// them (en-US's by the locales without text of their own, here ja-JP's in
// the first categories only), and its bulk files.
func tiny(t testing.TB) *catalog.Rendered {
	t.Helper()
	r := small(t, "15")
	out := &catalog.Rendered{ManifestID: r.ManifestID, Version: r.Version, ContentHash: r.ContentHash, VersionBody: r.VersionBody}
	n := 0
	doc := func(lang string, size int) *catalog.Doc {
		n++
		b := fmt.Appendf(nil, `{"status":200,"data":{"n":%d,"text":"`, n)
		for len(b) < size-3 {
			b = append(b, "Glitchpop "[len(b)%10])
		}
		return &catalog.Doc{JSON: append(b, `"}}`...), Lang: lang}
	}
	out.LocresList = doc("", 40)
	for loc, lang := range catalog.Locales {
		out.Locres[loc] = doc(lang, 40)
	}
	const ja = 8
	if catalog.Locales[ja] != "ja-JP" {
		t.Fatal("locales reordered")
	}
	bodies := func(c, en int) *[catalog.NumLocales + 1]*catalog.Doc {
		var ds [catalog.NumLocales + 1]*catalog.Doc
		ds[catalog.DefaultLocale] = doc("en-US", en)
		for loc := range catalog.NumLocales {
			ds[loc] = ds[catalog.DefaultLocale]
		}
		if c < 2 {
			ds[ja] = doc("ja-JP", 40)
		}
		ds[catalog.AllLocales] = doc(catalog.AllLanguages, 40)
		return &ds
	}
	for c := range out.Tables {
		keep := r.Tables[c].Order[:1]
		if c == 0 {
			keep = r.Tables[c].Order[:2]
		}
		tb := &out.Tables[c]
		tb.Order = keep
		size := 40
		if c == 0 {
			size = 300 // long enough to compress
		}
		tb.List = *bodies(c, size)
		tb.Items = map[catalog.UUID]*[catalog.NumLocales + 1]*catalog.Doc{}
		for _, u := range keep {
			tb.Items[u] = bodies(c, size)
		}
		for _, f := range catalog.Category(c).Filters() {
			if tb.Filtered == nil {
				tb.Filtered = map[string]*[2][catalog.NumLocales + 1]*catalog.Doc{}
			}
			tb.Filtered[f] = &[2][catalog.NumLocales + 1]*catalog.Doc{*bodies(c, size), *bodies(c, size)}
		}
	}
	out.MakeBulk()
	return out
}

// tinyIndex is tiny's index, its segment in memory (dir "") or in a file in
// dir (then every blob read is checked), its layout, and the opener of its
// segment.
func tinyIndex(t testing.TB, dir string) ([]byte, layout, edition.Opener) {
	t.Helper()
	enc := encode(t, tiny(t), edition.Options{Effort: representation.Fast, Dir: dir})
	return enc.Index, layoutOf(t, enc.Index), openFiles(enc)
}

// allocated is how many bytes of heap f allocates (within a span per size
// class: the runtime counts small objects as it hands out spans, large ones
// at once). Tests that use it are not parallel: it counts every goroutine's.
func allocated(f func()) uint64 {
	s := []metrics.Sample{{Name: "/gc/heap/allocs:bytes"}}
	metrics.Read(s)
	before := s[0].Value.Uint64()
	f()
	metrics.Read(s)
	return s[0].Value.Uint64() - before
}

// allocBound is what decoding n bytes may allocate: a few times the index
// (a body's entry and the routes' tables take more room than their fields
// in the index), never what a broken header announces.
func allocBound(n int) uint64 { return 64*uint64(n) + 1<<20 }

// decodeSafely decodes b, turning a panic into an error the test reports.
func decodeSafely(b []byte, open edition.Opener) (ed *edition.Edition, err error, panicked any) {
	defer func() { panicked = recover() }()
	ed, err = edition.Decode(b, open)
	return ed, err, nil
}

// checkBroken fails t unless decoding b is an error wrapping ErrBadPack,
// short, without a panic, allocating no more than allocBound.
func checkBroken(t *testing.T, name string, b []byte, open edition.Opener) {
	t.Helper()
	var ed *edition.Edition
	var err error
	var panicked any
	if n := allocated(func() { ed, err, panicked = decodeSafely(b, open) }); n > allocBound(len(b)) {
		t.Errorf("%s: decoding %d bytes allocated %d", name, len(b), n)
	}
	switch {
	case panicked != nil:
		t.Errorf("%s: Decode panicked: %v", name, panicked)
	case !errors.Is(err, edition.ErrBadPack) || ed != nil:
		t.Errorf("%s: edition %v, error %v; want ErrBadPack", name, ed != nil, err)
	case len(err.Error()) > 300:
		t.Errorf("%s: an error of %d bytes: %.300s", name, len(err.Error()), err)
	}
}

func put16(b []byte, at int, v uint16) []byte {
	b = bytes.Clone(b)
	binary.LittleEndian.PutUint16(b[at:], v)
	return b
}

func put32(b []byte, at int, v uint32) []byte {
	b = bytes.Clone(b)
	binary.LittleEndian.PutUint32(b[at:], v)
	return b
}

func put64(b []byte, at int, v uint64) []byte {
	b = bytes.Clone(b)
	binary.LittleEndian.PutUint64(b[at:], v)
	return b
}

func put(b []byte, at int, s string) []byte {
	b = bytes.Clone(b)
	copy(b[at:], s)
	return b
}

// unstore marks a stored encoding as not stored: its segment notStored and
// no offset.
func unstore(b []byte, e encField) []byte {
	b = put16(b, e.seg, notStored)
	return slices.Concat(b[:e.off], b[e.off+4:])
}

// TestDecodeRefusesBrokenIndexes: each way an index can be broken is an
// error wrapping ErrBadPack, before any segment is opened, never a panic nor
// an allocation for what a broken count announces. Not parallel: it
// measures allocations.
func TestDecodeRefusesBrokenIndexes(t *testing.T) {
	p, l, open := tinyIndex(t, "")
	if _, err := edition.Decode(p, open); err != nil {
		t.Fatal(err)
	}
	opened := 0
	counting := func(sum string, size int64) (*blob.Segment, error) { opened++; return open(sum, size) }
	u32 := func(at int) uint32 { return binary.LittleEndian.Uint32(p[at:]) }
	nb, ns := uint32(len(l.heads)), uint32(len(l.segs))
	first, lastCat := l.cats[0], l.cats[len(l.cats)-1]
	if len(first.uuids) < 2 || len(l.cats[1].uuids) < 1 {
		t.Fatal("the tiny version lacks the items these cases break")
	}
	plain := l.stored(t, 0, func(h head) bool { return h.enc[1].nOf == 0 }) // an identity stored: no gzip
	both := l.stored(t, 1, func(h head) bool { return h.enc[2].off >= 0 })  // gzip and brotli stored
	gzSeg := l.segs[both.enc[1].segOf]
	// Two categories whose names are as long, for one named twice.
	twice := func() []byte {
		for i, a := range l.cats {
			for _, b := range l.cats[i+1:] {
				if len(a.nameText) == len(b.nameText) {
					return put(p, b.name, a.nameText)
				}
			}
		}
		t.Fatal("no two category names of one length")
		return nil
	}()
	for _, tc := range []struct {
		name string
		b    []byte
	}{
		{"empty", nil},
		{"the magic alone", p[:len(indexMagic)]},
		{"another magic", put(p, 0, "refdata-index/3\n")},
		{"the magic in capitals", put(p, 0, "REFDATA-INDEX/1\n")},
		{"a pack's magic", put(p, 0, packMagic)},
		{"a meta record past the end", put32(p, l.metaLen, math.MaxUint32)},
		{"a meta record a byte longer", put32(p, l.metaLen, u32(l.metaLen)+1)},
		{"a meta record not JSON", put(p, l.meta, "x")},
		{"a meta record of another shape", withMeta(t, p, func(m map[string]any) { m["version"] = 15 })},
		{"more segments than the index holds", put32(p, l.segments, math.MaxUint32)},
		{"a segment more than there are", put32(p, l.segments, ns+1)},
		{"no segments", put32(p, l.segments, 0)},
		{"a segment shorter than its blobs", put64(p, gzSeg.size, uint64(len(blob.Magic)))},
		{"a segment of 2^64-1 bytes", put64(p, gzSeg.size, math.MaxUint64)},
		{"a segment of 2^63 bytes", put64(p, gzSeg.size, 1<<63)},
		{"more bodies than the index holds", put32(p, l.bodies, math.MaxUint32)},
		{"a body more than there are", put32(p, l.bodies, nb+1)},
		{"no bodies", put32(p, l.bodies, 0)},
		{"a body in no language", put(p, l.heads[0].at, "\x64")},
		{"a blob past its segment", put32(p, plain.enc[0].off, math.MaxUint32)},
		{"a blob a byte past its segment", put32(p, both.enc[1].off, uint32(gzSeg.sizeOf)-both.enc[1].nOf+1)},
		{"a blob of 2^32-1 bytes", put32(p, both.enc[2].n, math.MaxUint32)},
		{"a blob in a segment not named", put16(p, both.enc[1].seg, uint16(ns))},
		{"a gzip not stored", unstore(p, both.enc[1])},
		{"a brotli not stored", unstore(p, both.enc[2])},
		{"an identity neither stored nor compressed", unstore(p, plain.enc[0])},
		{"the version body out of range", put32(p, l.version, nb)},
		{"the locale list out of range", put32(p, l.locresList, math.MaxUint32)},
		{"a locres body out of range", put32(p, l.locres[5], nb)},
		{"a list body out of range", put32(p, l.cats[3].lists[4], nb)},
		{"an item body out of range", put32(p, first.refs[0][0], nb)},
		{"an item's last body out of range", put32(p, first.refs[0][catalog.NumLocales], math.MaxUint32)},
		{"a filtered list's body out of range", put32(p, l.cats[catalog.Agents].filters[3], nb)},
		{"the last body out of range", put32(p, lastCat.refs[len(lastCat.refs)-1][catalog.NumLocales], nb)},
		{"no categories", put32(p, l.categories, 0)},
		{"a category more", put32(p, l.categories, uint32(catalog.NumCategories)+1)},
		{"more categories than the index holds", put32(p, l.categories, math.MaxUint32)},
		{"an unknown category", put(p, l.cats[2].name, "X")},
		{"a category twice", twice},
		{"a category name past the end", put16(p, lastCat.nameLen, math.MaxUint16)},
		{"a long unknown category name", put16(p, first.nameLen, 5000)},
		{"more items than the index holds", put32(p, l.cats[1].items, math.MaxUint32)},
		{"an item more than there are", put32(p, l.cats[1].items, uint32(len(l.cats[1].uuids))+1)},
		{"a uuid twice", put(p, first.uuids[1], string(p[first.uuids[0]:first.uuids[0]+16]))},
		{"bulk files of another count", put32(p, l.bulkCount, 5)},
		{"more bulk files than the index holds", put32(p, l.bulkCount, math.MaxUint32)},
		{"a bulk file's body out of range", put32(p, l.bulk[3], nb)},
		{"an index before bulk files, with them", put(p, 0, indexMagicV1)},
		{"a byte after the bulk files", append(bytes.Clone(p), 0)},
		{"the last byte cut", p[:len(p)-1]},
	} {
		checkBroken(t, tc.name, tc.b, counting)
	}
	if opened != 0 {
		t.Errorf("broken indexes opened %d segments", opened)
	}
}

// TestDecodeIndexWithoutBulk: an index written before there were bulk files
// ("refdata-index/1", no bulk section) reads as an edition without them, as
// does one that names none; every other route serves as the index with them
// does.
func TestDecodeIndexWithoutBulk(t *testing.T) {
	t.Parallel()
	p, l, open := tinyIndex(t, "")
	with := decodeWith(t, p, open)
	if len(with.BulkFiles()) != catalog.NumLocales+1 || with.Bulk(catalog.AllLocales) == nil {
		t.Fatalf("the tiny index has %d bulk files", len(with.BulkFiles()))
	}
	for name, b := range map[string][]byte{
		"an index before bulk files": slices.Concat([]byte(indexMagicV1), p[len(indexMagic):l.bulkCount]),
		"no bulk files":              slices.Concat(p[:l.bulkCount], []byte{0, 0, 0, 0}),
	} {
		ed, err := edition.Decode(b, open)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if ed.BulkFiles() != nil || ed.Bulk(catalog.DefaultLocale) != nil {
			t.Errorf("%s: bulk files %v", name, ed.BulkFiles())
		}
		want, got := routes(with), routes(ed)
		want = slices.DeleteFunc(want, func(r route) bool { return r.path == "bulk" })
		if len(got) != len(want) {
			t.Fatalf("%s: %d routes, want %d", name, len(got), len(want))
		}
		for i := range want {
			if got[i].String() != want[i].String() || got[i].body.ETag() != want[i].body.ETag() {
				t.Fatalf("%s: %s differs", name, want[i])
			}
		}
	}
}

// TestDecodeRefusesMissingFilters: an index whose agents lack the lists
// ?isPlayableCharacter= serves is broken, not an edition that fails later.
// Not parallel: checkBroken measures the process's allocations.
func TestDecodeRefusesMissingFilters(t *testing.T) {
	r := tiny(t)
	if r.Tables[catalog.Agents].Filtered == nil {
		t.Fatal("the tiny version has no filtered agents lists to leave out")
	}
	r.Tables[catalog.Agents].Filtered = nil
	checkBroken(t, "no filtered lists", encode(t, r, edition.Options{Effort: representation.Fast}).Index, openMem)
}

// TestDecodeSegments: a segment the opener cannot open is its error, not
// an edition; a blob damaged in its segment's file is refused when read
// (wrapping blob.ErrCorrupt), never served, while the others still are.
func TestDecodeSegments(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	r := tiny(t)
	enc := encode(t, r, edition.Options{Effort: representation.Fast, Dir: dir})
	errOpen := errors.New("cannot open")
	if ed, err := edition.Decode(enc.Index, func(string, int64) (*blob.Segment, error) { return nil, errOpen }); !errors.Is(err, errOpen) || ed != nil {
		t.Errorf("an opener's error: edition %v, %v", ed != nil, err)
	}
	// Damage the last body whose identity is stored (one without gzip).
	l := layoutOf(t, enc.Index)
	var damaged head
	for _, h := range l.heads {
		if h.enc[0].off >= 0 && h.enc[0].nOf > 0 {
			damaged = h
		}
	}
	f, err := os.OpenFile(enc.Segment.Path, os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteAt([]byte{'#'}, int64(damaged.enc[0].offOf)+int64(damaged.enc[0].nOf)/2); err != nil {
		t.Fatal(err)
	}
	f.Close()
	ed := decodeWith(t, enc.Index, openFiles(enc))
	want := routes(edition.New(r))
	refused := 0
	for i, rt := range routes(ed) {
		b, err := rt.body.JSON()
		switch {
		case err != nil && errors.Is(err, blob.ErrCorrupt) && b == nil:
			refused++
		case err != nil:
			t.Fatalf("%s: %v, %d bytes", rt, err, len(b))
		case !bytes.Equal(b, apitest.JSON(t, want[i].body)):
			t.Fatalf("%s: other bytes served", rt)
		}
	}
	if refused == 0 {
		t.Error("no route refused the damaged body")
	}
}

// TestDecodeTruncated: every truncation of an index is refused; a flipped
// byte anywhere is refused or reads as an edition that still serves every
// route, each encoding either its bytes (as its ETag and length say) or an
// error wrapping blob.ErrCorrupt — the index's checksum, which its store
// checks, is what catches changed content. Not parallel: it measures
// allocations.
func TestDecodeTruncated(t *testing.T) {
	p, l, open := tinyIndex(t, t.TempDir())
	if len(p) > 64<<10 {
		t.Fatalf("the tiny index is %d bytes", len(p))
	}
	var failed int
	var total uint64
	n := allocated(func() {
		for k := range len(p) {
			_, err, panicked := decodeSafely(p[:k:k], open)
			if panicked != nil || !errors.Is(err, edition.ErrBadPack) {
				failed++
				if failed < 10 {
					t.Errorf("cut to %d of %d bytes: error %v, panic %v", k, len(p), err, panicked)
				}
			}
			total += allocBound(k) - 1<<20
		}
	})
	if n > total+1<<20 {
		t.Errorf("decoding every truncation allocated %d bytes, more than %d", n, total+1<<20)
	}
	// Every byte; the short form every byte of the header, the segment table
	// and the first bodies, and every fifth byte after (the fields of one
	// body or route are the fields of the next).
	every, from := 1, len(p)
	if testing.Short() {
		every, from = 5, l.heads[min(32, len(l.heads)-1)].at
	}
	refused, flipped := 0, 0
	b := bytes.Clone(p)
	n = 0
	for at := range len(b) {
		if at >= from && (at-from)%every != 0 {
			continue
		}
		flipped++
		b[at] ^= 0xff
		var ed *edition.Edition
		var err error
		var panicked any
		n += allocated(func() { ed, err, panicked = decodeSafely(b, open) })
		b[at] ^= 0xff
		inTable := at >= l.segments+4 && at < l.bodies
		switch {
		case panicked != nil:
			t.Fatalf("byte %d flipped: Decode panicked: %v", at, panicked)
		case err != nil:
			if !errors.Is(err, edition.ErrBadPack) && !errors.Is(err, blob.ErrCorrupt) && !(inTable && errors.Is(err, errNoSegment)) {
				t.Fatalf("byte %d flipped: %v", at, err)
			}
			refused++
		case at < l.meta || at >= l.categories && at < l.categories+4 || at >= l.segments && at < l.segments+4:
			t.Errorf("byte %d of the magic, the meta record's length, the segment count or the category count flipped: read", at)
		default:
			checkServes(t, ed)
		}
	}
	if bound := uint64(flipped) * (allocBound(len(p)) - 1<<20); n > bound+1<<20 {
		t.Errorf("decoding every flip allocated %d bytes, more than %d", n, bound+1<<20)
	}
	t.Logf("%d of %d flips refused", refused, flipped)
}

// checkServes fails t unless ed has a body on every route, each encoding
// with its ETag and Content-Length, and reading it gives bytes of that
// length and ETag or an error wrapping blob.ErrCorrupt.
func checkServes(t testing.TB, ed *edition.Edition) {
	t.Helper()
	rs := routes(ed)
	for _, rt := range rs {
		if rt.body == nil {
			t.Fatalf("%s: no body", rt)
		}
	}
	for _, body := range distinct(rs) {
		for _, rep := range body.Representations() {
			if rep.ETag() == "" || rep.LengthHeader[0] != strconv.Itoa(rep.Len()) {
				t.Fatalf("a body in %q: %v: ETag %q, Content-Length %s of %d bytes", body.Lang, rep.Encoding.Value, rep.ETag(), rep.LengthHeader[0], rep.Len())
			}
			b, err := rep.Read()
			if err != nil && (!errors.Is(err, blob.ErrCorrupt) || b != nil) || err == nil && (len(b) != rep.Len() || representation.ETag(b) != rep.ETag()) {
				t.Fatalf("a body in %q: %v: %d bytes of %d, ETag %s of %s, %v", body.Lang, rep.Encoding.Value, len(b), rep.Len(), representation.ETag(b), rep.ETag(), err)
			}
		}
	}
}

// FuzzDecode: whatever the bytes, Decode returns an edition that serves
// every route (checkServes) or an error, without a panic and without
// allocating past what the bytes could hold.
func FuzzDecode(f *testing.F) {
	p, l, open := tinyIndex(f, f.TempDir())
	f.Add(p)
	f.Add(p[:l.categories])
	f.Add(put32(p, l.cats[0].refs[0][0], uint32(len(l.heads))))
	f.Add([]byte(indexMagic))
	f.Fuzz(func(t *testing.T, b []byte) {
		var ed *edition.Edition
		var err error
		n := allocated(func() { ed, err = edition.Decode(b, open) })
		if n > allocBound(len(b)) {
			t.Errorf("decoding %d bytes allocated %d", len(b), n)
		}
		if err != nil {
			if !errors.Is(err, edition.ErrBadPack) && !errors.Is(err, blob.ErrCorrupt) && !errors.Is(err, errNoSegment) || ed != nil {
				t.Fatalf("edition %v, error %v; want ErrBadPack", ed != nil, err)
			}
			return
		}
		checkServes(t, ed)
	})
}

// TestTinyIndex: the tiny version's index reads back as what it encodes, so
// the cases that break it break an index that works.
func TestTinyIndex(t *testing.T) {
	t.Parallel()
	r := tiny(t)
	ed := decode(t, encode(t, r, edition.Options{Effort: apitest.Effort()}).Index)
	checkServes(t, ed)
	compressed, plain := 0, 0
	for _, b := range distinct(routes(ed)) {
		if b.Gzip() != nil {
			compressed++
		} else {
			plain++
		}
	}
	if compressed == 0 || plain == 0 {
		t.Errorf("%d bodies compressed, %d not: the tiny index does not have both", compressed, plain)
	}
	got := routes(ed)
	for i, rt := range routes(edition.New(r)) {
		got := got[i].body
		if !bytes.Equal(apitest.JSON(t, got), apitest.JSON(t, rt.body)) || got.Lang != rt.body.Lang || got.ETag() != rt.body.ETag() {
			t.Fatalf("%s differs", rt)
		}
	}
}
