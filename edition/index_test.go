package edition_test

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"runtime/metrics"
	"strconv"
	"testing"

	"github.com/refdata/refdata/api/apitest"
	"github.com/refdata/refdata/catalog"
	"github.com/refdata/refdata/edition"
	"github.com/refdata/refdata/representation"
)

// TestPreviousLends: an import encodes a version after the previous one's
// edition (Options.Previous); the bodies the two share keep the compressed
// bytes the previous edition has, so the pack is the one encoding without
// it makes. A Previous at another Effort lends nothing.
func TestPreviousLends(t *testing.T) {
	t.Parallel()
	this, other := efforts()
	r14, r15 := small(t, "14"), small(t, "15")
	fresh := encode(t, r15, edition.Options{Effort: this})
	prev := decode(t, encode(t, r14, edition.Options{Effort: this}))
	if !bytes.Equal(encode(t, r15, edition.Options{Effort: this, Previous: prev}), fresh) {
		t.Error("encoding after the previous edition changed the pack")
	}
	if !bytes.Equal(encode(t, r15, edition.Options{Effort: this, Previous: edition.New(r14)}), fresh) {
		t.Error("an edition without compressed encodings lent some")
	}
	// Another Effort's bytes differ, so whether they are lent shows.
	otherPack := encode(t, r14, edition.Options{Effort: other})
	if !bytes.Equal(encode(t, r15, edition.Options{Effort: this, Previous: decode(t, otherPack)}), fresh) {
		t.Error("an edition of another effort lent its encodings")
	}
	// The same bytes labelled as this effort are lent.
	forged := decode(t, withMeta(t, otherPack, func(m map[string]any) { m["effort"] = this }))
	if forged.Effort != this {
		t.Fatalf("the relabelled edition's effort is %v", forged.Effort)
	}
	lent := decode(t, encode(t, r15, edition.Options{Effort: this, Previous: forged}))
	want := decode(t, fresh)
	byJSON := map[string]*representation.Body{}
	for _, b := range forged.Bodies() {
		byJSON[string(b.JSON)] = b
	}
	wantBy := map[string]*representation.Body{}
	for _, b := range want.Bodies() {
		wantBy[string(b.JSON)] = b
	}
	kept, made, differs := 0, 0, 0
	for _, b := range lent.Bodies() {
		from, w := byJSON[string(b.JSON)], wantBy[string(b.JSON)]
		if from == nil {
			from = w
			made++
		} else if from.Gzip() != nil {
			kept++
			if !bytes.Equal(bytesOf(from.Gzip()), bytesOf(w.Gzip())) || !bytes.Equal(bytesOf(from.Brotli()), bytesOf(w.Brotli())) {
				differs++
			}
		}
		for i, enc := range []*representation.Encoded{b.Gzip(), b.Brotli()} {
			src := []*representation.Encoded{from.Gzip(), from.Brotli()}[i]
			if !bytes.Equal(bytesOf(enc), bytesOf(src)) || enc != nil && enc.ETag() != representation.ETag(enc.Bytes) {
				t.Fatalf("%.60s: encoding %d is not the one expected (%d bytes, want %d)", b.JSON, i, len(bytesOf(enc)), len(bytesOf(src)))
			}
		}
	}
	if kept == 0 || made == 0 || differs == 0 {
		t.Errorf("%d bodies lent (%d of them unlike this effort's), %d compressed anew: the fixtures do not test lending", kept, differs, made)
	}
}

func bytesOf(e *representation.Encoded) []byte {
	if e == nil {
		return nil
	}
	return e.Bytes
}

// withMeta returns pack with its meta record changed by f.
func withMeta(t testing.TB, pack []byte, f func(map[string]any)) []byte {
	t.Helper()
	l := layoutOf(t, pack)
	var m map[string]any
	if err := json.Unmarshal(pack[l.meta:l.bodies], &m); err != nil {
		t.Fatal(err)
	}
	f(m)
	meta, err := json.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	out := append([]byte(packMagic), binary.LittleEndian.AppendUint32(nil, uint32(len(meta)))...)
	out = append(out, meta...)
	return append(out, pack[l.bodies:]...)
}

// tiny is the trimmed newest version made smaller still, for tests that
// decode its pack thousands of times: its version record and one item per
// category (two in the first), with bodies of a few dozen bytes, a few of
// them long enough to compress, shared between locales as rendering shares
// them (en-US's by the locales without text of their own, here ja-JP's in
// the first categories only).
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
	return out
}

// tinyPack is tiny's pack and its layout.
func tinyPack(t testing.TB) ([]byte, layout) {
	t.Helper()
	p := encode(t, tiny(t), edition.Options{Effort: representation.Fast})
	return p, layoutOf(t, p)
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

// allocBound is what decoding n bytes may allocate: a few times the pack
// (a body's header fields take more room than its lengths and ETags in the
// pack), never what a broken header announces.
func allocBound(n int) uint64 { return 64*uint64(n) + 1<<20 }

// decodeSafely decodes b, turning a panic into an error the test reports.
func decodeSafely(b []byte) (ed *edition.Edition, err error, panicked any) {
	defer func() { panicked = recover() }()
	ed, err = edition.Decode(b)
	return ed, err, nil
}

// checkBroken fails t unless decoding b is an error wrapping ErrBadPack,
// short, without a panic, allocating no more than allocBound.
func checkBroken(t *testing.T, name string, b []byte) {
	t.Helper()
	var ed *edition.Edition
	var err error
	var panicked any
	if n := allocated(func() { ed, err, panicked = decodeSafely(b) }); n > allocBound(len(b)) {
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

// TestDecodeRefusesBrokenPacks: each way a pack can be broken is an error
// wrapping ErrBadPack, never a panic nor an allocation for what a broken
// count announces. Not parallel: it measures allocations.
func TestDecodeRefusesBrokenPacks(t *testing.T) {
	p, l := tinyPack(t)
	if _, err := edition.Decode(p); err != nil {
		t.Fatal(err)
	}
	u32 := func(at int) uint32 { return binary.LittleEndian.Uint32(p[at:]) }
	nb := uint32(len(l.heads))
	last := l.heads[len(l.heads)-1]
	first, lastCat := l.cats[0], l.cats[len(l.cats)-1]
	if len(first.uuids) < 2 || len(l.cats[1].uuids) < 1 {
		t.Fatal("the tiny version lacks the items these cases break")
	}
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
		{"the magic alone", p[:len(packMagic)]},
		{"another magic", put(p, 0, "refdata-edition/2\n")},
		{"the magic in capitals", put(p, 0, "REFDATA-EDITION/1\n")},
		{"a meta record past the end", put32(p, l.metaLen, math.MaxUint32)},
		{"a meta record a byte longer", put32(p, l.metaLen, u32(l.metaLen)+1)},
		{"a meta record not JSON", put(p, l.meta, "x")},
		{"a meta record of another shape", withMeta(t, p, func(m map[string]any) { m["version"] = 15 })},
		{"more bodies than the pack holds", put32(p, l.bodies, math.MaxUint32)},
		{"a body more than there are", put32(p, l.bodies, nb+1)},
		{"no bodies", put32(p, l.bodies, 0)},
		{"a body in no language", put(p, l.heads[0].at, "\x64")},
		{"a body longer than the bodies", put32(p, last.at+1, math.MaxUint32)},
		{"a body a byte short", put32(p, last.at+1, last.lens[0]-1)},
		{"a body a byte long", put32(p, l.heads[0].at+1, l.heads[0].lens[0]+1)},
		{"the version body out of range", put32(p, l.version, nb)},
		{"the locale list out of range", put32(p, l.locresList, math.MaxUint32)},
		{"a locres body out of range", put32(p, l.locres[5], nb)},
		{"a list body out of range", put32(p, l.cats[3].lists[4], nb)},
		{"an item body out of range", put32(p, first.refs[0][0], nb)},
		{"an item's last body out of range", put32(p, first.refs[0][catalog.NumLocales], math.MaxUint32)},
		{"the last body out of range", put32(p, lastCat.refs[len(lastCat.refs)-1][catalog.NumLocales], nb)},
		{"no categories", put32(p, l.categories, 0)},
		{"a category more", put32(p, l.categories, uint32(catalog.NumCategories)+1)},
		{"more categories than the pack holds", put32(p, l.categories, math.MaxUint32)},
		{"an unknown category", put(p, l.cats[2].name, "X")},
		{"a category twice", twice},
		{"a category name past the end", put16(p, lastCat.nameLen, math.MaxUint16)},
		{"a long unknown category name", put16(p, first.nameLen, 5000)},
		{"more items than the pack holds", put32(p, l.cats[1].items, math.MaxUint32)},
		{"an item more than there are", put32(p, l.cats[1].items, uint32(len(l.cats[1].uuids))+1)},
		{"a uuid twice", put(p, first.uuids[1], string(p[first.uuids[0]:first.uuids[0]+16]))},
		{"bodies past the end", put64(p, l.blobLenAt, 1<<62)},
		{"bodies of 2^64-1 bytes", put64(p, l.blobLenAt, math.MaxUint64)},
		{"bodies a byte short", put64(p, l.blobLenAt, uint64(l.blobLen)-1)},
		{"a byte after the bodies", append(bytes.Clone(p), 0)},
		{"the last byte cut", p[:len(p)-1]},
	} {
		checkBroken(t, tc.name, tc.b)
	}
}

// TestDecodeRefusesMissingFilters: a pack whose agents lack the lists
// ?isPlayableCharacter= serves is broken, not an edition that fails later.
func TestDecodeRefusesMissingFilters(t *testing.T) {
	t.Parallel()
	r := tiny(t)
	if r.Tables[catalog.Agents].Filtered == nil {
		t.Fatal("the tiny version has no filtered agents lists to leave out")
	}
	r.Tables[catalog.Agents].Filtered = nil
	checkBroken(t, "no filtered lists", encode(t, r, edition.Options{Effort: representation.Fast}))
}

// TestDecodeTruncated: every truncation of a pack is refused; a flipped byte
// anywhere before the bodies is refused or reads as an edition that still
// serves every route (the pack's checksum, which its store checks, is what
// catches changed content). Not parallel: it measures allocations.
func TestDecodeTruncated(t *testing.T) {
	p, l := tinyPack(t)
	if len(p) > 64<<10 {
		t.Fatalf("the tiny pack is %d bytes", len(p))
	}
	var failed int
	var total uint64
	n := allocated(func() {
		for k := range len(p) {
			_, err, panicked := decodeSafely(p[:k:k])
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
	refused := 0
	b := bytes.Clone(p)
	n = allocated(func() {
		for at := range l.blob {
			b[at] ^= 0xff
			ed, err, panicked := decodeSafely(b)
			b[at] ^= 0xff
			switch {
			case panicked != nil:
				t.Fatalf("byte %d flipped: Decode panicked: %v", at, panicked)
			case err != nil:
				if !errors.Is(err, edition.ErrBadPack) {
					t.Fatalf("byte %d flipped: %v", at, err)
				}
				refused++
			case at < l.meta || at >= l.categories && at < l.categories+4:
				t.Errorf("byte %d of the magic, the meta record's length or the category count flipped: read", at)
			default:
				checkServes(t, ed, len(b))
			}
		}
	})
	if bound := uint64(l.blob) * (allocBound(len(p)) - 1<<20); n > bound+1<<20 {
		t.Errorf("decoding every flip allocated %d bytes, more than %d", n, bound+1<<20)
	}
	t.Logf("%d of %d flips refused", refused, l.blob)
}

// checkServes fails t unless ed, decoded from a pack of n bytes, has a body
// on every route, each encoding with its ETag and Content-Length, within the
// pack's bytes.
func checkServes(t testing.TB, ed *edition.Edition, n int) {
	t.Helper()
	check := func(b *representation.Body, where func() string) { // no t.Helper: it costs more than the check
		if b == nil {
			t.Fatalf("%s: no body", where())
		}
		for _, rep := range b.Representations() {
			if rep.ETag() == "" || rep.LengthHeader[0] != strconv.Itoa(len(rep.Bytes)) {
				t.Fatalf("%s: %v: ETag %q, Content-Length %s of %d bytes", where(), rep.Encoding.Value, rep.ETag(), rep.LengthHeader[0], len(rep.Bytes))
			}
		}
	}
	check(ed.VersionBody(), func() string { return "/v1/version" })
	check(ed.LocresList(), func() string { return "/v1/locres" })
	for loc := range catalog.NumLocales {
		check(ed.Locres(loc), func() string { return "/v1/locres/" + catalog.Locales[loc] })
	}
	for _, c := range catalog.Categories() {
		for loc := range catalog.NumLocales + 1 {
			check(ed.List(c, loc), func() string { return route{c: c, loc: loc}.String() })
			for _, u := range ed.UUIDs(c) {
				check(ed.Item(c, u, loc), func() string { return route{c: c, u: &u, loc: loc}.String() })
			}
		}
	}
	if id, gz, br := representation.Sizes(ed.Bodies()); id+gz+br > n {
		t.Fatalf("%d bytes of bodies in a pack of %d", id+gz+br, n)
	}
}

// FuzzDecode: whatever the bytes, Decode returns an edition that serves
// every route or an error wrapping ErrBadPack, without a panic and without
// allocating past what the bytes could hold.
func FuzzDecode(f *testing.F) {
	p, l := tinyPack(f)
	f.Add(p)
	f.Add(p[:l.blob])
	f.Add(put32(p, l.cats[0].refs[0][0], uint32(len(l.heads))))
	f.Add([]byte(packMagic))
	f.Fuzz(func(t *testing.T, b []byte) {
		var ed *edition.Edition
		var err error
		n := allocated(func() { ed, err = edition.Decode(b) })
		if n > allocBound(len(b)) {
			t.Errorf("decoding %d bytes allocated %d", len(b), n)
		}
		if err != nil {
			if !errors.Is(err, edition.ErrBadPack) || ed != nil {
				t.Fatalf("edition %v, error %v; want ErrBadPack", ed != nil, err)
			}
			return
		}
		checkServes(t, ed, len(b))
	})
}

// TestTinyPack: the tiny version's pack reads back as what it encodes, so
// the cases that break it break a pack that works.
func TestTinyPack(t *testing.T) {
	t.Parallel()
	r := tiny(t)
	ed := decode(t, encode(t, r, edition.Options{Effort: apitest.Effort()}))
	checkServes(t, ed, math.MaxInt)
	compressed, plain := 0, 0
	for _, b := range ed.Bodies() {
		if b.Gzip() != nil {
			compressed++
		} else {
			plain++
		}
	}
	if compressed == 0 || plain == 0 {
		t.Errorf("%d bodies compressed, %d not: the tiny pack does not have both", compressed, plain)
	}
	got := routes(ed)
	for i, rt := range routes(edition.New(r)) {
		got := got[i].body
		if !bytes.Equal(got.JSON, rt.body.JSON) || got.Lang != rt.body.Lang || got.ETag() != rt.body.ETag() {
			t.Fatalf("%s differs", rt)
		}
	}
}
