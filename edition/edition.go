package edition

import (
	"crypto/sha256"
	"slices"

	"github.com/refdata/refdata/catalog"
	"github.com/refdata/refdata/gen"
	"github.com/refdata/refdata/representation"
)

// Edition is one game version as served. It is immutable; a server swaps
// whole editions, so a response never mixes two versions.
type Edition struct {
	ManifestID   string
	Version      gen.Version
	VersionField representation.Field // X-Data-Version
	ContentHash  string               // "" when unknown
	// Effort is what its bodies were compressed at (zero: not compressed).
	Effort  representation.Effort
	Unknown []catalog.Unknown // the fields openapi.yaml does not describe

	version    ref
	locresList ref
	locres     [catalog.NumLocales]ref
	tables     [catalog.NumCategories]table
	bulk       *bulkFiles // nil: none (bulk.go)
	bodies     bodySet
	rules      rules // rules.go
}

// ref is a body's place in its edition's bodySet.
type ref = uint32

// table holds a category's bodies as catalog.Table holds its docs.
type table struct {
	order    []catalog.UUID
	list     [catalog.NumLocales + 1]ref
	items    map[catalog.UUID]*[catalog.NumLocales + 1]ref
	filtered map[string]*[2][catalog.NumLocales + 1]ref
}

// List is the body of /v1/<category> in locale loc (or catalog.AllLocales).
func (e *Edition) List(c catalog.Category, loc int) *representation.Body {
	if e.tables[c].items == nil {
		return nil // None, or a category a broken index lacks
	}
	return e.bodies.get(e.tables[c].list[loc])
}

// Item is the body of /v1/<category>/<uuid> in locale loc, or nil.
func (e *Edition) Item(c catalog.Category, u catalog.UUID, loc int) *representation.Body {
	if b := e.tables[c].items[u]; b != nil {
		return e.bodies.get(b[loc])
	}
	return nil
}

// Filtered is the body of /v1/<category>?<field>=<value> in locale loc, or
// nil when the category's list is not filtered by field (Category.Filters).
func (e *Edition) Filtered(c catalog.Category, field string, value bool, loc int) *representation.Body {
	lists := e.tables[c].filtered[field]
	if lists == nil {
		return nil
	}
	if value {
		return e.bodies.get(lists[1][loc])
	}
	return e.bodies.get(lists[0][loc])
}

// UUIDs lists the items of a category in source order.
func (e *Edition) UUIDs(c catalog.Category) []catalog.UUID { return e.tables[c].order }

// VersionBody is the body of /v1/version.
func (e *Edition) VersionBody() *representation.Body { return e.bodies.get(e.version) }

// LocresList is the body of /v1/locres.
func (e *Edition) LocresList() *representation.Body { return e.bodies.get(e.locresList) }

// Locres is the body of /v1/locres/{locale}.
func (e *Edition) Locres(loc int) *representation.Body { return e.bodies.get(e.locres[loc]) }

// Sizes sums the bytes of the edition's bodies in each encoding.
func (e *Edition) Sizes() (identity, gz, br int) { return e.bodies.sizes() }

// None is the edition of a repository with no version yet: no bodies and no
// manifest ID (the router answers 503 wherever a version is needed).
func None() *Edition { return &Edition{} }

// IsNone reports whether e is a None: no version at all.
func (e *Edition) IsNone() bool { return e.ManifestID == "" }

// ID is the manifest ID (catalog.Items).
func (e *Edition) ID() string { return e.ManifestID }

// ItemJSON implements catalog.Items.
func (e *Edition) ItemJSON(c catalog.Category, u catalog.UUID, loc int) ([]byte, bool, error) {
	b := e.tables[c].items[u]
	if b == nil {
		return nil, false, nil
	}
	data, err := e.bodies.get(b[loc]).JSON()
	return data, loc != catalog.DefaultLocale && b[loc] == b[catalog.DefaultLocale], err
}

// ItemSum implements catalog.Items.
func (e *Edition) ItemSum(c catalog.Category, u catalog.UUID, loc int) (catalog.Sum, bool) {
	b := e.tables[c].items[u]
	if b == nil {
		return catalog.Sum{}, false
	}
	return e.bodies.id(b[loc]), loc != catalog.DefaultLocale && b[loc] == b[catalog.DefaultLocale]
}

// New makes an edition of r's bodies in memory, without compressed encodings.
func New(r *catalog.Rendered) *Edition {
	r.Hash()
	docs := r.Docs()
	bodies := make([]*representation.Body, len(docs))
	refs := make(map[*catalog.Doc]ref, len(docs))
	for i, d := range docs {
		refs[d] = ref(i)
	}
	sums := make([][sha256.Size]byte, len(docs))
	parallel(len(docs), func(i int) {
		b := docs[i].Bytes()
		bodies[i] = representation.NewBody(b, docs[i].Lang)
		bodies[i].ID = docs[i].Sum
		if docs[i].IsBulk() {
			sums[i] = sha256.Sum256(b)
		}
	})
	e := &Edition{Effort: representation.Effort{}, bodies: bodySet{made: bodies}}
	e.setMeta(r.ManifestID, r.Version, r.ContentHash, r.Unknown)
	e.setRoutes(r, refs)
	if !slices.Contains(r.Bulk[:], nil) {
		e.bulk = new(bulkFiles)
		for loc, d := range r.Bulk {
			e.bulk.refs[loc], e.bulk.sums[loc] = refs[d], sums[refs[d]]
		}
	}
	if err := e.makeRules(); err != nil {
		panic(err) // bodies in memory cannot fail to be read
	}
	return e
}

func (e *Edition) setMeta(id string, v gen.Version, contentHash string, unknown []catalog.Unknown) {
	e.ManifestID, e.Version, e.ContentHash, e.Unknown = id, v, contentHash, unknown
	e.VersionField = representation.NewField("X-Data-Version", id)
}

// setRoutes indexes r's routes by the refs of their docs' bodies.
func (e *Edition) setRoutes(r *catalog.Rendered, refs map[*catalog.Doc]ref) {
	refsOf := func(ds *[catalog.NumLocales + 1]*catalog.Doc) *[catalog.NumLocales + 1]ref {
		var bs [catalog.NumLocales + 1]ref
		for loc, d := range ds {
			bs[loc] = refs[d]
		}
		return &bs
	}
	e.version, e.locresList = refs[r.VersionBody], refs[r.LocresList]
	for loc, d := range r.Locres {
		e.locres[loc] = refs[d]
	}
	for c := range catalog.Category(catalog.NumCategories) {
		rt, t := &r.Tables[c], &e.tables[c]
		t.order = rt.Order
		t.list = *refsOf(&rt.List)
		t.items = make(map[catalog.UUID]*[catalog.NumLocales + 1]ref, len(rt.Items))
		for u, ds := range rt.Items {
			t.items[u] = refsOf(ds)
		}
		for field, lists := range rt.Filtered {
			if t.filtered == nil {
				t.filtered = map[string]*[2][catalog.NumLocales + 1]ref{}
			}
			t.filtered[field] = &[2][catalog.NumLocales + 1]ref{*refsOf(&lists[0]), *refsOf(&lists[1])}
		}
	}
}
