package catalog

import (
	"io"
	"slices"
)

// A bulk file is every item of every catalog list in one language (or
// language=all) as NDJSON: a line {"catalog":"<name>","data":<item>} per
// item, each ending in "\n", the catalogs in Categories' order and each
// one's items in its list's order. A line's data is the item's bytes as its
// list has them, so the lines equal the lists.

// Run is a run of a bulk file's items that belong to one catalog.
type Run struct {
	Category Category
	Items    int
}

// A bulk line is lineStart, the catalog's name, lineData, the item, lineEnd;
// a catalog's name needs no JSON escaping.
const (
	lineStart = `{"catalog":"`
	lineData  = `","data":`
	lineEnd   = "}\n"
)

// IsBulk says whether d is a bulk file.
func (d *Doc) IsBulk() bool { return d.Lines != nil }

// MakeBulk makes each locale's bulk file and language=all's from the lists:
// a locale whose items are all en-US's shares en-US's file, as its lists
// do. Render makes them; a Rendered assembled otherwise (a test's) calls it
// once its tables are.
func (r *Rendered) MakeBulk() {
	for i := range NumLocales + 1 {
		loc := (DefaultLocale + i) % (NumLocales + 1) // en-US first
		items, runs := []*Doc{}, []Run{}
		for _, c := range Categories() {
			if l := r.Tables[c].List[loc]; l != nil && len(l.Items) > 0 {
				runs = append(runs, Run{Category: c, Items: len(l.Items)})
				items = append(items, l.Items...)
			}
		}
		lang := AllLanguages
		if loc != AllLocales {
			lang = Locales[loc]
		}
		d := &Doc{Items: items, Lines: runs, Lang: lang}
		if en := r.Bulk[DefaultLocale]; loc != DefaultLocale && loc != AllLocales && slices.Equal(items, en.Items) {
			d = en
		}
		r.Bulk[loc] = d
	}
}

// bulkLen is the length of a bulk file's body.
func (d *Doc) bulkLen() int {
	n, i := 0, 0
	for _, run := range d.Lines {
		for _, it := range d.Items[i : i+run.Items] {
			n += len(lineStart) + len(run.Category.Name()) + len(lineData) + len(it.JSON) - len(itemPrefix) - 1 + len(lineEnd)
		}
		i += run.Items
	}
	return n
}

// writeBulk writes a bulk file's lines, each item's body given by body.
func (d *Doc) writeBulk(w io.Writer, body func(*Doc) ([]byte, error)) (int64, error) {
	var total int64
	write := func(b []byte) error {
		n, err := w.Write(b)
		total += int64(n)
		return err
	}
	i := 0
	for _, run := range d.Lines {
		head := []byte(lineStart + run.Category.Name() + lineData)
		for _, it := range d.Items[i : i+run.Items] {
			b, err := body(it)
			if err != nil {
				return total, err
			}
			for _, part := range [][]byte{head, itemData(b), []byte(lineEnd)} {
				if err := write(part); err != nil {
					return total, err
				}
			}
		}
		i += run.Items
	}
	return total, nil
}
