package query

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/getkin/kin-openapi/openapi3"

	"github.com/refdata/refdata/catalog"
)

// Paths are the paths an item of one list has: the properties of its schema
// in openapi.yaml, through objects and arrays, and the fields the upstream
// added that a version names (anything below those, whose shape the
// contract does not know).
type Paths struct {
	noun    string
	root    *openapi3.Schema
	unknown map[string]bool // dotted paths of the fields the upstream added
}

// CategoryPaths are the paths of c's items in a version whose fields the
// contract does not describe are unknown (edition.Edition.Unknown).
func CategoryPaths(c catalog.Category, unknown []catalog.Unknown) (*Paths, error) {
	return NewPaths(c.Schema(), c.Noun(), catalog.UnknownOf(c, unknown))
}

// NewPaths are the paths of items of openapi.yaml's component schema, a noun
// naming one in messages, and the dotted paths of fields the upstream added.
func NewPaths(schema, noun string, unknown []string) (*Paths, error) {
	doc, err := catalog.Spec()
	if err != nil {
		return nil, err
	}
	ref := doc.Components.Schemas[schema]
	if ref == nil || ref.Value == nil {
		return nil, fmt.Errorf("openapi.yaml has no schema %q", schema)
	}
	p := &Paths{noun: noun, root: ref.Value, unknown: map[string]bool{}}
	for _, u := range unknown {
		p.unknown[u] = true
	}
	return p, nil
}

// HasName says whether the items have a displayName, which a bare word and
// name: search.
func (p *Paths) HasName() bool {
	_, ok := p.root.Properties["displayName"]
	return ok
}

// element is the schema of what a path names in an array of sc, or sc: a
// path goes through arrays to their elements.
func element(sc *openapi3.Schema) *openapi3.Schema {
	for sc != nil {
		if len(sc.AllOf) == 1 && sc.AllOf[0].Value != nil {
			sc = sc.AllOf[0].Value
			continue
		}
		if sc.Type.Is(openapi3.TypeArray) && sc.Items != nil {
			sc = sc.Items.Value
			continue
		}
		return sc
	}
	return nil
}

// freeForm: an object whose fields the contract does not list, or a value of
// any shape (a field the upstream added): any path below it is allowed.
func freeForm(sc *openapi3.Schema) bool {
	return sc == nil || len(sc.AnyOf) > 0 || len(sc.OneOf) > 0 ||
		sc.Type.Is(openapi3.TypeObject) && len(sc.Properties) == 0 && (sc.AdditionalProperties.Has == nil || *sc.AdditionalProperties.Has)
}

// check says why path is not one of p's, or "" when it is; a leaf path (a
// term's) must end at a value, not at an object with fields of its own.
func (p *Paths) check(path []string, leaf bool) string {
	sc := p.root
	for i, name := range path {
		sc = element(sc)
		if freeForm(sc) {
			return ""
		}
		if prop := sc.Properties[name]; prop != nil && prop.Value != nil {
			sc = prop.Value
			continue
		}
		if p.unknown[strings.Join(path[:i+1], ".")] {
			return ""
		}
		where := "a " + p.noun
		if i > 0 {
			where = strings.Join(path[:i], ".")
		}
		if len(sc.Properties) == 0 {
			return fmt.Sprintf("%s has no fields to name, so no %q", where, name)
		}
		return fmt.Sprintf("no field %q in %s; its fields are %s", name, where, p.fieldsOf(sc, path[:i]))
	}
	if sc = element(sc); leaf && !freeForm(sc) && sc.Type.Is(openapi3.TypeObject) {
		return fmt.Sprintf("%s is an object: name one of its fields (%s), or test it with =null", strings.Join(path, "."), p.fieldsOf(sc, path))
	}
	return ""
}

// fieldsOf lists the fields of an object of schema sc at path (the
// contract's and the upstream's), for a message.
func (p *Paths) fieldsOf(sc *openapi3.Schema, path []string) string {
	names := slices.Collect(maps.Keys(sc.Properties))
	prefix := strings.Join(path, ".")
	for u := range p.unknown {
		rest := u
		if prefix != "" {
			var ok bool
			if rest, ok = strings.CutPrefix(u, prefix+"."); !ok {
				continue
			}
		}
		if !strings.Contains(rest, ".") {
			names = append(names, rest)
		}
	}
	slices.Sort(names)
	return strings.Join(names, ", ")
}

// Check makes sure every path q names is one of p's, and that the items have
// a displayName where a bare word or name: asks for one.
func (q *Query) Check(p *Paths) error {
	if q == nil {
		return nil
	}
	for _, g := range q.groups {
		for _, t := range g {
			switch {
			case t.Path == nil || t.AnyLocale:
				if !p.HasName() {
					what := "a bare word"
					if t.AnyLocale {
						what = "name:"
					}
					return &Error{Param: "q", Term: t.N, Pos: t.Pos, Text: t.Text, Reason: fmt.Sprintf("%s matches displayName, which a %s does not have; name a path (path:value)", what, p.noun)}
				}
			default:
				// An object may only be null-tested: shopData=null.
				if why := p.check(t.Path, !t.isNull); why != "" {
					return &Error{Param: "q", Term: t.N, Pos: t.Pos + boolInt(t.Not), Text: t.Text, Reason: "unknown path: " + why}
				}
			}
		}
	}
	return nil
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}
