package edition_test

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"os"
	"path"
	"strings"
	"testing"

	"github.com/refdata/refdata/blob"
	"github.com/refdata/refdata/catalog"
	"github.com/refdata/refdata/edition"
	"github.com/refdata/refdata/fixtures"
	"github.com/refdata/refdata/representation"
	"github.com/refdata/refdata/router/apitest"
)

// encodeStreamed encodes trimmed version nn as an import does: rendered a
// part at a time (RenderEach), each part added to the Encoder and its bytes
// let go of, so the bulk files, last, are made of items read back from the
// segments. It returns the encoding and the version rendered whole.
func encodeStreamed(t testing.TB, nn string, opt edition.Options) (*edition.Encoded, error) {
	t.Helper()
	var files map[string][]byte
	for _, v := range fixtures.Versions() {
		if strings.HasPrefix(path.Base(v), nn+"_") {
			var err error
			if files, err = fixtures.Files(v, true); err != nil {
				t.Fatal(err)
			}
		}
	}
	s, err := catalog.LoadFiles(files)
	if err != nil {
		t.Fatal(err)
	}
	catalog.Repair(s)
	enc, err := edition.NewEncoder(opt)
	if err != nil {
		t.Fatal(err)
	}
	r, err := catalog.RenderEach(s, catalog.RenderOptions{Bulk: true}, func(docs []*catalog.Doc, _ bool) error {
		if err := enc.Add(docs); err != nil {
			return err
		}
		for _, d := range docs {
			d.JSON = nil
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	r.ContentHash = catalog.FilesHash(files)
	out, err := enc.Finish(r)
	if err == nil && out.Segment != nil && out.Segment.Path == "" {
		memSegments.Store(out.Segment.Sum, out.Segment.Mem)
	}
	return out, err
}

// TestBulkFiles: an edition's bulk files are the rendered version's, each
// locale's and language=all's: the identity (its gzip decompressed: it is
// not stored) is the NDJSON catalog made, the gzip and brotli decode to it,
// and BulkFiles gives the sha256 and length of those bytes. Made as an
// import makes them, from items whose bytes it let go of and reads back
// from the new segment (in a file or in memory) or from the Base's, they
// are the same bytes, ETags and sums as made from the items in memory.
func TestBulkFiles(t *testing.T) {
	t.Parallel()
	e := apitest.Effort()
	r := small(t, "15")
	want := decode(t, encode(t, r, edition.Options{Effort: e}).Index)
	files := want.BulkFiles()
	if len(files) != catalog.NumLocales+1 || files[catalog.AllLocales].Language != "all" || files[catalog.DefaultLocale].Language != "en-US" {
		t.Fatalf("bulk files %+v", files)
	}
	for loc, f := range files {
		b := want.Bulk(loc)
		id := apitest.JSON(t, b)
		sum := sha256.Sum256(id)
		if !bytes.Equal(id, r.Bulk[loc].Bytes()) || f.SHA256 != hex.EncodeToString(sum[:]) || f.Size != int64(len(id)) || b.Lang != r.Bulk[loc].Lang {
			t.Fatalf("%s: %d bytes in %q, sha256 %s, size %d; want the %d rendered in %q", f.Language, len(id), b.Lang, f.SHA256, f.Size, r.Bulk[loc].Len(), r.Bulk[loc].Lang)
		}
		if b.Gzip() == nil || b.Brotli() == nil || b.Source().Seg != nil || b.Source().Mem != nil {
			t.Fatalf("%s: gzip %v, brotli %v, identity stored %v", f.Language, b.Gzip() != nil, b.Brotli() != nil, b.Source().Seg != nil)
		}
		for _, rep := range b.Representations() {
			if got, err := representation.Decode(rep); err != nil || !bytes.Equal(got, id) || rep.ETag() != representation.ETag(bytesOf(t, rep)) {
				t.Fatalf("%s: %v decodes to %d bytes (%v), ETag %s", f.Language, rep.Encoding.Value, len(got), err, rep.ETag())
			}
		}
	}

	dir := t.TempDir()
	for _, tc := range []struct {
		name string
		opt  edition.Options
	}{
		{"in memory", edition.Options{Effort: e}},
		{"in a file", edition.Options{Effort: e, Dir: dir}},
	} {
		enc, err := encodeStreamed(t, "15", tc.opt)
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		got := decodeWith(t, enc.Index, openFiles(enc))
		apitest.SameEdition(t, want, got)
		if gf := got.BulkFiles(); len(gf) != len(files) || gf[3] != files[3] || gf[catalog.AllLocales] != files[catalog.AllLocales] {
			t.Errorf("%s: bulk files %+v, want %+v", tc.name, gf, files)
		}
	}

	// After 14 in a file: 15's items that 14 has are read back from 14's
	// segment, and a damaged one is refused, not made into a bulk file.
	e14, err := encodeStreamed(t, "14", edition.Options{Effort: e, Dir: dir})
	if err != nil {
		t.Fatal(err)
	}
	ed14 := decodeWith(t, e14.Index, openFiles(e14))
	after, err := encodeStreamed(t, "15", edition.Options{Effort: e, Base: ed14, Dir: dir})
	if err != nil {
		t.Fatal(err)
	}
	apitest.SameEdition(t, want, decodeWith(t, after.Index, openFiles(e14, after)))
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
	if enc, err := encodeStreamed(t, "15", edition.Options{Effort: e, Base: ed14, Dir: dir}); !errors.Is(err, blob.ErrCorrupt) {
		t.Errorf("bulk files of a damaged base's items: %v, want ErrCorrupt", err)
		if enc != nil {
			enc.Discard()
		}
	}
}

// TestBulkNeedsItsItems: a bulk file whose items were not added is refused.
func TestBulkNeedsItsItems(t *testing.T) {
	t.Parallel()
	r := small(t, "15")
	enc, err := edition.NewEncoder(edition.Options{Effort: apitest.Effort()})
	if err != nil {
		t.Fatal(err)
	}
	defer enc.Abort()
	if err := enc.Add([]*catalog.Doc{r.Bulk[catalog.DefaultLocale]}); err == nil {
		t.Error("a bulk file added before its items")
	}
}
