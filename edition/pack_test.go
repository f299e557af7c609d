package edition_test

import (
	"bytes"
	"compress/gzip"
	"errors"
	"os"
	"reflect"
	"testing"

	"github.com/refdata/refdata/blob"
	"github.com/refdata/refdata/catalog"
	"github.com/refdata/refdata/edition"
	"github.com/refdata/refdata/representation"
	"github.com/refdata/refdata/router/apitest"
)

// testdata/tiny15.pack is the pack refdata wrote before bodies were stored by
// content (commit 3ec4f8a, the pack format's last): tiny (of the trimmed
// sample 15) encoded at representation.Fast by that commit's edition.Encode.
// It is that program's bytes, not this one's, so this one is tested on what
// stores hold.
const legacyPack = "testdata/tiny15.pack"

// legacyContentHash is the content hash the pack records: that of the sample
// 15 when it was written. tiny's bodies are made up, but its hash is the
// sample's of today, which has changed since (its authored catalogs took the
// public API's shapes), so the pack is compared with tiny under its own hash.
const legacyContentHash = "sha256:29f1ae23a476b9fa53f78af846b1d923638c6bc8e295db6bf67b66570b37d64b"

// legacyEffort is the effort the pack records: the tests' of then, gzip
// Huffman-only.
var legacyEffort = representation.Effort{Gzip: gzip.HuffmanOnly, Brotli: 0}

// TestDecodePackOfEarlierRefdata: a pack written by the earlier refdata reads
// (DecodePack, and Decode, which tells a pack from an index) as the edition
// of the version it holds: on every route the bytes, language and ETag New
// gives, each compressed encoding decoding to them. An import after such a
// version stores the pack's encodings in its own segment (the pack has no
// segment to name) rather than compressing them again. Every truncation of
// the pack is refused.
func TestDecodePackOfEarlierRefdata(t *testing.T) {
	t.Parallel()
	p, err := os.ReadFile(legacyPack)
	if err != nil {
		t.Fatal(err)
	}
	r := tiny(t)
	r.Bulk = [catalog.NumLocales + 1]*catalog.Doc{} // the pack's version had none
	r.ContentHash = legacyContentHash
	want := edition.New(r)
	noSegments := func(sum string, _ int64) (*blob.Segment, error) {
		t.Errorf("a pack opened segment %.12s", sum)
		return nil, errNoSegment
	}
	var packEd *edition.Edition
	for name, read := range map[string]func([]byte) (*edition.Edition, error){
		"DecodePack": edition.DecodePack,
		"Decode":     func(b []byte) (*edition.Edition, error) { return edition.Decode(b, noSegments) },
	} {
		ed, err := read(p)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		packEd = ed
		if ed.ManifestID != r.ManifestID || !reflect.DeepEqual(ed.Version, r.Version) || ed.ContentHash != r.ContentHash || ed.Effort != legacyEffort {
			t.Errorf("%s: record %s %+v %s %v", name, ed.ManifestID, ed.Version, ed.ContentHash, ed.Effort)
		}
		checkServes(t, ed)
		wr, gr := routes(want), routes(ed)
		compressed := 0
		for i, w := range wr {
			g := gr[i].body
			wj := apitest.JSON(t, w.body)
			if gr[i].String() != w.String() || !bytes.Equal(apitest.JSON(t, g), wj) || g.Lang != w.body.Lang || g.ETag() != w.body.ETag() {
				t.Fatalf("%s: %s: %d bytes in %q, ETag %s; want %d in %q, ETag %s", name, w, g.Len(), g.Lang, g.ETag(), len(wj), w.body.Lang, w.body.ETag())
			}
			for _, rep := range g.Representations()[1:] {
				compressed++
				if b, err := representation.Decode(rep); err != nil || !bytes.Equal(b, wj) {
					t.Fatalf("%s: %s: %s decodes to %d bytes (%v)", name, w, rep.Encoding.Value, len(b), err)
				}
			}
		}
		if compressed == 0 {
			t.Errorf("%s: no compressed encoding in the pack", name)
		}
	}

	enc := encode(t, r, edition.Options{Effort: legacyEffort, Base: packEd})
	var all int64
	for _, b := range distinct(routes(packEd)) {
		all += storedBytes(b)
	}
	if enc.Stored != all || enc.Copied != 0 || len(enc.Segments) != 1 || enc.Segments[0] != enc.Segment.Sum {
		t.Errorf("after a pack: stored %d bytes (%d copied), segments %.12q; want all %d in its own", enc.Stored, enc.Copied, enc.Segments, all)
	}
	apitest.SameEdition(t, packEd, decode(t, enc.Index))

	for k := range len(p) {
		if ed, err := edition.DecodePack(p[:k:k]); !errors.Is(err, edition.ErrBadPack) || ed != nil {
			t.Fatalf("the pack cut to %d of %d bytes: %v", k, len(p), err)
		}
	}
	if _, err := edition.DecodePack(append(bytes.Clone(p), 0)); !errors.Is(err, edition.ErrBadPack) {
		t.Errorf("a byte after the pack: %v", err)
	}
}
