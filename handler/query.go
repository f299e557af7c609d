package handler

import (
	"bytes"
	"cmp"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"runtime"
	"strings"
	"sync"

	kgzip "github.com/klauspost/compress/gzip"
	"golang.org/x/sync/singleflight"

	"github.com/refdata/refdata/bounded"
	"github.com/refdata/refdata/catalog"
	"github.com/refdata/refdata/edition"
	"github.com/refdata/refdata/query"
	"github.com/refdata/refdata/representation"
)

// The answers to q and fields (package query): computed from the edition's
// list bodies on the first request, kept by content and canonical query.

// Default bounds of what queries keep in memory (Server.QueryCacheBytes,
// Server.QueryMemoBytes).
const (
	// The decoded tables and the split list bodies queries read: at the public
	// API's size a skins table is 12 MB, its list in one locale 3.5 MB.
	DefaultQueryCacheBytes = 128 << 20
	// The answers.
	DefaultQueryMemoBytes = 64 << 20
)

// The compression of an answer to a query, made while its request waits, gzip
// and brotli each on a core of its own. gzip at level 1 by klauspost/compress:
// twice as fast as compress/gzip's level 1, and smaller (2.5 MB of skins: 4.7
// against 9.6 ms). brotli at quality 4: as fast as that gzip (6.5 ms), where
// quality 1 is a third faster and twice the size. On 1.2 MB of skins, 190 KB
// and 86 KB, against Best's 162 KB and 75 KB.
const (
	queryGzipLevel = kgzip.BestSpeed
	queryBrotli    = 4
)

// queries is what a server keeps for them.
type queries struct {
	data    *sizedLRU[any]                  // "t"+id: a *query.Table; "s"+id+lang: a *split
	answers *sizedLRU[*representation.Body] // by content and canonical query (queryList, itemFields)
	flight  singleflight.Group              // one computation of each key at once
	slots   chan struct{}                   // computations at once: one per core
}

func (s *Server) queryState() *queries {
	s.queriesOnce.Do(func() {
		s.queries = &queries{
			data:    newSizedLRU[any](cmp.Or(s.QueryCacheBytes, DefaultQueryCacheBytes)),
			answers: newSizedLRU[*representation.Body](cmp.Or(s.QueryMemoBytes, DefaultQueryMemoBytes)),
			slots:   make(chan struct{}, runtime.GOMAXPROCS(0)),
		}
	})
	return s.queries
}

// queryParams are a request's q and fields as written, and the filter of a
// route's own that stands for a term (isPlayableCharacter).
type queryParams struct {
	q, fields    string
	requirePath  string
	requireValue string
}

func (p queryParams) any() bool {
	return strings.TrimSpace(p.q) != "" || strings.TrimSpace(p.fields) != "" || p.requirePath != ""
}

// parsed reads q and fields and checks their paths against c's in ed; a
// client's error (EINVALID) says where q and fields are described.
func (p queryParams) parsed(c catalog.Category, ed *edition.Edition) (*query.Query, *query.Fields, error) {
	q, f, err := p.read(c, ed)
	if catalog.ErrorCode(err) == catalog.EINVALID {
		err = catalog.Errorf(catalog.EINVALID, "%s; /openapi.yaml describes q and fields", catalog.ErrorMessage(err))
	}
	return q, f, err
}

// read is parsed without the pointer to the spec: a page says it its own way.
func (p queryParams) read(c catalog.Category, ed *edition.Edition) (*query.Query, *query.Fields, error) {
	q, err := query.Parse(p.q)
	if err != nil {
		return nil, nil, catalog.Errorf(catalog.EINVALID, "%s", err)
	}
	if p.requirePath != "" {
		q = query.Require(q, p.requirePath, p.requireValue)
	}
	f, err := query.ParseFields(p.fields)
	if err != nil {
		return nil, nil, catalog.Errorf(catalog.EINVALID, "%s", err)
	}
	paths, err := query.CategoryPaths(c, ed.Unknown)
	if err != nil {
		return nil, nil, catalog.Internal("the contract's schema cannot be read", err)
	}
	if err := q.Check(paths); err != nil {
		return nil, nil, catalog.Errorf(catalog.EINVALID, "%s", err)
	}
	if err := f.Check(paths, p.fields); err != nil {
		return nil, nil, catalog.Errorf(catalog.EINVALID, "%s", err)
	}
	return q, f, nil
}

// queryList answers a list route with q or fields: the items q selects, in
// the list's order and bytes, each cut to fields.
func (s *Server) queryList(r *http.Request, c catalog.Category, lang string, p queryParams) Answer {
	loc, err := parseLanguage(lang, true)
	if err != nil {
		return failed(err)
	}
	ed, rs := s.read(r)
	q, f, err := p.parsed(c, ed)
	if err != nil {
		return failed(err)
	}
	b, err := s.answerList(ed, c, loc, q, f)
	if err != nil {
		return failed(err)
	}
	a := queryAnswer(r, ed, b, rs.list[c], canonicalQuery(loc, q, f))
	a.Label = rs.list[c].Label + "?q"
	return a
}

// answerList is the list body of c's items in ed that q selects, in locale
// loc, each cut to f: kept, or computed and kept. Its errors are internal.
func (s *Server) answerList(ed *edition.Edition, c catalog.Category, loc int, q *query.Query, f *query.Fields) (*representation.Body, error) {
	list, all := ed.List(c, loc), ed.List(c, catalog.AllLocales)
	if list == nil || all == nil {
		return nil, catalog.Internal("the version lacks a list", fmt.Errorf("%s: no list body", c.Name()))
	}
	qs := s.queryState()
	key := ""
	if list.ID != ([16]byte{}) && all.ID != ([16]byte{}) {
		key = "l" + string(all.ID[:]) + string(list.ID[:]) + list.Lang + "\x00" + q.String() + "\x00" + f.String()
	}
	b, err := qs.answer(key, func() (*representation.Body, error) {
		t, err := qs.table(all)
		if err != nil {
			return nil, err
		}
		sel := q.Select(t, loc)
		if f == nil && len(sel) == t.Len() {
			return list, nil // every item: the list itself
		}
		sp, err := qs.split(list)
		if err != nil {
			return nil, err
		}
		if sp.len() != t.Len() {
			return nil, fmt.Errorf("%s: %d items in the %s list, %d in every locale's", c.Name(), sp.len(), list.Lang, t.Len())
		}
		return listAnswer(sp, sel, f, list.Lang)
	})
	if err != nil {
		return nil, catalog.Internal("the list could not be queried", err)
	}
	return b, nil
}

// itemFields answers an item route with fields: the item cut to them.
func (s *Server) itemFields(r *http.Request, c catalog.Category, id, lang string, p queryParams) Answer {
	u, loc, err := parseItem(c, id, lang)
	if err != nil {
		return failed(err)
	}
	ed, rs := s.read(r)
	_, f, err := p.parsed(c, ed)
	if err != nil {
		return failed(err)
	}
	item := ed.Item(c, u, loc)
	if item == nil {
		return notFound(ed, "no %s with uuid %s in version %s; list them at %s", c.Noun(), u, ed.ManifestID, rs.listURL(c, ed))
	}
	key := ""
	if item.ID != ([16]byte{}) {
		key = "i" + string(item.ID[:]) + item.Lang + "\x00" + f.String()
	}
	b, err := s.queryState().answer(key, func() (*representation.Body, error) {
		data, err := item.JSON()
		if err != nil {
			return nil, err
		}
		inner, ok := bytes.CutPrefix(data, []byte(itemPrefix))
		if !ok || !bytes.HasSuffix(inner, []byte("}")) {
			return nil, fmt.Errorf("%s %s: not an item body", c.Name(), u)
		}
		out := appendEnvelope(make([]byte, 0, len(data)), f)
		if out, err = f.Project(out, inner[:len(inner)-1]); err != nil {
			return nil, fmt.Errorf("%s %s: %w", c.Name(), u, err)
		}
		return encodeAnswer(append(out, '}'), item.Lang), nil
	})
	if err != nil {
		return failed(catalog.Internal("the item could not be cut to its fields", err))
	}
	a := queryAnswer(r, ed, b, rs.item[c], canonicalQuery(loc, nil, f))
	a.Label = rs.item[c].Label + "?fields"
	return a
}

// The envelope's start, of an item body and of a list body.
const (
	itemPrefix = `{"status":200,"data":`
	listPrefix = `{"status":200,"data":[`
)

// appendEnvelope opens an answer's envelope: with fields, it names them.
func appendEnvelope(b []byte, f *query.Fields) []byte {
	b = append(b, `{"status":200,`...)
	if f != nil {
		b = append(b, `"fields":[`...)
		for i, p := range f.Paths() {
			if i > 0 {
				b = append(b, ',')
			}
			b = append(append(append(b, '"'), p...), '"') // names of [A-Za-z0-9_.]: nothing to escape
		}
		b = append(b, "],"...)
	}
	return append(b, `"data":`...)
}

// listAnswer is the body of the items sel of sp, cut to f.
func listAnswer(sp *split, sel []int, f *query.Fields, lang string) (*representation.Body, error) {
	n := len(listPrefix) + 2
	for _, i := range sel {
		n += int(sp.spans[2*i+1]-sp.spans[2*i]) + 1
	}
	b := append(appendEnvelope(make([]byte, 0, n), f), '[')
	for j, i := range sel {
		if j > 0 {
			b = append(b, ',')
		}
		item := sp.body[sp.spans[2*i]:sp.spans[2*i+1]]
		if f == nil {
			b = append(b, item...)
			continue
		}
		var err error
		if b, err = f.Project(b, item); err != nil {
			return nil, err
		}
	}
	return encodeAnswer(append(b, "]}"...), lang), nil
}

// Compressors are reused: a brotli writer's tables are megabytes.
var (
	brotlis = sync.Pool{New: func() any { return representation.NewCompressor(representation.Effort{Brotli: queryBrotli}) }}
	gzips   = sync.Pool{New: func() any { w, _ := kgzip.NewWriterLevel(io.Discard, queryGzipLevel); return w }}
)

// encodeAnswer makes a body of an answer's bytes in every encoding, gzip and
// brotli on two cores at once.
func encodeAnswer(b []byte, lang string) *representation.Body {
	var gz []byte
	var gzTag string
	var wg sync.WaitGroup
	wg.Go(func() {
		gz = gzipAnswer(b)
		gzTag = representation.ETag(gz)
	})
	z := brotlis.Get().(*representation.Compressor)
	br := z.Brotli(b)
	brotlis.Put(z)
	tag, brTag := representation.ETag(b), representation.ETag(br)
	wg.Wait()
	return representation.Assemble(b, tag, lang, gz, gzTag, br, brTag)
}

// gzipAnswer is b's gzip, or nil where it would not be smaller.
func gzipAnswer(b []byte) []byte {
	if len(b) < representation.MinCompress {
		return nil
	}
	w := gzips.Get().(*kgzip.Writer)
	defer gzips.Put(w)
	var buf bytes.Buffer
	buf.Grow(len(b) / 4)
	w.Reset(&buf)
	if _, err := w.Write(b); err != nil || w.Close() != nil || buf.Len() >= len(b) {
		return nil
	}
	return buf.Bytes()
}

// answer is the body kept under key, or made by make (one at a time per
// key, at most one per core at once) and kept. An empty key keeps nothing.
func (qs *queries) answer(key string, make func() (*representation.Body, error)) (*representation.Body, error) {
	if b, ok := qs.answers.get(key); ok {
		return b, nil
	}
	compute := func() (any, error) {
		if b, ok := qs.answers.get(key); ok {
			return b, nil
		}
		qs.slots <- struct{}{}
		defer func() { <-qs.slots }()
		b, err := make()
		if err == nil && key != "" {
			qs.answers.add(key, b, int64(bodyBytes(b)))
		}
		return b, err
	}
	var v any
	var err error
	if key == "" {
		v, err = compute()
	} else {
		v, err, _ = qs.flight.Do("a"+key, compute)
	}
	if err != nil {
		return nil, err
	}
	return v.(*representation.Body), nil
}

// bodyBytes is about what a kept answer holds in memory: a list served as
// its own answer holds only its header fields.
func bodyBytes(b *representation.Body) int {
	n := 512
	for _, e := range b.Representations() {
		if e.Source().Mem != nil {
			n += e.Len()
		}
	}
	return n
}

// table is the decoded table of a language=all list body.
func (qs *queries) table(all *representation.Body) (*query.Table, error) {
	key := "t" + string(all.ID[:])
	v, err := qs.kept(key, all.ID == [16]byte{}, func() (any, int64, error) {
		data, err := all.JSON()
		if err != nil {
			return nil, 0, err
		}
		t, err := query.Decode(data)
		if err != nil {
			return nil, 0, fmt.Errorf("decode a list: %w", err)
		}
		return t, int64(t.Bytes()), nil
	})
	if err != nil {
		return nil, err
	}
	return v.(*query.Table), nil
}

// split is a list body and where its items are.
type split struct {
	body  []byte
	spans []uint32
}

func (sp *split) len() int { return len(sp.spans) / 2 }

// split is the split of a list body.
func (qs *queries) split(list *representation.Body) (*split, error) {
	key := "s" + string(list.ID[:]) + list.Lang
	v, err := qs.kept(key, list.ID == [16]byte{}, func() (any, int64, error) {
		data, err := list.JSON()
		if err != nil {
			return nil, 0, err
		}
		spans, err := query.Split(data)
		if err != nil {
			return nil, 0, fmt.Errorf("split a list: %w", err)
		}
		return &split{data, spans}, int64(len(data) + 4*len(spans)), nil
	})
	if err != nil {
		return nil, err
	}
	return v.(*split), nil
}

// kept is the value kept under key, or made once and kept; never kept when
// anonymous (a body without an address).
func (qs *queries) kept(key string, anonymous bool, make func() (any, int64, error)) (any, error) {
	if anonymous {
		v, _, err := make()
		return v, err
	}
	if v, ok := qs.data.get(key); ok {
		return v, nil
	}
	v, err, _ := qs.flight.Do(key, func() (any, error) {
		if v, ok := qs.data.get(key); ok {
			return v, nil
		}
		v, n, err := make()
		if err == nil {
			qs.data.add(key, v, n)
		}
		return v, err
	})
	return v, err
}

// canonicalQuery is the query of an answer's pinned URL: language (left out
// for en-US), q and fields in their canonical forms.
func canonicalQuery(loc int, q *query.Query, f *query.Fields) string {
	v := url.Values{}
	switch {
	case loc == catalog.AllLocales:
		v.Set("language", "all")
	case loc != catalog.DefaultLocale:
		v.Set("language", catalog.Locales[loc])
	}
	if q != nil {
		v.Set("q", q.String())
	}
	if f != nil {
		v.Set("fields", f.String())
	}
	return v.Encode()
}

// queryAnswer is a query's answer from ed at route, naming its pinned URL
// with the canonical query.
func queryAnswer(r *http.Request, ed *edition.Edition, b *representation.Body, route *representation.Route, query string) Answer {
	loc := representation.NewField("Content-Location", "/v1/versions/"+ed.ManifestID+strings.TrimPrefix(r.URL.EscapedPath(), "/v1")+"?"+query)
	a := own(ed, b, route)
	a.Response.Location = &loc
	return a
}

// sizedLRU is a bounded.Cache of values whose size the caller gives when it
// adds them (a decoded table's, a split list's); a value over a quarter of
// the bound is not kept. Safe for concurrent use.
type sizedLRU[V any] struct {
	c *bounded.Cache[string, sized[V]]
}

type sized[V any] struct {
	v V
	n int64
}

func newSizedLRU[V any](maxBytes int64) *sizedLRU[V] {
	return &sizedLRU[V]{bounded.New(bounded.Limits{Bytes: maxBytes, Largest: maxBytes / 4},
		func(_ string, s sized[V]) int64 { return s.n })}
}

func (c *sizedLRU[V]) get(k string) (V, bool) {
	s, ok := c.c.Get(k)
	return s.v, ok
}

func (c *sizedLRU[V]) add(k string, v V, n int64) { c.c.Add(k, sized[V]{v, n}) }
