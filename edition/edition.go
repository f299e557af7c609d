package edition

import (
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

	version    *representation.Body
	locresList *representation.Body
	locres     [catalog.NumLocales]*representation.Body
	tables     [catalog.NumCategories]table
	bodies     []*representation.Body // every distinct body once
	rules      rules                  // rules.go
}

// table holds a category's bodies as catalog.Table holds its docs.
type table struct {
	order    []catalog.UUID
	list     [catalog.NumLocales + 1]*representation.Body
	items    map[catalog.UUID]*[catalog.NumLocales + 1]*representation.Body
	filtered map[string]*[2][catalog.NumLocales + 1]*representation.Body
}

// List is the body of /v1/<category> in locale loc (or catalog.AllLocales).
func (e *Edition) List(c catalog.Category, loc int) *representation.Body {
	return e.tables[c].list[loc]
}

// Item is the body of /v1/<category>/<uuid> in locale loc, or nil.
func (e *Edition) Item(c catalog.Category, u catalog.UUID, loc int) *representation.Body {
	if b := e.tables[c].items[u]; b != nil {
		return b[loc]
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
		return lists[1][loc]
	}
	return lists[0][loc]
}

// UUIDs lists the items of a category in source order.
func (e *Edition) UUIDs(c catalog.Category) []catalog.UUID { return e.tables[c].order }

// VersionBody is the body of /v1/version.
func (e *Edition) VersionBody() *representation.Body { return e.version }

// LocresList is the body of /v1/locres.
func (e *Edition) LocresList() *representation.Body { return e.locresList }

// Locres is the body of /v1/locres/{locale}.
func (e *Edition) Locres(loc int) *representation.Body { return e.locres[loc] }

// Bodies lists every distinct body once; callers must not change it.
func (e *Edition) Bodies() []*representation.Body { return e.bodies }

// None is the edition of a repository with no version yet: no bodies and no
// manifest ID (the router answers 503 wherever a version is needed).
func None() *Edition { return &Edition{} }

// IsNone reports whether e is a None: no version at all.
func (e *Edition) IsNone() bool { return e.ManifestID == "" }

// ID is the manifest ID (catalog.Items).
func (e *Edition) ID() string { return e.ManifestID }

// ItemJSON implements catalog.Items.
func (e *Edition) ItemJSON(c catalog.Category, u catalog.UUID, loc int) ([]byte, bool) {
	b := e.tables[c].items[u]
	if b == nil {
		return nil, false
	}
	return b[loc].JSON, loc != catalog.DefaultLocale && b[loc] == b[catalog.DefaultLocale]
}

// New makes an edition of r's bodies without compressed encodings.
func New(r *catalog.Rendered) *Edition {
	docs := r.Docs()
	bodies := make([]*representation.Body, len(docs))
	parallel(len(docs), func(i int) { bodies[i] = representation.NewBody(docs[i].JSON, docs[i].Lang) })
	return assemble(r, representation.Effort{}, docs, bodies)
}

// assemble indexes bodies, made of docs in the same order, by the routes of r.
func assemble(r *catalog.Rendered, eff representation.Effort, docs []*catalog.Doc, bodies []*representation.Body) *Edition {
	idx := make(map[*catalog.Doc]*representation.Body, len(docs))
	for i, d := range docs {
		idx[d] = bodies[i]
	}
	e := &Edition{ManifestID: r.ManifestID, Version: r.Version, ContentHash: r.ContentHash, Effort: eff, Unknown: r.Unknown, bodies: bodies}
	e.VersionField = representation.NewField("X-Data-Version", r.ManifestID)
	e.version = idx[r.VersionBody]
	e.locresList = idx[r.LocresList]
	for loc, d := range r.Locres {
		e.locres[loc] = idx[d]
	}
	bodiesOf := func(ds *[catalog.NumLocales + 1]*catalog.Doc) *[catalog.NumLocales + 1]*representation.Body {
		var bs [catalog.NumLocales + 1]*representation.Body
		for loc, d := range ds {
			bs[loc] = idx[d]
		}
		return &bs
	}
	for c := range catalog.Category(catalog.NumCategories) {
		rt, t := &r.Tables[c], &e.tables[c]
		t.order = rt.Order
		t.list = *bodiesOf(&rt.List)
		t.items = make(map[catalog.UUID]*[catalog.NumLocales + 1]*representation.Body, len(rt.Items))
		for u, ds := range rt.Items {
			t.items[u] = bodiesOf(ds)
		}
		for field, lists := range rt.Filtered {
			if t.filtered == nil {
				t.filtered = map[string]*[2][catalog.NumLocales + 1]*representation.Body{}
			}
			t.filtered[field] = &[2][catalog.NumLocales + 1]*representation.Body{*bodiesOf(&lists[0]), *bodiesOf(&lists[1])}
		}
	}
	e.makeRules()
	return e
}
