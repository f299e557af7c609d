package edition_test

import (
	"bytes"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/refdata/refdata/blob"
	"github.com/refdata/refdata/catalog"
	"github.com/refdata/refdata/edition"
	"github.com/refdata/refdata/fixtures"
	"github.com/refdata/refdata/representation"
	"github.com/refdata/refdata/router/apitest"
)

// small renders embedded version nn trimmed (fixtures.Small): a new
// Rendered each call, which the test may change.
func small(t testing.TB, nn string) *catalog.Rendered {
	t.Helper()
	r, err := fixtures.Small(nn)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func newest(t testing.TB) *catalog.Rendered {
	t.Helper()
	r, err := fixtures.Newest()
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// memSegments holds every segment the tests' encodes wrote in memory, by
// name: a segment is named by the sha256 of its bytes, so one registry
// serves every test.
var memSegments sync.Map // sum → []byte

// errNoSegment is wrapped by the errors of the tests' openers for a segment
// they do not have.
var errNoSegment = errors.New("no such segment")

// encode encodes r, keeping the new segment where the tests' openers find it.
func encode(t testing.TB, r *catalog.Rendered, opt edition.Options) *edition.Encoded {
	t.Helper()
	enc, err := edition.Encode(r, opt)
	if err != nil {
		t.Fatal(err)
	}
	if s := enc.Segment; s != nil && s.Path == "" {
		memSegments.Store(s.Sum, s.Mem)
	}
	return enc
}

// openMem opens a segment an encode wrote in memory.
func openMem(sum string, size int64) (*blob.Segment, error) {
	b, ok := memSegments.Load(sum)
	if !ok || int64(len(b.([]byte))) != size {
		return nil, fmt.Errorf("segment %.12s of %d bytes: %w", sum, size, errNoSegment)
	}
	return blob.Memory(sum, b.([]byte)), nil
}

// openFiles opens the segments encs wrote to files (Options.Dir), as a
// store opens its segments, then those written in memory.
func openFiles(encs ...*edition.Encoded) edition.Opener {
	return func(sum string, size int64) (*blob.Segment, error) {
		for _, e := range encs {
			if s := e.Segment; s != nil && s.Sum == sum && s.Path != "" {
				return blob.Open(s.Path, sum, size, nil)
			}
		}
		return openMem(sum, size)
	}
}

// decode reads an index whose segments were written in memory.
func decode(t testing.TB, index []byte) *edition.Edition {
	t.Helper()
	return decodeWith(t, index, openMem)
}

func decodeWith(t testing.TB, index []byte, open edition.Opener) *edition.Edition {
	t.Helper()
	ed, err := edition.Decode(index, open)
	if err != nil {
		t.Fatal(err)
	}
	return ed
}

// route is one route of an edition in one locale (catalog.AllLocales:
// language=all) and its body.
type route struct {
	path   string // "/v1/version", "/v1/locres", "bulk", or "" for a category's
	c      catalog.Category
	u      *catalog.UUID // nil for a list
	filter string        // "field=value" for a filtered list
	loc    int           // -1 where there is no locale
	body   *representation.Body
}

func (r route) String() string {
	switch {
	case r.loc < 0:
		return r.path
	case r.path != "" && r.loc == catalog.AllLocales:
		return r.path + "/all"
	case r.path != "":
		return r.path + "/" + catalog.Locales[r.loc]
	}
	s := "/v1/" + r.c.Name()
	if r.u != nil {
		s += "/" + r.u.String()
	}
	s += "?"
	if r.filter != "" {
		s += r.filter + "&"
	}
	if r.loc == catalog.AllLocales {
		return s + "language=all"
	}
	return s + "language=" + catalog.Locales[r.loc]
}

// routes lists every route of ed in every locale, language=all included,
// the filtered lists and bulk files (if it has them) too, in one order for
// editions of the same version.
func routes(ed *edition.Edition) []route {
	out := []route{{path: "/v1/version", loc: -1, body: ed.VersionBody()}, {path: "/v1/locres", loc: -1, body: ed.LocresList()}}
	for loc := range catalog.NumLocales {
		out = append(out, route{path: "/v1/locres", loc: loc, body: ed.Locres(loc)})
	}
	for loc := range catalog.NumLocales + 1 {
		if ed.BulkFiles() != nil { // none in an edition stored before there were any
			out = append(out, route{path: "bulk", loc: loc, body: ed.Bulk(loc)})
		}
	}
	for _, c := range catalog.Categories() {
		uuids := ed.UUIDs(c)
		for loc := range catalog.NumLocales + 1 {
			out = append(out, route{c: c, loc: loc, body: ed.List(c, loc)})
			for _, f := range c.Filters() {
				for _, v := range []bool{false, true} {
					out = append(out, route{c: c, filter: fmt.Sprintf("%s=%v", f, v), loc: loc, body: ed.Filtered(c, f, v, loc)})
				}
			}
			for i := range uuids {
				out = append(out, route{c: c, u: &uuids[i], loc: loc, body: ed.Item(c, uuids[i], loc)})
			}
		}
	}
	return out
}

// distinct lists the bodies of rs once each.
func distinct(rs []route) []*representation.Body {
	seen := map[*representation.Body]bool{}
	var out []*representation.Body
	for _, r := range rs {
		if !seen[r.body] {
			seen[r.body] = true
			out = append(out, r.body)
		}
	}
	return out
}

// encBytes reads an encoding's bytes; t fails when they cannot be read.
func encBytes(t testing.TB, e *representation.Encoded) []byte {
	t.Helper()
	b, err := e.Read()
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// efforts is the effort tests compress at and the other one.
func efforts() (this, other representation.Effort) {
	this, other = apitest.Effort(), representation.Best
	if this == other {
		other = representation.Fast
	}
	return this, other
}

// TestDecodeServesWhatNewServes: the edition read back from its index and
// segments serves on every route, in every locale, what the edition made
// straight from the rendered version serves — the same identity bytes,
// Content-Language and ETag — and each of its gzip and brotli encodings
// decodes to those bytes and has the ETag of its own. An identity is stored
// only where there is no gzip (elsewhere it is the gzip decompressed), and
// encoding is deterministic. The full newest version too, without -short.
func TestDecodeServesWhatNewServes(t *testing.T) {
	t.Parallel()
	type version struct {
		name  string
		load  func(testing.TB) *catalog.Rendered
		again bool // encode it twice
	}
	vs := []version{
		{"small 14", func(t testing.TB) *catalog.Rendered { return small(t, "14") }, true},
		{"small 15", func(t testing.TB) *catalog.Rendered { return small(t, "15") }, true},
	}
	if !testing.Short() {
		vs = append(vs, version{"newest", newest, false})
	}
	for _, v := range vs {
		t.Run(v.name, func(t *testing.T) {
			t.Parallel()
			r := v.load(t)
			opt := edition.Options{Effort: apitest.Effort()}
			enc := encode(t, r, opt)
			want, got := edition.New(r), decode(t, enc.Index)
			apitest.Complete(t, want)
			apitest.Complete(t, got)
			if got.ManifestID != r.ManifestID || got.ID() != r.ManifestID || !reflect.DeepEqual(got.Version, r.Version) ||
				got.ContentHash != r.ContentHash || got.ContentHash == "" || got.Effort != opt.Effort {
				t.Errorf("record %s %+v %s %v, want %s %+v %s %v", got.ManifestID, got.Version, got.ContentHash, got.Effort, r.ManifestID, r.Version, r.ContentHash, opt.Effort)
			}
			if got.VersionField.Name != "X-Data-Version" || !reflect.DeepEqual(got.VersionField, want.VersionField) || got.VersionField.Value[0] != r.ManifestID {
				t.Errorf("X-Data-Version field %+v, want %+v", got.VersionField, want.VersionField)
			}
			if want.Effort != (representation.Effort{}) {
				t.Errorf("New's effort %v, want none", want.Effort)
			}
			if segs, err := edition.Segments(enc.Index); err != nil || len(segs) != 1 || segs[0] != enc.Segment.Sum || !slices.Equal(segs, enc.Segments) {
				t.Errorf("the index names segments %v (%v); Encode says %v, its segment %s", segs, err, enc.Segments, enc.Segment.Sum)
			}
			servesAsNew(t, want, got)
			if wb := distinct(routes(want)); len(wb) != len(r.Docs()) {
				t.Errorf("New made %d bodies of %d docs", len(wb), len(r.Docs()))
			}
			for _, b := range distinct(routes(got)) {
				if src := b.Source(); (src.Seg == nil) != (b.Gzip() != nil) || src.Mem != nil {
					t.Fatalf("a body of %d bytes with gzip %v: identity stored in a segment %v, in memory %v", b.Len(), b.Gzip() != nil, src.Seg != nil, src.Mem != nil)
				}
			}
			for _, u := range []catalog.UUID{{}, {1, 2, 3}} {
				if got.Item(catalog.Category(0), u, catalog.DefaultLocale) != nil || want.Item(catalog.Category(0), u, catalog.DefaultLocale) != nil {
					t.Errorf("an item %s that is not there has a body", u)
				}
			}
			// Encoding is deterministic, whatever the cores made first.
			if v.again {
				again := encode(t, r, opt)
				if !bytes.Equal(again.Index, enc.Index) || again.Segment.Sum != enc.Segment.Sum {
					t.Error("encoding the same version again made another index or segment")
				}
				apitest.SameEdition(t, got, decode(t, again.Index))
			}
		})
	}
}

// servesAsNew fails t unless got serves on every route what want, an
// edition New made, serves: the same identity bytes, language and ETag, each
// compressed encoding decoding to them with an ETag and Content-Length of its
// own bytes; most routes compressed, none of more than 4 KiB left plain; and
// got's Sizes are the sums of the bodies its routes serve.
func servesAsNew(t testing.TB, want, got *edition.Edition) {
	t.Helper()
	wr, gr := routes(want), routes(got)
	if len(wr) != len(gr) {
		t.Fatalf("%d routes, want %d", len(gr), len(wr))
	}
	compressed := 0
	for i, w := range wr {
		g := gr[i].body
		if g == nil || w.body == nil || gr[i].String() != w.String() {
			t.Fatalf("%s: body %v, want %v", gr[i], g, w.body)
		}
		wj, gj := apitest.JSON(t, w.body), apitest.JSON(t, g)
		if !bytes.Equal(gj, wj) || g.Len() != len(wj) || g.Lang != w.body.Lang ||
			g.Language.Name != w.body.Language.Name || !reflect.DeepEqual(g.Language.Value, w.body.Language.Value) ||
			g.ETag() != w.body.ETag() || g.ETag() != representation.ETag(wj) {
			t.Fatalf("%s: %d bytes in %q, ETag %s; want %d in %q, ETag %s", w, len(gj), g.Lang, g.ETag(), len(wj), w.body.Lang, w.body.ETag())
		}
		if len(w.body.Representations()) != 1 {
			t.Fatalf("%s: New made %d encodings", w, len(w.body.Representations()))
		}
		for _, rep := range g.Representations() {
			b, err := representation.Decode(rep)
			if err != nil || !bytes.Equal(b, wj) {
				t.Fatalf("%s: %s decodes to %d bytes (%v), want %d", w, rep.Encoding.Value, len(b), err, len(wj))
			}
			raw := encBytes(t, rep)
			if rep.ETag() != representation.ETag(raw) || rep.LengthHeader[0] != fmt.Sprint(len(raw)) || rep.Len() != len(raw) {
				t.Fatalf("%s: %s has ETag %s and Content-Length %s for %d bytes", w, rep.Encoding.Value, rep.ETag(), rep.LengthHeader[0], len(raw))
			}
		}
		if g.Gzip() != nil && g.Brotli() != nil {
			compressed++
		}
		if (g.Gzip() == nil || g.Brotli() == nil) && len(gj) > 4<<10 {
			t.Errorf("%s: %d bytes without gzip (%v) or brotli (%v)", w, len(gj), g.Gzip() != nil, g.Brotli() != nil)
		}
	}
	if compressed < len(gr)/2 {
		t.Errorf("only %d of %d routes have gzip and brotli", compressed, len(gr))
	}
	id, gz, br := got.Sizes()
	wid, wgz, wbr := representation.Sizes(distinct(gr))
	if id != wid || gz != wgz || br != wbr {
		t.Errorf("Sizes %d, %d, %d; the bodies its routes serve have %d, %d, %d", id, gz, br, wid, wgz, wbr)
	}
}

// TestEncodeAtNoEffort: a pack encoded at the zero Effort holds no
// compressed encodings: its edition serves what New's does, encodings and
// all.
func TestEncodeAtNoEffort(t *testing.T) {
	t.Parallel()
	r := small(t, "15")
	ed := decode(t, encode(t, r, edition.Options{}).Index)
	apitest.SameEdition(t, edition.New(r), ed)
	if ed.Effort != (representation.Effort{}) {
		t.Errorf("effort %v", ed.Effort)
	}
}

// TestEncodeRefusesALanguage: a body whose Content-Language the index cannot
// name is refused, not stored as another language.
func TestEncodeRefusesALanguage(t *testing.T) {
	t.Parallel()
	for _, lang := range []string{"xx-XX", "de-de", "en-US, de-DE"} {
		r := small(t, "15")
		r.Locres[1] = &catalog.Doc{JSON: r.Locres[1].JSON, Lang: lang}
		if enc, err := edition.Encode(r, edition.Options{}); err == nil {
			t.Errorf("a body in %q: encoded (%d bytes)", lang, len(enc.Index))
		}
	}
}

// TestIndexStoresEqualBodiesOnce: bodies with the same bytes and language
// are one body of the index, stored once, whichever routes name them; the
// same bytes in another language are another body. The segment holds each
// body's gzip and brotli, and its identity only where it has no gzip.
func TestIndexStoresEqualBodiesOnce(t *testing.T) {
	t.Parallel()
	e := apitest.Effort()
	r := small(t, "15")
	type key struct{ lang, json string }
	docs := map[key]bool{}
	identity := 0
	for _, d := range r.Docs() {
		if k := (key{d.Lang, string(d.Bytes())}); !docs[k] {
			docs[k] = true
			identity += d.Len()
		}
	}
	enc := encode(t, r, edition.Options{Effort: e})
	ed := decode(t, enc.Index)
	rs := routes(ed)
	bodies := distinct(rs)
	if len(bodies) != len(docs) {
		t.Errorf("%d bodies, want %d", len(bodies), len(docs))
	}
	seen := map[key]*representation.Body{}
	for _, rt := range rs {
		k := key{rt.body.Lang, string(apitest.JSON(t, rt.body))}
		if b := seen[k]; b != nil && b != rt.body {
			t.Fatalf("%s: a second body of the same bytes and language", rt)
		}
		seen[k] = rt.body
	}
	id, gz, br := ed.Sizes()
	if id != identity {
		t.Errorf("%d identity bytes, want %d", id, identity)
	}
	plain := 0 // identities stored: of the bodies without gzip
	big := 0   // blobs placed at a page boundary
	for _, b := range bodies {
		if b.Gzip() == nil {
			plain += b.Len()
		}
		for i, rep := range b.Representations() {
			if rep.Len() >= blob.AlignFrom && (i > 0 || b.Gzip() == nil) { // an identity with a gzip is not stored
				big++
			}
		}
	}
	header, maxPad := int64(len(blob.Magic)), int64(big*(blob.PageAlign-1))
	if enc.Stored != int64(gz+br+plain) || enc.Copied != 0 || enc.Segment.Size < header+enc.Stored || enc.Segment.Size > header+enc.Stored+maxPad {
		t.Errorf("stored %d bytes (%d copied) in a segment of %d; want %d of gzip, brotli and identities without gzip, after the header, with at most %d bytes of padding before its %d big blobs",
			enc.Stored, enc.Copied, enc.Segment.Size, gz+br+plain, maxPad, big)
	}
	if plain == 0 || plain >= id {
		t.Errorf("%d of %d identity bytes stored: the fixture does not test both", plain, id)
	}

	// A locale sharing en-US's body is the body's second route; a Doc of
	// its own with the same bytes and language changes nothing stored.
	c, u, loc := sharedItem(t, r)
	shared := r.Tables[c].Items[u][loc]
	dup := small(t, "15")
	dup.Tables[c].Items[u][loc] = &catalog.Doc{JSON: bytes.Clone(shared.JSON), Lang: shared.Lang}
	if len(dup.Docs()) != len(r.Docs())+1 {
		t.Fatalf("the copy is not a Doc of its own")
	}
	if d := encode(t, dup, edition.Options{Effort: e}); !bytes.Equal(d.Index, enc.Index) || d.Segment.Sum != enc.Segment.Sum {
		t.Error("a second Doc of the same bytes and language changed the index or the segment")
	}
	// The same bytes in another language are a body of their own.
	other := small(t, "15")
	other.Tables[c].Items[u][loc] = &catalog.Doc{JSON: bytes.Clone(shared.JSON), Lang: catalog.Locales[loc]}
	oed := decode(t, encode(t, other, edition.Options{Effort: e}).Index)
	if n := len(distinct(routes(oed))); n != len(bodies)+1 {
		t.Errorf("%d bodies, want %d", n, len(bodies)+1)
	}
	if b := oed.Item(c, u, loc); b.Lang != catalog.Locales[loc] || b == oed.Item(c, u, catalog.DefaultLocale) || !bytes.Equal(apitest.JSON(t, b), shared.JSON) {
		t.Errorf("%s/%s in %s: %q, shared with en-US: %v", c.Name(), u, catalog.Locales[loc], b.Lang, b == oed.Item(c, u, catalog.DefaultLocale))
	}
}

// sharedItem finds an item whose body in a locale other than en-US is
// en-US's.
func sharedItem(t testing.TB, r *catalog.Rendered) (catalog.Category, catalog.UUID, int) {
	t.Helper()
	for _, c := range catalog.Categories() {
		for _, u := range r.UUIDs(c) {
			ds := r.Tables[c].Items[u]
			for loc := catalog.DefaultLocale + 1; loc < catalog.NumLocales; loc++ {
				if ds[loc] == ds[catalog.DefaultLocale] {
					return c, u, loc
				}
			}
		}
	}
	t.Fatal("no locale shares en-US's body in the fixture")
	return 0, catalog.UUID{}, 0
}

// TestItems: an edition is the catalog.Items of its version, as the rendered
// version is: the same bodies, and ItemJSON says english exactly when the
// locale's body is en-US's; diffs of editions are diffs of the rendered
// versions.
func TestItems(t *testing.T) {
	t.Parallel()
	e := apitest.Effort()
	r14, r15 := small(t, "14"), small(t, "15")
	eds := map[string][2]*edition.Edition{}
	for nn, r := range map[string]*catalog.Rendered{"14": r14, "15": r15} {
		eds[nn] = [2]*edition.Edition{edition.New(r), decode(t, encode(t, r, edition.Options{Effort: e}).Index)}
		for _, ed := range eds[nn] {
			var items catalog.Items = ed
			english, own := 0, 0
			for _, c := range catalog.Categories() {
				if !reflect.DeepEqual(items.UUIDs(c), r.UUIDs(c)) || len(r.UUIDs(c)) == 0 {
					t.Fatalf("%s: %d items, want %d", c.Name(), len(items.UUIDs(c)), len(r.UUIDs(c)))
				}
				for _, u := range r.UUIDs(c) {
					for loc := range catalog.NumLocales + 1 {
						b, en, err := items.ItemJSON(c, u, loc)
						wb, wen, werr := r.ItemJSON(c, u, loc)
						if err != nil || werr != nil {
							t.Fatalf("%s/%s locale %d: %v, %v", c.Name(), u, loc, err, werr)
						}
						shares := loc != catalog.DefaultLocale && ed.Item(c, u, loc) == ed.Item(c, u, catalog.DefaultLocale)
						if !bytes.Equal(b, wb) || !bytes.Equal(b, apitest.JSON(t, ed.Item(c, u, loc))) || en != wen || en != shares {
							t.Fatalf("%s/%s locale %d: %d bytes english %v (shares en-US's body: %v), want %d bytes english %v", c.Name(), u, loc, len(b), en, shares, len(wb), wen)
						}
						if en && ed.Item(c, u, loc).Lang != "en-US" {
							t.Fatalf("%s/%s locale %d: english in %q", c.Name(), u, loc, ed.Item(c, u, loc).Lang)
						}
						switch {
						case en:
							english++
						case loc != catalog.DefaultLocale && loc != catalog.AllLocales:
							own++
						}
					}
				}
				if b, en, err := items.ItemJSON(c, catalog.UUID{0xff}, catalog.DefaultLocale); b != nil || en || err != nil {
					t.Errorf("%s: an item that is not there: %d bytes, english %v, %v", c.Name(), len(b), en, err)
				}
			}
			if english == 0 || own == 0 {
				t.Errorf("%s: %d bodies shared with en-US, %d of their own: the fixture does not test both", r.ManifestID, english, own)
			}
		}
	}
	at := time.Date(2026, 3, 4, 5, 6, 7, 0, time.UTC)
	want, err := catalog.Diff(r14, r15, at)
	if err != nil {
		t.Fatal(err)
	}
	if want.Summary.TotalAdded+want.Summary.TotalRemoved+want.Summary.TotalChanged == 0 {
		t.Fatal("the fixture versions do not differ")
	}
	for i := range 2 {
		for _, pair := range [][2]catalog.Items{{eds["14"][i], eds["15"][i]}, {r14, eds["15"][i]}, {eds["14"][i], r15}} {
			got, err := catalog.Diff(pair[0], pair[1], at)
			if err != nil || !reflect.DeepEqual(got, want) {
				t.Errorf("diff of %T and %T: %+v, %v; want %+v", pair[0], pair[1], got.Summary, err, want.Summary)
			}
		}
	}
}

// BenchmarkDecode reads the index of the newest embedded version, as a server
// does when it swaps one in.
func BenchmarkDecode(b *testing.B) {
	enc := encode(b, newest(b), edition.Options{Effort: apitest.Effort()})
	b.SetBytes(int64(len(enc.Index)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := edition.Decode(enc.Index, openMem); err != nil {
			b.Fatal(err)
		}
	}
}
