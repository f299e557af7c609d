package query

import (
	"math"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"
	"unsafe"

	"github.com/refdata/refdata/catalog"
)

// Select lists the items of t that q selects, in t's order, when its text is
// read in locale loc (an index of catalog.Locales), or in any locale for
// catalog.AllLocales. A nil q selects every item. Each term is at most one
// pass over the values its path reaches.
func (q *Query) Select(t *Table, loc int) []int {
	out := make([]int, 0, len(t.items))
	if q == nil {
		for i := range t.items {
			out = append(out, i)
		}
		return out
	}
	groups := make([][]bound, len(q.groups))
	for i, g := range q.groups {
		for _, term := range g {
			groups[i] = append(groups[i], t.bind(term))
		}
	}
	e := eval{t: t, loc: loc}
items:
	for i, it := range t.items {
		root := t.nodes[it]
		for _, g := range groups {
			held := false
			for j := range g {
				if e.term(&g[j], root) {
					held = true
					break
				}
			}
			if !held {
				continue items
			}
		}
		out = append(out, i)
	}
	return out
}

// bound is a term with its path's names as t's key ids.
type bound struct {
	*Term
	ids []uint32
	ok  bool // every name is a key of t: else the path reaches nothing
}

func (t *Table) bind(term *Term) bound {
	path := term.Path
	if path == nil || term.AnyLocale {
		path = []string{"displayName"}
	}
	b := bound{Term: term, ids: make([]uint32, len(path)), ok: true}
	for i, name := range path {
		b.ids[i], b.ok = t.keys[name]
		if !b.ok {
			break
		}
	}
	return b
}

type eval struct {
	t   *Table
	loc int
}

func (e *eval) term(b *bound, root node) bool {
	if !b.ok {
		return b.Not // the path reaches nothing in any item
	}
	return e.holds(b, root, b.ids) != b.Not
}

// holds: the value at path below n matches, any element of an array
// standing for the array.
func (e *eval) holds(b *bound, n node, path []uint32) bool {
	switch {
	case n.kind == kArray:
		for _, c := range e.t.nodes[n.a : n.a+n.n] {
			if e.holds(b, c, path) {
				return true
			}
		}
		return false
	case len(path) == 0:
		return e.leaf(b, n)
	}
	c, ok := e.t.member(n, path[0])
	return ok && e.holds(b, c, path[1:])
}

func (e *eval) leaf(b *bound, n node) bool {
	t := b.Term
	switch n.kind {
	case kText:
		kids := e.t.nodes[n.a : n.a+n.n]
		if !t.AnyLocale && e.loc != catalog.AllLocales {
			return e.leaf(b, kids[e.loc])
		}
		for _, c := range kids {
			if e.leaf(b, c) {
				return true
			}
		}
		return false
	case kString:
		return e.text(t, n)
	case kNumber:
		if !t.isNum {
			return false
		}
		f := math.Float64frombits(n.x)
		switch t.Op {
		case Greater:
			return f > t.num
		case AtLeast:
			return f >= t.num
		case Less:
			return f < t.num
		case AtMost:
			return f <= t.num
		}
		return f == t.num
	case kTrue, kFalse:
		return (t.Op == Contains || t.Op == Equals) && t.isBool && t.boolVal == (n.kind == kTrue)
	case kNull:
		return (t.Op == Contains || t.Op == Equals) && t.isNull
	}
	return false
}

func (e *eval) text(t *Term, n node) bool {
	switch t.Op {
	case Contains:
		if t.isNull {
			return false
		}
		if n.ascii {
			return t.foldedOK && containsFoldedASCII(e.t.str(n), t.folded)
		}
		return strings.Contains(e.t.folded(n), t.folded)
	case Equals:
		if t.isNull {
			return false
		}
		if t.isUUID {
			return strings.EqualFold(e.t.str(n), t.Value)
		}
		return e.t.str(n) == t.Value
	}
	if !t.isTime {
		return false
	}
	w, err := time.Parse(time.RFC3339, e.t.str(n))
	if err != nil {
		return false
	}
	switch t.Op {
	case Greater:
		return w.After(t.when)
	case AtLeast:
		return !w.Before(t.when)
	case Less:
		return w.Before(t.when)
	}
	return !w.After(t.when)
}

// Fold is s case folded: each character replaced by the least of those
// Unicode's simple case folding makes it equal to (strings.EqualFold's
// rule: K, k and the Kelvin sign are one, ß and ss are not), so text
// contains a word in any letter case when its fold contains the word's.
func Fold(s string) string {
	if isASCII(s) {
		for i := 0; i < len(s); i++ {
			if 'a' <= s[i] && s[i] <= 'z' {
				b := []byte(s)
				for j := i; j < len(b); j++ {
					if 'a' <= b[j] && b[j] <= 'z' {
						b[j] -= 'a' - 'A'
					}
				}
				return string(b)
			}
		}
		return s
	}
	return strings.Map(foldRune, s)
}

func foldRune(r rune) rune {
	if r < utf8.RuneSelf {
		if 'a' <= r && r <= 'z' {
			return r - ('a' - 'A')
		}
		return r
	}
	least := r
	for f := unicode.SimpleFold(r); f != r; f = unicode.SimpleFold(f) {
		least = min(least, f)
	}
	return least
}

// containsFoldedASCII: ASCII text s contains needle, a Fold, in any letter case.
func containsFoldedASCII(s, needle string) bool {
	if needle == "" {
		return true
	}
	first := needle[0]
	for i := 0; i+len(needle) <= len(s); i++ {
		if upper(s[i]) != first {
			continue
		}
		j := 1
		for j < len(needle) && upper(s[i+j]) == needle[j] {
			j++
		}
		if j == len(needle) {
			return true
		}
	}
	return false
}

func upper(c byte) byte {
	if 'a' <= c && c <= 'z' {
		return c - ('a' - 'A')
	}
	return c
}

func isASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= utf8.RuneSelf {
			return false
		}
	}
	return true
}

// unsafeString views b as a string; b must not change after.
func unsafeString(b []byte) string { return unsafe.String(unsafe.SliceData(b), len(b)) }
