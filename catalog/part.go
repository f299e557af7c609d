package catalog

import (
	"bufio"
	"crypto/sha256"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"

	"github.com/refdata/refdata/representation"
)

// Building an edition in another process (package builder): the server plans
// the build (PlanBuild) and sends the plan (WritePlan); the other process
// reads it (ReadPlan), renders the source categories that changed and gzips
// their new bodies (BuildPart), and sends them back; the server reads them
// into an edition beside the previous one (ReadPart). What the server
// already has is not sent again: a body whose bytes and language are those of
// one of the previous edition's is named by its place in the plan's Known,
// and a category whose files did not change is taken from prev as
// BuildFilesReusing takes it. What the other process would do again is not
// done again: the plan carries the language=all bodies of the categories it
// rebuilds (All), and an item whose 18 locale bodies are the ones its body
// was merged from keeps that body, as renderAll keeps prev's in this process.
//
// The format is this package's own, written by hand: a few length-prefixed
// fields, read with every length and count checked against what is left of
// a bound, so a broken writer makes ReadPart fail, never allocate past the
// bound or panic. encoding/gob allocates what a message's header announces.

// A BuildPlan is what building a version from its files needs.
type BuildPlan struct {
	// Files are the files to read: every one but those of reused categories.
	Files map[string][]byte
	// Keys hashes each source category's files (sourceKeys).
	Keys [NumCategories]string
	// Reused marks the source categories whose files are prev's: their tables
	// are prev's.
	Reused [NumCategories]bool
	// Known names prev's bodies, in the order of prev.Bodies().
	Known []KnownBody
	// All holds, for each category rebuilt (not Reused), prev's language=all
	// body of each item and what it was merged from.
	All [NumCategories]priorAlls
	// Effort is the gzip level new bodies are compressed at.
	Effort representation.Effort

	known []*representation.Body // prev.Bodies(), where the plan was made
}

// KnownBody names a body the server has: its ETag and Content-Language.
type KnownBody struct{ ETag, Lang string }

// PriorAll is an item's language=all body in the previous edition: its
// bytes, and the digest of the 18 locale bodies they were merged from
// (localesKey).
type PriorAll struct {
	Key  [sha256.Size]byte
	JSON []byte
}

// priorAlls is one category's PriorAll by item: the allSource of a build in
// a builder process.
type priorAlls map[UUID]PriorAll

func (m priorAlls) priorAll(u UUID, bodies *[NumLocales + 1]*representation.Body) *representation.Body {
	if a, ok := m[u]; ok && a.Key == localesKey(bodies) {
		return representation.NewBody(a.JSON, AllLanguages)
	}
	return nil
}

// localesKey digests an item's 18 locale bodies by their ETags, which name
// their bytes (a body's ETag hashes them), in locale order.
func localesKey(bodies *[NumLocales + 1]*representation.Body) [sha256.Size]byte {
	h := sha256.New()
	for _, b := range bodies[:NumLocales] {
		h.Write([]byte(b.ETag()))
		h.Write([]byte{'\n'})
	}
	return [sha256.Size]byte(h.Sum(nil))
}

// PlanBuild plans building files after prev (nil: no previous edition) in
// another process.
func PlanBuild(files map[string][]byte, prev *Edition) *BuildPlan {
	p := planBuild(files, prev)
	if prev != nil {
		p.known = prev.Bodies()
		p.Known = make([]KnownBody, len(p.known))
		for i, b := range p.known {
			p.Known[i] = KnownBody{ETag: b.ETag(), Lang: b.Lang}
		}
		for c := range Category(NumCategories) {
			if p.Reused[categories[c].source] {
				continue
			}
			t := &prev.tables[c]
			p.All[c] = make(priorAlls, len(t.order))
			for _, u := range t.order {
				if b := t.items[u]; b[AllLocales] != nil {
					p.All[c][u] = PriorAll{Key: localesKey(b), JSON: b[AllLocales].JSON}
				}
			}
		}
	}
	return p
}

// planBuild is PlanBuild without Known, for a build in this process.
func planBuild(files map[string][]byte, prev *Edition) *BuildPlan {
	keys := sourceKeys(files)
	p := &BuildPlan{Files: files, Keys: *keys, Effort: representation.CurrentEffort()}
	if prev == nil {
		return p
	}
	for _, c := range SourceCategories() {
		p.Reused[c] = keys[c] != "" && prev.sources[c].key == keys[c]
	}
	kept := make(map[string][]byte, len(files))
	for name, b := range files {
		if c, ok := sourceFiles[name]; ok && p.Reused[c] {
			continue // reused: build does not look at its items
		}
		kept[name] = b
	}
	p.Files = kept
	return p
}

// build builds the plan in this process, taking reused tables and unchanged
// items' language=all bodies from prev.
func (p *BuildPlan) build(prev *Edition) (*Edition, error) {
	var prior func(Category) allSource
	if prev != nil {
		prior = func(c Category) allSource { return &prev.tables[c] }
	}
	return buildFiles(p.Files, &p.Keys, prev, prior)
}

// buildFiles builds files with keys after prev, as build does with prior.
// The snapshot is its own, so build may consume it, and files are not used
// once decoded: a caller that holds no other reference to them lets them go
// while the build renders.
func buildFiles(files map[string][]byte, keys *[NumCategories]string, prev *Edition, prior func(Category) allSource) (*Edition, error) {
	snap, err := LoadFiles(files)
	if err != nil {
		return nil, err
	}
	Repair(snap)
	return build(snap, prev, keys, true, prior)
}

// planMagic and partMagic open a plan and a part; a reader that finds
// anything else stops.
const (
	planMagic = "refdata-plan/2\n"
	partMagic = "refdata-part/2\n"
)

// WritePlan writes p for ReadPlan.
func WritePlan(w io.Writer, p *BuildPlan) error {
	e := newWireWriter(w)
	e.raw([]byte(planMagic))
	e.u32(uint32(int32(p.Effort.Gzip)))
	e.u32(uint32(int32(p.Effort.Brotli)))
	for c := range Category(NumCategories) {
		e.str(p.Keys[c])
		e.flag(p.Reused[c])
	}
	e.u32(uint32(len(p.Known)))
	for _, k := range p.Known {
		e.str(k.ETag)
		e.str(k.Lang)
	}
	for c := range Category(NumCategories) {
		e.u32(uint32(len(p.All[c])))
		for u, a := range p.All[c] {
			e.raw(u[:])
			e.raw(a.Key[:])
			e.bytes(a.JSON)
		}
	}
	e.u32(uint32(len(p.Files)))
	for name, b := range p.Files {
		e.str(name)
		e.bytes(b)
	}
	return e.flush()
}

// ReadPlan reads a plan WritePlan wrote, reading at most limit bytes.
func ReadPlan(r io.Reader, limit int64) (*BuildPlan, error) {
	d := newWireReader(r, limit)
	d.magic(planMagic)
	p := &BuildPlan{}
	p.Effort.Gzip = int(int32(d.u32()))
	p.Effort.Brotli = int(int32(d.u32()))
	for c := range Category(NumCategories) {
		p.Keys[c] = d.str()
		p.Reused[c] = d.flag()
	}
	n := d.count(2)
	p.Known = make([]KnownBody, 0, n)
	for range n {
		p.Known = append(p.Known, KnownBody{ETag: d.str(), Lang: d.str()})
	}
	for c := range Category(NumCategories) {
		n := d.count(int64(len(UUID{})) + sha256.Size + 4)
		if n > 0 {
			p.All[c] = make(priorAlls, n)
		}
		for range n {
			var u UUID
			var a PriorAll
			d.read(u[:])
			d.read(a.Key[:])
			a.JSON = d.bytes()
			p.All[c][u] = a
		}
	}
	n = d.count(8)
	p.Files = make(map[string][]byte, n)
	for range n {
		name := d.str()
		p.Files[name] = d.bytes()
	}
	if d.err != nil {
		return nil, fmt.Errorf("read the build plan: %w", d.err)
	}
	return p, nil
}

// BuildPart builds what p does not take from the previous edition and makes
// the gzip of every body that is not one of p.Known (at p.Effort), on every
// core: the work of the process WritePart answers from. It takes p.Files
// (leaving nil), so that they can be freed while the build runs.
func BuildPart(p *BuildPlan) (*Edition, error) {
	stub := &Edition{} // reused categories: their keys, empty tables
	for c := range Category(NumCategories) {
		if p.Reused[c] {
			stub.sources[c].key = p.Keys[c]
		}
	}
	// The plan's files are the child's only copy: given to the build alone,
	// they are garbage once decoded.
	files := p.Files
	p.Files = nil
	e, err := buildFiles(files, &p.Keys, stub, func(c Category) allSource { return p.All[c] })
	if err != nil {
		return nil, err
	}
	known := p.knownIndex()
	var fresh []*representation.Body
	for _, b := range e.Bodies() {
		if _, ok := known[KnownBody{ETag: b.ETag(), Lang: b.Lang}]; !ok {
			fresh = append(fresh, b)
		}
	}
	restore := representation.UseEffort(p.Effort)
	defer restore()
	representation.CompressGzipAll(fresh) // on every core: no requests come in here
	return e, nil
}

func (p *BuildPlan) knownIndex() map[KnownBody]uint32 {
	m := make(map[KnownBody]uint32, len(p.Known))
	for i, k := range p.Known {
		m[k] = uint32(i)
	}
	return m
}

// WritePart writes the part of e that p does not reuse, for ReadPart.
func WritePart(w io.Writer, e *Edition, p *BuildPlan) error {
	version, err := json.Marshal(e.Version)
	if err != nil {
		return fmt.Errorf("write part: version record: %w", err)
	}
	enc := newWireWriter(w)
	enc.raw([]byte(partMagic))
	enc.bytes(version)
	if err := enc.fills(e.Fills); err != nil {
		return err
	}
	for c := range Category(NumCategories) {
		enc.str(e.sources[c].key)
		if err := enc.fills(e.sources[c].fills); err != nil {
			return err
		}
	}
	// Every distinct body once, in the order the tables below name them.
	known := p.knownIndex()
	index := map[*representation.Body]uint32{}
	var order []*representation.Body
	add := func(b *representation.Body) {
		if _, ok := index[b]; !ok && b != nil {
			index[b] = uint32(len(order))
			order = append(order, b)
		}
	}
	e.walkPart(p, add)
	enc.u32(uint32(len(order)))
	for _, b := range order {
		if k, ok := known[KnownBody{ETag: b.ETag(), Lang: b.Lang}]; ok {
			enc.flag(true)
			enc.u32(k)
			continue
		}
		gz, made := b.Gzipped()
		if !made {
			return errors.New("write part: a new body was not gzipped")
		}
		enc.flag(false)
		enc.str(b.Lang)
		enc.bytes(b.JSON)
		enc.str(b.ETag())
		enc.bytes(gz)
		enc.str(b.GzipETag())
	}
	ref := func(b *representation.Body) {
		if b == nil {
			enc.u32(noBody)
			return
		}
		enc.u32(index[b])
	}
	e.walkPartRefs(p, ref, func(n int) { enc.u32(uint32(n)) }, func(u UUID) { enc.raw(u[:]) })
	return enc.flush()
}

// noBody stands for a missing body in a part; ReadPart rejects it.
const noBody = ^uint32(0)

// walkPart calls add for every body of the part, in walkPartRefs' order.
func (e *Edition) walkPart(p *BuildPlan, add func(*representation.Body)) {
	e.walkPartRefs(p, add, func(int) {}, func(UUID) {})
}

// walkPartRefs walks the part: version, locres list, locres per locale, then
// each category that is not reused: its lists, its item count, and each
// item's UUID and bodies.
func (e *Edition) walkPartRefs(p *BuildPlan, body func(*representation.Body), count func(int), uuid func(UUID)) {
	body(e.version)
	body(e.locresList)
	for _, b := range e.locres {
		body(b)
	}
	for c := range Category(NumCategories) {
		if p.Reused[categories[c].source] {
			continue
		}
		t := &e.tables[c]
		for _, b := range t.list {
			body(b)
		}
		count(len(t.order))
		for _, u := range t.order {
			uuid(u)
			for _, b := range t.items[u] {
				body(b)
			}
		}
	}
}

// ReadPart reads what WritePart wrote for p into an edition that takes the
// rest from prev (as BuildFilesReusing would have), reading at most limit
// bytes. Bodies named by p.Known are prev's own; the others arrive gzipped,
// with their ETags (representation.NewGzippedBody).
// Whatever the bytes, it returns an edition whose every body is present, or
// an error.
func ReadPart(r io.Reader, limit int64, p *BuildPlan, prev *Edition) (*Edition, error) {
	e, err := readPart(r, limit, p, prev)
	if err != nil {
		return nil, fmt.Errorf("read the built part: %w", err)
	}
	return e, nil
}

func readPart(r io.Reader, limit int64, p *BuildPlan, prev *Edition) (*Edition, error) {
	d := newWireReader(r, limit)
	d.magic(partMagic)
	e := &Edition{}
	version := d.bytes()
	e.Fills = d.fills()
	for c := range Category(NumCategories) {
		e.sources[c].key = d.str()
		e.sources[c].fills = d.fills()
	}
	n := d.count(5)
	if d.err != nil {
		return nil, d.err
	}
	bodies := make([]*representation.Body, 0, n)
	for range n {
		if d.flag() {
			k := d.u32()
			if d.err == nil && int(k) >= len(p.known) {
				d.fail(fmt.Errorf("body names known body %d of %d", k, len(p.known)))
			}
			if d.err != nil {
				return nil, d.err
			}
			bodies = append(bodies, p.known[k])
			continue
		}
		lang, b, etag, gz, gzETag := d.str(), d.bytes(), d.str(), d.bytes(), d.str()
		if d.err != nil {
			return nil, d.err
		}
		if len(gz) == 0 {
			gz = nil
		}
		body, err := representation.NewGzippedBody(b, lang, etag, gz, gzETag)
		if err != nil {
			return nil, err
		}
		bodies = append(bodies, body)
	}
	body := func() *representation.Body {
		i := d.u32()
		if d.err != nil {
			return nil
		}
		if int(i) >= len(bodies) {
			d.fail(fmt.Errorf("a table names body %d of %d", i, len(bodies)))
			return nil
		}
		return bodies[i]
	}
	if err := json.Unmarshal(version, &e.Version); err != nil && d.err == nil {
		d.fail(fmt.Errorf("version record: %w", err))
	}
	e.ManifestID = e.Version.ManifestId
	e.VersionField = representation.NewField("X-Data-Version", e.ManifestID)
	e.version = body()
	e.locresList = body()
	for i := range e.locres {
		e.locres[i] = body()
	}
	for c := range Category(NumCategories) {
		src := categories[c].source
		if p.Reused[src] {
			continue
		}
		t := &e.tables[c]
		for i := range t.list {
			t.list[i] = body()
		}
		n := d.count(16 + 4*(NumLocales+1))
		t.items = make(map[UUID]*[NumLocales + 1]*representation.Body, n)
		t.order = make([]UUID, 0, n)
		for range n {
			var u UUID
			d.read(u[:])
			var item [NumLocales + 1]*representation.Body
			for i := range item {
				item[i] = body()
			}
			if d.err != nil {
				return nil, d.err
			}
			if t.items[u] != nil {
				return nil, fmt.Errorf("%s: duplicate uuid %s", c.Name(), u)
			}
			t.items[u] = &item
			t.order = append(t.order, u)
		}
		if d.err != nil {
			return nil, d.err
		}
		if slices.Contains(t.list[:], nil) {
			return nil, fmt.Errorf("%s: a list is missing", c.Name())
		}
	}
	d.end()
	if d.err != nil {
		return nil, d.err
	}
	if e.version == nil || e.locresList == nil || slices.Contains(e.locres[:], nil) {
		return nil, errors.New("the version or a locres body is missing")
	}
	for _, src := range SourceCategories() {
		if p.Reused[src] {
			if prev == nil {
				return nil, fmt.Errorf("%s is reused, but there is no previous edition", src.Name())
			}
			e.reuse(src, prev)
		}
	}
	return e, nil
}

// wireBuffer is the wire readers' and writers' buffer: a reader handed a
// bufio.Reader of this size reads through it, so two reads can follow on one
// stream (ReadStoredPart).
const wireBuffer = 256 << 10

// wireWriter writes the plan's and the part's fields; the first error sticks.
type wireWriter struct {
	w   *bufio.Writer
	err error
}

func newWireWriter(w io.Writer) *wireWriter {
	return &wireWriter{w: bufio.NewWriterSize(w, wireBuffer)}
}

func (e *wireWriter) raw(b []byte) {
	if e.err == nil {
		_, e.err = e.w.Write(b)
	}
}

func (e *wireWriter) u32(v uint32) { e.raw(binary.BigEndian.AppendUint32(nil, v)) }

func (e *wireWriter) flag(v bool) {
	if v {
		e.raw([]byte{1})
	} else {
		e.raw([]byte{0})
	}
}

func (e *wireWriter) bytes(b []byte) {
	e.u32(uint32(len(b)))
	e.raw(b)
}

func (e *wireWriter) str(s string) { e.bytes([]byte(s)) }

func (e *wireWriter) fills(f map[Fill]int) error {
	e.u32(uint32(len(f)))
	for k, n := range f {
		v, ok := k.Value.(string)
		if !ok {
			return fmt.Errorf("write part: fill %s.%s has a %T value", k.Schema, k.Field, k.Value)
		}
		e.str(k.Schema)
		e.str(k.Field)
		e.str(v)
		e.u32(uint32(n))
	}
	return nil
}

func (e *wireWriter) flush() error {
	if e.err == nil {
		e.err = e.w.Flush()
	}
	return e.err
}

// wireReader reads what wireWriter wrote, never more than left bytes; the
// first error sticks and every later read returns zero values.
type wireReader struct {
	r    *bufio.Reader
	left int64
	err  error
}

func newWireReader(r io.Reader, limit int64) *wireReader {
	return &wireReader{r: bufio.NewReaderSize(r, wireBuffer), left: limit}
}

func (d *wireReader) fail(err error) {
	if d.err == nil {
		d.err = err
	}
}

// take counts n bytes against the bound, reporting whether they may be read.
func (d *wireReader) take(n int) bool {
	if d.err != nil {
		return false
	}
	if int64(n) > d.left {
		d.fail(fmt.Errorf("more than the %d bytes allowed", d.left))
		return false
	}
	d.left -= int64(n)
	return true
}

func (d *wireReader) read(b []byte) {
	if !d.take(len(b)) {
		return
	}
	if _, err := io.ReadFull(d.r, b); err != nil {
		d.fail(err)
	}
}

// next reads n bytes from the reader's buffer (n at most its size), valid
// until the next read; nil after an error. Fields read into a buffer of the
// caller's were each an allocation: a buffer handed to io.ReadFull moves to
// the heap, and a part's tables are tens of thousands of u32s.
func (d *wireReader) next(n int) []byte {
	if !d.take(n) {
		return nil
	}
	b, err := d.r.Peek(n)
	if err != nil {
		if err == io.EOF && len(b) > 0 {
			err = io.ErrUnexpectedEOF
		}
		d.fail(err)
		return nil
	}
	_, _ = d.r.Discard(n)
	return b
}

func (d *wireReader) u32() uint32 {
	b := d.next(4)
	if b == nil {
		return 0
	}
	return binary.BigEndian.Uint32(b)
}

func (d *wireReader) flag() bool {
	b := d.next(1)
	if b == nil {
		return false
	}
	if b[0] > 1 {
		d.fail(fmt.Errorf("flag %d", b[0]))
	}
	return b[0] == 1
}

// count reads a count of things at least min bytes each, no more than the
// bytes left could hold: allocating for it stays within the bound.
func (d *wireReader) count(min int64) int {
	n := int64(d.u32())
	if d.err == nil && n*min > d.left {
		d.fail(fmt.Errorf("%d entries do not fit in the %d bytes left", n, d.left))
	}
	if d.err != nil {
		return 0
	}
	return int(n)
}

func (d *wireReader) bytes() []byte { return d.field(d.u32()) }

// field reads a field of n bytes into memory of its own.
func (d *wireReader) field(n uint32) []byte {
	if d.err == nil && int64(n) > d.left {
		d.fail(fmt.Errorf("a field of %d bytes, %d left", n, d.left))
	}
	if d.err != nil {
		return nil
	}
	b := make([]byte, n)
	d.read(b)
	return b
}

// str reads a string; one of up to shortStr bytes is copied once, from the
// reader's buffer.
func (d *wireReader) str() string {
	n := d.u32()
	if n > shortStr {
		return string(d.field(n))
	}
	return string(d.next(int(n)))
}

// shortStr is the longest string str reads from the reader's buffer.
const shortStr = 4096

func (d *wireReader) magic(want string) {
	if b := d.next(len(want)); d.err == nil && string(b) != want {
		d.fail(fmt.Errorf("not a %q stream", want[:len(want)-1]))
	}
}

func (d *wireReader) fills() map[Fill]int {
	n := d.count(16)
	m := make(map[Fill]int, n)
	for range n {
		f := Fill{Schema: d.str(), Field: d.str(), Value: d.str()}
		m[f] += int(d.u32())
	}
	return m
}

// end checks that nothing follows the part.
func (d *wireReader) end() {
	if d.err != nil {
		return
	}
	if _, err := d.r.ReadByte(); err != io.EOF {
		d.fail(errors.New("bytes after the part"))
	}
}
