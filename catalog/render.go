package catalog

import (
	"bytes"
	"cmp"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"math"
	"path"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"unicode/utf8"

	"golang.org/x/sync/errgroup"

	"github.com/refdata/refdata/gen"
)

// Rendered is one game version as JSON: the body of every route in every
// locale (bytes only; package edition adds compressed forms and headers).
type Rendered struct {
	ManifestID  string
	Version     gen.Version
	VersionBody *Doc // /v1/version
	Tables      [NumCategories]Table
	LocresList  *Doc
	Locres      [NumLocales]*Doc
	// Bulk is each locale's bulk file (bulk.go), and language=all's at
	// AllLocales.
	Bulk [NumLocales + 1]*Doc
	// Fills counts the defaults filled in where the source lacked a field.
	Fills map[Fill]int
	// ContentHash is set by the loader that knows the files; "" when unknown.
	ContentHash string
	// Unknown lists the fields openapi.yaml does not describe.
	Unknown []Unknown

	hashOnce sync.Once
}

// Doc is one rendered body and the locale whose text it holds (Lang, the
// Content-Language; "" for a body without text). A locale whose body would
// equal en-US's shares en-US's Doc, so it says en-US.
type Doc struct {
	// JSON is the body; nil for a list, whose body is made from its items'
	// when needed (Bytes): a version's lists are as big as its items, and
	// are not kept twice.
	JSON []byte
	// Items are a list's items, in order (empty, not nil, for an empty list),
	// or a bulk file's.
	Items []*Doc
	// Lines, for a bulk file, names the catalog of each run of Items: the
	// body is then a line per item (bulk.go), not a list. Nil for a list.
	Lines []Run
	Lang  string
	// Sum is JSON's Sum once Rendered.Hash has run: the body's address, by
	// which versions share it.
	Sum Sum
}

// Sum is a body's address: the first 128 bits of the sha256 of its bytes,
// which no one can make two bodies share.
type Sum [16]byte

// SumOf is b's Sum.
func SumOf(b []byte) Sum {
	h := sha256.Sum256(b)
	return Sum(h[:16])
}

// Hash sets every Doc's Sum, on every core; later calls cost nothing.
func (r *Rendered) Hash() {
	r.hashOnce.Do(func() {
		docs := r.Docs()
		var g errgroup.Group
		g.SetLimit(runtime.GOMAXPROCS(0))
		for lo := 0; lo < len(docs); lo += 256 {
			g.Go(func() error {
				for _, d := range docs[lo:min(lo+256, len(docs))] {
					h := sha256.New()
					_, _ = d.WriteTo(h)
					d.Sum = Sum(h.Sum(nil)[:len(Sum{})])
				}
				return nil
			})
		}
		_ = g.Wait()
	})
}

// IsList says whether d's body is made of its items': a list or a bulk file.
func (d *Doc) IsList() bool { return d.Items != nil }

// Len is the length of d's body.
func (d *Doc) Len() int {
	if d.Items == nil {
		return len(d.JSON)
	}
	if d.IsBulk() {
		return d.bulkLen()
	}
	n := len(listPrefix) + len(listSuffix) + max(len(d.Items)-1, 0)
	for _, it := range d.Items {
		n += len(it.JSON) - len(itemPrefix) - 1
	}
	return n
}

// Bytes is d's body: JSON, or for a list, made now from its items'.
func (d *Doc) Bytes() []byte {
	if d.Items == nil {
		return d.JSON
	}
	var b bytes.Buffer
	b.Grow(d.Len())
	_, _ = d.WriteTo(&b)
	return b.Bytes()
}

// WriteTo writes d's body to w, a list's item by item.
func (d *Doc) WriteTo(w io.Writer) (int64, error) {
	return d.WriteWith(w, func(it *Doc) ([]byte, error) { return it.JSON, nil })
}

// WriteWith is WriteTo with each item's body (its JSON) given by body: for
// a list or bulk file whose items' bytes are kept elsewhere, as an import
// that stored them keeps them.
func (d *Doc) WriteWith(w io.Writer, body func(*Doc) ([]byte, error)) (int64, error) {
	if d.Items == nil {
		n, err := w.Write(d.JSON)
		return int64(n), err
	}
	if d.IsBulk() {
		return d.writeBulk(w, body)
	}
	var total int64
	write := func(b []byte) error {
		n, err := w.Write(b)
		total += int64(n)
		return err
	}
	if err := write([]byte(listPrefix)); err != nil {
		return total, err
	}
	for i, it := range d.Items {
		if i > 0 {
			if err := write([]byte{','}); err != nil {
				return total, err
			}
		}
		b, err := body(it)
		if err != nil {
			return total, err
		}
		if err := write(itemData(b)); err != nil {
			return total, err
		}
	}
	return total, write([]byte(listSuffix))
}

// newList is the list of items in locale loc, or en, en-US's list, when it
// has the same bytes: when every item is en-US's.
func newList(items []*Doc, loc int, en *Doc) *Doc {
	if items == nil {
		items = []*Doc{}
	}
	if loc == AllLocales {
		return &Doc{Items: items, Lang: AllLanguages}
	}
	if en != nil && slices.Equal(items, en.Items) {
		return en
	}
	return &Doc{Items: items, Lang: Locales[loc]}
}

// Table is one category's bodies: the list and each item's, per locale;
// index AllLocales is language=all.
type Table struct {
	Order []UUID // as the source lists them
	List  [NumLocales + 1]*Doc
	Items map[UUID]*[NumLocales + 1]*Doc
	// Filtered holds, per field of Filters, the lists of the items whose
	// field is false ([0]) and true ([1]), per locale.
	Filtered map[string]*[2][NumLocales + 1]*Doc
}

// filters names the boolean fields a category's list can be filtered by.
var filters = map[Category][]string{Agents: {"isPlayableCharacter"}}

// Filters lists the boolean fields category c's list can be filtered by.
func (c Category) Filters() []string { return filters[c] }

// Docs lists every Doc of r once, in one order for the same version: the
// version record, the string tables, each category's lists and items, then
// the bulk files.
func (r *Rendered) Docs() []*Doc {
	out := []*Doc{r.VersionBody, r.LocresList}
	for _, d := range r.Locres {
		if d != nil && d != r.LocresList && !slices.Contains(out, d) {
			out = append(out, d)
		}
	}
	return append(append(out, r.docsOf(Categories()...)...), r.bulkDocs()...)
}

// bulkDocs lists the bulk files once each.
func (r *Rendered) bulkDocs() []*Doc {
	var out []*Doc
	for _, d := range r.Bulk {
		if d != nil && !slices.Contains(out, d) {
			out = append(out, d)
		}
	}
	return out
}

// docsOf lists the docs of categories cs once each: each one's lists, its
// items', its filtered lists.
func (r *Rendered) docsOf(cs ...Category) []*Doc {
	seen := map[*Doc]bool{}
	var out []*Doc
	add := func(ds ...*Doc) {
		for _, d := range ds {
			if d != nil && !seen[d] {
				seen[d] = true
				out = append(out, d)
			}
		}
	}
	for _, c := range cs {
		t := &r.Tables[c]
		add(t.List[:]...)
		for _, u := range t.Order {
			add(t.Items[u][:]...)
		}
		for _, f := range filters[c] {
			if lists := t.Filtered[f]; lists != nil {
				add(lists[0][:]...)
				add(lists[1][:]...)
			}
		}
	}
	return out
}

// UUIDs lists the items of a category in source order.
func (r *Rendered) UUIDs(c Category) []UUID { return r.Tables[c].Order }

// ItemJSON is the body of one item in locale loc, and whether it is en-US's.
func (r *Rendered) ItemJSON(c Category, u UUID, loc int) ([]byte, bool, error) {
	d := r.Tables[c].Items[u]
	if d == nil {
		return nil, false, nil
	}
	return d[loc].JSON, loc != DefaultLocale && d[loc] == d[DefaultLocale], nil
}

// ItemSum is the Sum of one item's body in locale loc (zero before Hash),
// and whether it is en-US's.
func (r *Rendered) ItemSum(c Category, u UUID, loc int) (Sum, bool) {
	d := r.Tables[c].Items[u]
	if d == nil {
		return Sum{}, false
	}
	return d[loc].Sum, loc != DefaultLocale && d[loc] == d[DefaultLocale]
}

// ID is the manifest ID.
func (r *Rendered) ID() string { return r.ManifestID }

// Render normalizes a snapshot and renders every body of it. Categories whose
// file the snapshot lacks are empty. The snapshot is normalized in place.
func Render(s *Snapshot) (*Rendered, error) { return render(s, RenderOptions{Bulk: true}, nil, false) }

// RenderOptions tune RenderEach.
type RenderOptions struct {
	// Bulk makes the bulk files.
	Bulk bool
	// Rewrite, when set, rewrites each catalog item's body kept (every
	// locale's and language=all's) once, before it is listed; another
	// locale's body is en-US's when it was the same as rendered.
	Rewrite func(body []byte) []byte
}

// RenderEach is Render calling emit with docs as soon as they are rendered:
// the version record; each source category with the categories flattened
// from it (catalog true), a few locales at a time (each one's own bodies
// and lists), then en-US's and language=all's; the string tables; then the
// bulk files, whose items were emitted before (their bytes may be gone).
// Each doc is emitted once, an item with or after every list of it. It
// consumes the snapshot: a part's items are let go once it is rendered, and
// emit may let go of the docs' bytes (an import that has stored them), so a
// version need not be in memory whole. emit's error stops the rendering.
func RenderEach(s *Snapshot, opt RenderOptions, emit func(docs []*Doc, catalog bool) error) (*Rendered, error) {
	return render(s, opt, emit, true)
}

func render(s *Snapshot, opt RenderOptions, emit func(docs []*Doc, catalog bool) error, consume bool) (*Rendered, error) {
	if emit == nil {
		emit = func([]*Doc, bool) error { return nil }
	}
	r := &Rendered{Fills: map[Fill]int{}}
	if err := r.renderVersion(s.Version); err != nil {
		return nil, err
	}
	if err := emit([]*Doc{r.VersionBody}, false); err != nil {
		return nil, err
	}
	// The biggest source last: by then the rest of the snapshot is let go.
	srcs := SourceCategories()
	weight := map[Category]int{}
	for _, src := range srcs {
		weight[src] = s.size(src)
	}
	slices.SortStableFunc(srcs, func(a, b Category) int { return cmp.Compare(weight[a], weight[b]) })
	for _, src := range srcs {
		items, _, err := s.source(src)
		if err != nil {
			return nil, err
		}
		if consume && s.files != nil {
			delete(s.files, path.Join(Locales[DefaultLocale], src.File()))
		}
		if items == nil {
			items = []any{}
		}
		if err := normalizeItems(src, items, r.Fills, false); err != nil {
			return nil, err
		}
		overlay := s.overlays(src, consume)
		var translated [NumLocales]bool
		for loc, lang := range Locales {
			translated[loc] = loc != DefaultLocale && s.hasOverlay(lang, src)
		}
		err = r.renderSource(src, items, overlay, translated, opt.Rewrite, func(docs []*Doc) error { return emit(docs, true) })
		var ee emitError
		if errors.As(err, &ee) {
			return nil, ee.error
		}
		if err != nil {
			return nil, fmt.Errorf("render %s: %w", src.Name(), err)
		}
		if consume {
			delete(s.Sources, src)
			for _, over := range s.Overlays {
				delete(over, src)
			}
		}
	}
	if err := r.renderLocres(s.Locres); err != nil {
		return nil, err
	}
	if err := emit(append([]*Doc{r.LocresList}, r.Locres[:]...), false); err != nil {
		return nil, err
	}
	if !opt.Bulk {
		return r, nil
	}
	r.MakeBulk()
	if err := emit(r.bulkDocs(), false); err != nil {
		return nil, err
	}
	return r, nil
}

// renderVersion renders the version record: normalized, through gen's type.
func (r *Rendered) renderVersion(version map[string]any) error {
	if err := normalizeVersion(version, r.Fills); err != nil {
		return err
	}
	vb, err := json.Marshal(version) // into gen's type, through JSON
	if err == nil {
		err = json.Unmarshal(vb, &r.Version)
	}
	if err != nil {
		return fmt.Errorf("version record: %w", err)
	}
	r.ManifestID = r.Version.ManifestId
	if vb, err = Encode(r.Version); err != nil {
		return err
	}
	r.VersionBody = &Doc{JSON: itemEnvelope(vb)}
	return nil
}

// overlays returns the translations of src by language, safe to call from
// several goroutines; consume lets go of each once it has been read.
func (s *Snapshot) overlays(src Category, consume bool) func(lang string) ([]any, error) {
	var mu sync.Mutex
	if s.files != nil {
		return func(lang string) ([]any, error) {
			name := path.Join(lang, src.File())
			mu.Lock()
			b := s.files[name]
			if consume {
				delete(s.files, name) // decoded once more, here
			}
			mu.Unlock()
			return readItems(func(string) ([]byte, error) { return b, nil }, name)
		}
	}
	return func(lang string) ([]any, error) {
		mu.Lock()
		defer mu.Unlock()
		over, err := s.overlay(lang, src)
		if consume {
			delete(s.Overlays[lang], src) // let go of once translated
		}
		return over, err
	}
}

// nodes counts the objects and arrays in v: a measure of its size in memory.
func nodes(v any) int {
	n := 0
	switch x := v.(type) {
	case map[string]any:
		n++
		for _, e := range x {
			n += nodes(e)
		}
	case []any:
		n++
		for _, e := range x {
			n += nodes(e)
		}
	}
	return n
}

// RenderFiles renders snapshot files held in memory, repaired as an import
// repairs them, with their content hash.
func RenderFiles(files map[string][]byte) (*Rendered, error) {
	s, err := LoadFiles(files)
	if err != nil {
		return nil, err
	}
	Repair(s)
	r, err := Render(s)
	if err != nil {
		return nil, err
	}
	r.ContentHash = FilesHash(files)
	return r, nil
}

// node is one item of a category in one locale, with the items of other
// categories it holds (a skin's chromas).
type node struct {
	uuid string
	v    map[string]any
	kids []kids
}

// kids are the items of category c a node holds in field: [from, to) of c's nodes.
type kids struct {
	field    string
	c        Category
	from, to int
}

// nested names the fields whose elements are items served on their own.
var nested = map[Category][]struct {
	field string
	c     Category
}{
	Weapons:     {{"skins", WeaponSkins}},
	WeaponSkins: {{"chromas", WeaponSkinChromas}, {"levels", WeaponSkinLevels}},
	Buddies:     {{"levels", BuddyLevels}},
	Sprays:      {{"levels", SprayLevels}},
}

// renderOrder lists a source category and those flattened from it, each
// after the categories nested in its items (rendered first, spliced in).
func renderOrder(src Category) []Category {
	var out []Category
	var visit func(c Category)
	visit = func(c Category) {
		for _, n := range nested[c] {
			visit(n.c)
		}
		out = append(out, c)
	}
	visit(src)
	return out
}

// flatten lists the items of a source category and of the categories
// flattened from it, each in source order.
func flatten(src Category, items []any) map[Category][]node {
	out := map[Category][]node{}
	var add func(c Category, items []any)
	add = func(c Category, items []any) {
		for _, it := range items {
			m, ok := it.(map[string]any)
			if !ok {
				continue
			}
			id, _ := m["uuid"].(string)
			n := node{uuid: id, v: m}
			for _, f := range nested[c] {
				arr := arrayField(m, f.field)
				from := len(out[f.c])
				add(f.c, arr)
				if to := len(out[f.c]); to-from == len(arr) {
					n.kids = append(n.kids, kids{field: f.field, c: f.c, from: from, to: to})
				}
			}
			out[c] = append(out[c], n)
		}
	}
	for _, c := range renderOrder(src) {
		out[c] = []node{}
	}
	add(src, items)
	return out
}

// rawJSON is rendered JSON placed in a value to be rendered: written as it is.
type rawJSON []byte

// spliced is n's value with its nested items replaced by their rendered JSON.
func (n *node) spliced(data map[Category][][]byte) map[string]any {
	if len(n.kids) == 0 {
		return n.v
	}
	m := maps.Clone(n.v)
	for _, k := range n.kids {
		arr := make([]any, 0, k.to-k.from)
		for _, d := range data[k.c][k.from:k.to] {
			arr = append(arr, rawJSON(d))
		}
		m[k.field] = arr
	}
	return m
}

// renderTree renders the item envelopes of every category of one locale's tree.
func renderTree(src Category, tree map[Category][]node) (map[Category][][]byte, error) {
	bodies := map[Category][][]byte{}
	data := map[Category][][]byte{}
	var buf []byte
	for _, c := range renderOrder(src) {
		ns := tree[c]
		out := make([][]byte, len(ns))
		ds := make([][]byte, len(ns))
		for i := range ns {
			var err error
			if buf, err = appendJSON(append(buf[:0], itemPrefix...), ns[i].spliced(data)); err != nil {
				return nil, fmt.Errorf("%s: %w", c.Name(), err)
			}
			out[i] = bytes.Clone(append(buf, '}'))
			ds[i] = itemData(out[i])
		}
		bodies[c], data[c] = out, ds
	}
	return bodies, nil
}

// emitError is emit's error, returned as it is.
type emitError struct{ error }

// renderSource renders a source category and those flattened from it in
// every locale and emits their docs: en-US's bodies first (another locale's
// body equal to en-US's is en-US's), then the other locales' a few at a time,
// each rendered on a core and emitted with its lists as soon as made, and
// last en-US's and language=all's (made of every locale's items). So at
// most en-US's, language=all's and a few locales' bodies are held at once.
func (r *Rendered) renderSource(src Category, items []any, overlay func(lang string) ([]any, error), translated [NumLocales]bool, rewrite func([]byte) []byte, emit func([]*Doc) error) error {
	var trees [NumLocales]map[Category][]node
	trees[DefaultLocale] = flatten(src, items)
	var locs []int
	for loc := range Locales {
		if translated[loc] {
			locs = append(locs, loc)
		}
	}
	rw := &rewriter{f: rewrite, raw: map[*Doc][]byte{}}
	set := func(loc int, bodies map[Category][][]byte) error {
		for _, c := range renderOrder(src) {
			if err := r.setBodies(c, loc, trees[loc][c], bodies[c], rw); err != nil {
				return err
			}
		}
		return nil
	}
	en, err := renderTree(src, trees[DefaultLocale])
	if err != nil {
		return fmt.Errorf("in %s: %w", Locales[DefaultLocale], err)
	}
	if err := set(DefaultLocale, en); err != nil {
		return err
	}
	en = nil
	for _, c := range renderOrder(src) {
		r.renderFilters(c, trees[DefaultLocale][c], DefaultLocale)
		for loc := range Locales {
			if loc != DefaultLocale && !translated[loc] {
				_ = r.setBodies(c, loc, nil, nil, nil) // en-US's
				r.renderFilters(c, trees[DefaultLocale][c], loc)
			}
		}
	}
	seen := map[*Doc]bool{}
	for len(locs) > 0 {
		batch := locs[:min(len(locs), runtime.GOMAXPROCS(0))]
		locs = locs[len(batch):]
		docs := make([]map[Category][][]byte, len(batch))
		var g errgroup.Group
		for i, loc := range batch {
			g.Go(func() (err error) {
				trees[loc], docs[i], err = renderLocale(src, items, overlay, loc)
				return err
			})
		}
		if err := g.Wait(); err != nil {
			return err
		}
		var out []*Doc
		for i, loc := range batch {
			if err := set(loc, docs[i]); err != nil {
				return err
			}
			if err := r.rendered(src, &trees, loc); err != nil {
				return err
			}
			out = r.docsIn(out, seen, renderOrder(src), loc)
		}
		if err := emit(out); err != nil {
			return emitError{err}
		}
	}
	all := map[Category][][]byte{}
	for _, c := range renderOrder(src) {
		var err error
		if all[c], err = r.renderAll(c, &trees, all); err != nil {
			return fmt.Errorf("%s for language=all: %w", c.Name(), err)
		}
		r.renderFilters(c, trees[DefaultLocale][c], AllLocales)
	}
	out := r.docsIn(nil, seen, renderOrder(src), DefaultLocale)
	out = r.docsIn(out, seen, renderOrder(src), AllLocales)
	for _, d := range out {
		if d.Lang == AllLanguages && !d.IsList() {
			rw.rewrite(d, false) // spliced into its parents as rendered, then rewritten whole as they are
		}
	}
	if err := emit(out); err != nil {
		return emitError{err}
	}
	return nil
}

// renderLocale translates a source category's items into loc's language and
// renders them: loc's tree and its bodies by category.
func renderLocale(src Category, items []any, overlay func(lang string) ([]any, error), loc int) (map[Category][]node, map[Category][][]byte, error) {
	over, err := overlay(Locales[loc])
	if err != nil {
		return nil, nil, err
	}
	merged := Translate(items, over)
	if err := normalizeItems(src, merged, map[Fill]int{}, true); err != nil {
		return nil, nil, err
	}
	tree := flatten(src, merged)
	docs, err := renderTree(src, tree)
	if err != nil {
		return nil, nil, fmt.Errorf("in %s: %w", Locales[loc], err)
	}
	return tree, docs, nil
}

// rendered renders loc's filtered lists once its bodies are set, and cuts its
// tree to what language=all needs of its items.
func (r *Rendered) rendered(src Category, trees *[NumLocales]map[Category][]node, loc int) error {
	for _, c := range renderOrder(src) {
		r.renderFilters(c, trees[DefaultLocale][c], loc)
		sc, err := componentSchema(c.Schema())
		if err != nil {
			return err
		}
		for j := range trees[loc][c] {
			n := &trees[loc][c][j]
			n.v = pruneItem(sc, &trees[DefaultLocale][c][j], n)
		}
	}
	return nil
}

// docsIn appends to out the docs of categories cs in locale loc (not
// en-US's it shares) that are not in seen: each one's items', its list, its
// filtered lists.
func (r *Rendered) docsIn(out []*Doc, seen map[*Doc]bool, cs []Category, loc int) []*Doc {
	lang := AllLanguages
	if loc != AllLocales {
		lang = Locales[loc]
	}
	add := func(d *Doc) {
		if d != nil && d.Lang == lang && !seen[d] {
			seen[d] = true
			out = append(out, d)
		}
	}
	for _, c := range cs {
		t := &r.Tables[c]
		for _, u := range t.Order {
			add(t.Items[u][loc])
		}
		add(t.List[loc])
		for _, f := range filters[c] {
			if lists := t.Filtered[f]; lists != nil {
				add(lists[0][loc])
				add(lists[1][loc])
			}
		}
	}
	return out
}

// renderFilters renders a category's filtered lists (Filters) in locale
// loc from its items' bodies, by their en-US value of the field (not a
// boolean: false); en-US's must be made before any other locale's.
func (r *Rendered) renderFilters(c Category, en []node, loc int) {
	t := &r.Tables[c]
	for _, field := range filters[c] {
		if t.Filtered == nil {
			t.Filtered = map[string]*[2][NumLocales + 1]*Doc{}
		}
		lists := t.Filtered[field]
		if lists == nil {
			lists = new([2][NumLocales + 1]*Doc)
			t.Filtered[field] = lists
		}
		for val := range 2 {
			var items []*Doc
			for i, n := range en {
				if v, _ := n.v[field].(bool); v == (val == 1) {
					items = append(items, t.Items[t.Order[i]][loc])
				}
			}
			if loc == DefaultLocale {
				lists[val][loc] = newList(items, DefaultLocale, nil)
			} else {
				lists[val][loc] = newList(items, loc, lists[val][DefaultLocale])
			}
		}
	}
}

// newDoc is body b in locale loc (AllLocales: language=all), or en, en-US's,
// when it has the same bytes.
func newDoc(b []byte, loc int, en *Doc) *Doc {
	switch {
	case loc == AllLocales:
		return &Doc{JSON: b, Lang: AllLanguages}
	case en != nil && bytes.Equal(b, en.JSON):
		return en
	}
	return &Doc{JSON: b, Lang: Locales[loc]}
}

// rewriter applies RenderOptions.Rewrite to the bodies kept, once each, and
// keeps en-US's as rendered where it changed them: another locale's body is
// en-US's when it is the same as rendered.
type rewriter struct {
	f   func([]byte) []byte
	raw map[*Doc][]byte
}

// rewrite rewrites d's body; en: d is en-US's.
func (w *rewriter) rewrite(d *Doc, en bool) {
	if w == nil || w.f == nil {
		return
	}
	out := w.f(d.JSON)
	if en && !bytes.Equal(out, d.JSON) {
		w.raw[d] = d.JSON
	}
	d.JSON = out
}

// rendered is d's body as rendered.
func (w *rewriter) rendered(d *Doc) []byte {
	if w != nil {
		if b, ok := w.raw[d]; ok {
			return b
		}
	}
	return d.JSON
}

// setBodies keeps one locale's bodies of a category: en-US's make the table
// (their uuids checked); another's are kept only where they differ from
// en-US's, and without an overlay (ns is nil) all are en-US's.
func (r *Rendered) setBodies(c Category, loc int, ns []node, bodies [][]byte, rw *rewriter) error {
	t := &r.Tables[c]
	switch {
	case loc == DefaultLocale:
		t.Items = make(map[UUID]*[NumLocales + 1]*Doc, len(ns))
		t.Order = make([]UUID, 0, len(ns))
	case ns == nil:
		t.List[loc] = t.List[DefaultLocale]
		for _, d := range t.Items {
			d[loc] = d[DefaultLocale]
		}
		return nil
	}
	items := make([]*Doc, 0, len(ns))
	for i, n := range ns {
		u, ok := ParseUUID(n.uuid)
		if loc == DefaultLocale {
			if !ok {
				return fmt.Errorf("%s: uuid %q is not a UUID", c.Name(), n.uuid)
			}
			if t.Items[u] != nil {
				return fmt.Errorf("%s: duplicate uuid %s", c.Name(), n.uuid)
			}
			t.Items[u] = new([NumLocales + 1]*Doc)
			t.Order = append(t.Order, u)
		}
		d := t.Items[u]
		if en := d[DefaultLocale]; loc != DefaultLocale && bytes.Equal(bodies[i], rw.rendered(en)) {
			d[loc] = en
		} else {
			d[loc] = &Doc{JSON: bodies[i], Lang: Locales[loc]}
			rw.rewrite(d[loc], loc == DefaultLocale)
		}
		items = append(items, d[loc])
	}
	t.List[loc] = newList(items, loc, t.List[DefaultLocale])
	return nil
}

// renderAll renders a category's language=all bodies (x-localized fields
// become {locale: text}), splicing in nested items' (all, by category), and
// returns the items' JSON without envelopes.
func (r *Rendered) renderAll(c Category, trees *[NumLocales]map[Category][]node, all map[Category][][]byte) ([][]byte, error) {
	sc, err := componentSchema(c.Schema())
	if err != nil {
		return nil, err
	}
	t := &r.Tables[c]
	en := trees[DefaultLocale][c]
	items := make([]*Doc, len(en))
	data := make([][]byte, len(en))
	vals := make([]any, NumLocales)
	var buf []byte
	for i := range en {
		n := &en[i]
		for loc := range Locales {
			vals[loc] = n.v
			if ns := trees[loc][c]; ns != nil {
				vals[loc] = ns[i].v
			}
		}
		if len(n.kids) > 0 {
			for loc := range vals {
				k := node{v: vals[loc].(map[string]any), kids: n.kids}
				vals[loc] = k.spliced(all)
			}
		}
		if buf, err = appendAll(append(buf[:0], itemPrefix...), sc, vals); err != nil {
			return nil, err
		}
		items[i] = newDoc(bytes.Clone(append(buf, '}')), AllLocales, nil)
		data[i] = itemData(items[i].JSON)
		u, _ := ParseUUID(n.uuid)
		t.Items[u][AllLocales] = items[i]
	}
	t.List[AllLocales] = newList(items, AllLocales, nil)
	return data, nil
}

func (r *Rendered) renderLocres(tables map[string]map[string]map[string]string) error {
	summary := make([]gen.LocaleSummary, 0, NumLocales)
	for i, loc := range Locales {
		t := tables[loc]
		if t == nil {
			t = map[string]map[string]string{}
		}
		n := 0
		for _, ns := range t {
			n += len(ns)
		}
		summary = append(summary, gen.LocaleSummary{Locale: loc, Tables: len(t), Entries: n})
		b, err := Encode(t)
		if err != nil {
			return fmt.Errorf("render locres %s: %w", loc, err)
		}
		r.Locres[i] = newDoc(itemEnvelope(b), i, nil)
	}
	b, err := Encode(summary)
	if err != nil {
		return fmt.Errorf("render locres list: %w", err)
	}
	r.LocresList = &Doc{JSON: itemEnvelope(b)}
	return nil
}

// Encode marshals v as every body is written: without HTML escaping, so text
// such as "R&D" keeps its bytes, and without a trailing newline.
func Encode(v any) ([]byte, error) { return appendEncoded(nil, v) }

// appendEncoded appends v, as Encode renders it, to b.
func appendEncoded(b []byte, v any) ([]byte, error) {
	buf := bytes.NewBuffer(b)
	enc := json.NewEncoder(buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n")), nil
}

// itemPrefix opens an item's envelope; a '}' closes it.
const itemPrefix = `{"status":200,"data":`

func itemEnvelope(item []byte) []byte {
	b := make([]byte, 0, len(item)+24)
	b = append(b, itemPrefix...)
	b = append(b, item...)
	return append(b, '}')
}

// itemData is the data of an item envelope (itemEnvelope's inverse).
func itemData(body []byte) []byte {
	return body[len(itemPrefix) : len(body)-1]
}

// The envelope of a list body.
const (
	listPrefix = `{"status":200,"data":[`
	listSuffix = "]}"
)

// ListEnvelope is the body of the list of items whose bodies are bodies.
func ListEnvelope(bodies [][]byte) []byte {
	n := len(listPrefix) + len(listSuffix)
	for _, b := range bodies {
		n += len(b) - len(itemPrefix)
	}
	b := make([]byte, 0, n)
	b = append(b, listPrefix...)
	for i, body := range bodies {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, itemData(body)...)
	}
	return append(b, listSuffix...)
}

// appendJSON appends v, a value as encoding/json decodes into any, as Encode
// writes it. Plain strings and numbers encoding/json writes in plain decimal
// are written here with the calls it makes; the rest goes through Encode.
func appendJSON(b []byte, v any) ([]byte, error) {
	switch x := v.(type) {
	case rawJSON:
		return append(b, x...), nil
	case nil:
		return append(b, "null"...), nil
	case bool:
		return strconv.AppendBool(b, x), nil
	case string:
		if plainString(x) {
			b = append(b, '"')
			b = append(b, x...)
			return append(b, '"'), nil
		}
	case float64:
		if a := math.Abs(x); a == 0 || a >= 1e-6 && a < 1e21 {
			return strconv.AppendFloat(b, x, 'f', -1, 64), nil
		}
	case map[string]any:
		var kb [32]string // most objects have fewer keys: sorted on the stack
		keys := kb[:0]
		for k := range x {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		b = append(b, '{')
		for n, k := range keys {
			var err error
			if b, err = appendKey(b, n, k); err != nil {
				return nil, err
			}
			if b, err = appendJSON(b, x[k]); err != nil {
				return nil, err
			}
		}
		return append(b, '}'), nil
	case []any:
		b = append(b, '[')
		for j, e := range x {
			if j > 0 {
				b = append(b, ',')
			}
			var err error
			if b, err = appendJSON(b, e); err != nil {
				return nil, err
			}
		}
		return append(b, ']'), nil
	}
	return appendEncoded(b, v)
}

// appendKey appends an object's n-th key (from 0), its colon and a comma before.
func appendKey(b []byte, n int, k string) ([]byte, error) {
	if n > 0 {
		b = append(b, ',')
	}
	b, err := appendJSON(b, k)
	if err != nil {
		return nil, err
	}
	return append(b, ':'), nil
}

// plainString reports whether encoding/json (without HTML escaping) writes s
// between quotes as it is (it escapes U+2028 and U+2029).
func plainString(s string) bool {
	ascii := true
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c < 0x20 || c == '"' || c == '\\' {
			return false
		}
		if c >= utf8.RuneSelf {
			ascii = false
		}
	}
	return ascii || utf8.ValidString(s) && !strings.ContainsRune(s, '\u2028') && !strings.ContainsRune(s, '\u2029')
}
