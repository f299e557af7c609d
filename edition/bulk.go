package edition

import (
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"math"

	"github.com/refdata/refdata/blob"
	"github.com/refdata/refdata/catalog"
	"github.com/refdata/refdata/representation"
)

// An edition's bulk files (catalog's): per language, every catalog item as
// NDJSON, tens of MB at the public API's size. An import makes each once,
// streamed from the items it has stored into gzip and brotli, so it never
// holds one whole; they are stored compressed only (their identity is the
// gzip decompressed), and their sha256 is in the index.

// bulkFiles are an edition's bulk files: the body of each language's (the
// 18 locales, then language=all) and the sha256 of its identity bytes.
type bulkFiles struct {
	refs [catalog.NumLocales + 1]ref
	sums [catalog.NumLocales + 1][sha256.Size]byte
}

// BulkFile describes one language's bulk file.
type BulkFile struct {
	Language string // a locale, or "all"
	SHA256   string // of the identity bytes (the NDJSON), lowercase hex
	Size     int64  // of the identity bytes
}

// Bulk is the bulk file in locale loc (or catalog.AllLocales); nil for an
// edition without bulk files (stored before they were made).
func (e *Edition) Bulk(loc int) *representation.Body {
	if e.bulk == nil {
		return nil
	}
	return e.bodies.get(e.bulk.refs[loc])
}

// BulkFiles describes the bulk files, the 18 locales' then language=all's;
// none for an edition without.
func (e *Edition) BulkFiles() []BulkFile {
	if e.bulk == nil {
		return nil
	}
	out := make([]BulkFile, 0, len(e.bulk.refs))
	for loc, r := range e.bulk.refs {
		lang := "all"
		if loc < catalog.NumLocales {
			lang = catalog.Locales[loc]
		}
		out = append(out, BulkFile{Language: lang, SHA256: hex.EncodeToString(e.bulk.sums[loc][:]), Size: int64(e.bodies.len(r))})
	}
	return out
}

// streamed is one bulk file as addBulk made it.
type streamed struct {
	representation.Streamed
	sha [sha256.Size]byte
}

// addBulk encodes bulk files, their items added before: each is streamed
// from its items' bytes (read back where the import let go of them) into
// its sha256 and compressed encodings (gzip and brotli on a core each), one
// at a time with the large writer, and written to the new segment unless the
// version or the Base has it.
func (e *Encoder) addBulk(docs []*catalog.Doc) error {
	// A stream is written in chunks under 1 MB: the tables of bodies of 1
	// MB or more are not needed again.
	e.large[1] = nil
	for _, d := range docs {
		for _, it := range d.Items {
			if _, ok := e.index[it]; !ok {
				return fmt.Errorf("encode: a bulk file in %s has an item not added before it", d.Lang)
			}
		}
	}
	for _, d := range docs {
		out, err := e.stream(d)
		if err := e.addStreamed(d, out, err); err != nil {
			e.Abort()
			return err
		}
	}
	return nil
}

// addStreamed makes a streamed bulk file a body of the index, unless the
// version has it already, and stores it unless the Base has it.
func (e *Encoder) addStreamed(d *catalog.Doc, s streamed, err error) error {
	switch {
	case err != nil:
		return fmt.Errorf("encode the bulk file in %s: %w", d.Lang, err)
	case s.Len > math.MaxUint32:
		return fmt.Errorf("encode: the bulk file in %s is %d bytes, more than an index names", d.Lang, s.Len)
	}
	d.Sum = catalog.Sum(s.sha[:len(catalog.Sum{})])
	e.bulkSums[d] = s.sha
	lang, _ := langByte(d.Lang)
	k := bodyKey{d.Sum, lang}
	if j, ok := e.first[k]; ok {
		e.index[d] = j
		return nil
	}
	j := uint32(len(e.bodies))
	e.first[k], e.index[d] = j, j
	b := body{id: d.Sum, lang: lang}
	if old, ok := e.base[k]; ok {
		e.reuse(&b, e.opt.Base.bodies.sourcesAt(old))
	} else if err := e.writeStreamed(&b, s.Streamed); err != nil {
		return err
	}
	e.bodies = append(e.bodies, b)
	return nil
}

// stream writes d's body, each item's bytes read back, into its sha256 and,
// at the Encoder's effort, its compressed encodings (at no effort, the
// identity).
func (e *Encoder) stream(d *catalog.Doc) (streamed, error) {
	h := sha256.New()
	items := &itemReader{e: e}
	write := func(w io.Writer) error {
		_, err := d.WriteWith(io.MultiWriter(h, w), items.body)
		return err
	}
	var out streamed
	if e.opt.Effort == (representation.Effort{}) {
		var buf bytes.Buffer
		if err := write(&buf); err != nil {
			return out, err
		}
		out.Len, out.Sum, out.Identity = int64(buf.Len()), blob.Checksum(buf.Bytes()), buf.Bytes()
	} else {
		var err error
		if out.Streamed, err = e.large[0].CompressStream(write); err != nil {
			return out, err
		}
	}
	h.Sum(out.sha[:0])
	return out, nil
}

// writeStreamed puts a new bulk file's encodings into the new segment: its
// identity only where it has no gzip.
func (e *Encoder) writeStreamed(b *body, s representation.Streamed) error {
	b.enc[0] = slot{n: uint32(s.Len), sum: s.Sum}
	if s.Gzip == nil {
		return e.append(&b.enc[0], s.Identity)
	}
	for j, x := range [][]byte{s.Gzip, s.Brotli} {
		if x == nil {
			continue
		}
		b.enc[j+1] = slot{n: uint32(len(x)), sum: blob.Checksum(x)}
		if err := e.append(&b.enc[j+1], x); err != nil {
			return err
		}
	}
	return nil
}

// itemReader gives an item's bytes as a bulk file is written: its JSON while
// the import holds it, else read back from where the Encoder put it (the new
// segment, or the Base's), an identity not stored decompressed from its
// gzip. One per goroutine: the bytes it returns are valid until its next call.
type itemReader struct {
	e   *Encoder
	zr  *gzip.Reader
	buf bytes.Buffer
}

func (r *itemReader) body(it *catalog.Doc) ([]byte, error) {
	if it.JSON != nil {
		return it.JSON, nil
	}
	b := &r.e.bodies[r.e.index[it]]
	id := b.enc[0]
	if id.at != nil {
		return r.e.read(id)
	}
	zb, err := r.e.read(b.enc[1])
	if err != nil {
		return nil, err
	}
	if r.zr == nil {
		r.zr, err = gzip.NewReader(bytes.NewReader(zb))
	} else {
		err = r.zr.Reset(bytes.NewReader(zb))
	}
	r.buf.Reset()
	if err == nil {
		_, err = io.Copy(&r.buf, io.LimitReader(r.zr, int64(id.n)+1))
	}
	if err == nil && (r.buf.Len() != int(id.n) || blob.Checksum(r.buf.Bytes()) != id.sum) {
		err = blob.ErrCorrupt
	}
	if err != nil {
		return nil, fmt.Errorf("an item's identity from its gzip: %w", err)
	}
	return r.buf.Bytes(), nil
}

// read returns the bytes of a stored encoding, checked.
func (e *Encoder) read(s slot) ([]byte, error) {
	if s.at == pending {
		return e.seg.ReadAt(int64(s.off), int(s.n), s.sum)
	}
	return s.at.Read(int64(s.off), int(s.n), s.sum)
}

// readBulk reads an index's bulk files, after its routes.
func readBulk(d *reader, ed *Edition, n int) {
	switch k := d.uint(4); {
	case d.err != nil || k == 0:
		return
	case k != uint64(len(bulkFiles{}.refs)):
		d.fail(fmt.Errorf("%d bulk files, this program serves %d", k, len(bulkFiles{}.refs)))
		return
	}
	f := new(bulkFiles)
	for loc := range f.refs {
		i := d.uint(4)
		if d.err == nil && i >= uint64(n) {
			d.fail(fmt.Errorf("bulk file: body %d of %d", i, n))
		}
		f.refs[loc] = ref(i)
		copy(f.sums[loc][:], d.next(sha256.Size))
	}
	if d.err == nil {
		ed.bulk = f
	}
}
