package query

import (
	"errors"
	"fmt"
	"math"
	"strconv"
	"unicode/utf16"
	"unicode/utf8"

	"github.com/refdata/refdata/catalog"
)

// Table is a list body's items decoded once for queries: every value as a
// 24-byte node in one slice, every text in one byte slice. Decoded from a
// language=all list, a localized text is one node with its 18 locales'
// texts, so one table answers a query in any language, and name: across
// them all. Immutable; safe for concurrent use.
//
// Written by hand rather than decoded with encoding/json: a skins list of the
// public API's size (9 MB in every locale) decodes there to 24 MB of maps and
// interfaces in 170 ms, here to 12 MB in 25-50 ms, and a locale's text is a
// child by index, not a map look-up.
type Table struct {
	nodes []node
	text  []byte
	items []uint32 // each item's node
	keys  map[string]uint32
	// locale[i] is the key id of catalog.Locales[i].
	locale [catalog.NumLocales]uint32
}

type kind uint8

const (
	kNull kind = iota
	kFalse
	kTrue
	kNumber
	kString
	kText // localized text: 18 string children, in catalog.Locales order
	kArray
	kObject
)

// node is one value. Children of an array or object are consecutive nodes.
type node struct {
	kind  kind
	ascii bool   // a string of ASCII characters only
	key   uint32 // the key id of an object's member
	a, n  uint32 // string: offset and length in text; array, object, text: first child, count
	x     uint64 // number: its float64 bits; a string not ASCII: its case folded form (offset<<32 | length)
}

// MaxDepth bounds the nesting a Table decodes (the import allows 64).
const MaxDepth = 64

// ErrSyntax is a body that is not the JSON list Decode reads.
var ErrSyntax = errors.New("not a JSON list body")

// Len is the number of items.
func (t *Table) Len() int { return len(t.items) }

// Bytes is about how much memory the table holds.
func (t *Table) Bytes() int {
	return cap(t.nodes)*24 + cap(t.text) + len(t.items)*4 + len(t.keys)*64
}

// Decode reads a list body, {"status":200,"data":[…]}, into a Table.
func Decode(body []byte) (*Table, error) {
	t := &Table{keys: map[string]uint32{}}
	for i, l := range catalog.Locales {
		t.locale[i] = t.intern([]byte(l))
	}
	d := decoder{s: scanner{b: body}, t: t}
	t.nodes = make([]node, 0, len(body)/40)
	t.text = make([]byte, 0, len(body)*3/4)
	root, err := d.value(0)
	if err != nil {
		return nil, err
	}
	if d.s.skipSpace(); d.s.i != len(body) {
		return nil, d.s.errorf("text after the body")
	}
	dataKey, ok := t.keys["data"]
	data, found := t.member(root, dataKey)
	if !ok || !found || data.kind != kArray {
		return nil, fmt.Errorf("%w: no data array", ErrSyntax)
	}
	t.items = make([]uint32, data.n)
	for i := range t.items {
		t.items[i] = data.a + uint32(i)
	}
	if cap(t.text) > len(t.text)+len(t.text)/4 {
		t.text = append([]byte(nil), t.text...) // the estimate was generous
	}
	return t, nil
}

func (t *Table) intern(k []byte) uint32 {
	if id, ok := t.keys[string(k)]; ok {
		return id
	}
	id := uint32(len(t.keys))
	t.keys[string(k)] = id
	return id
}

// member is the value of object o's member with key id k.
func (t *Table) member(o node, k uint32) (node, bool) {
	if o.kind != kObject {
		return node{}, false
	}
	for _, c := range t.nodes[o.a : o.a+o.n] {
		if c.key == k {
			return c, true
		}
	}
	return node{}, false
}

func (t *Table) str(n node) string {
	b := t.text[n.a : n.a+n.n]
	return unsafeString(b)
}

// folded is a string's case folded form (Fold); for ASCII, the caller folds.
func (t *Table) folded(n node) string {
	if n.ascii {
		return t.str(n)
	}
	off, l := uint32(n.x>>32), uint32(n.x)
	return unsafeString(t.text[off : off+l])
}

type decoder struct {
	s     scanner
	t     *Table
	stack []node // children being read, of every open array and object
	buf   []byte
}

func (d *decoder) value(depth int) (node, error) {
	if depth > MaxDepth {
		return node{}, d.s.errorf("nested more than %d deep", MaxDepth)
	}
	s := &d.s
	s.skipSpace()
	if s.i == len(s.b) {
		return node{}, s.errorf("unexpected end")
	}
	switch c := s.b[s.i]; {
	case c == '{':
		s.i++
		base := len(d.stack)
		s.skipSpace()
		if s.i < len(s.b) && s.b[s.i] == '}' {
			s.i++
			return d.close(kObject, base), nil
		}
		for {
			s.skipSpace()
			k, err := s.str(&d.buf)
			if err != nil {
				return node{}, err
			}
			key := d.t.intern(k)
			if err := s.expect(':'); err != nil {
				return node{}, err
			}
			v, err := d.value(depth + 1)
			if err != nil {
				return node{}, err
			}
			v.key = key
			d.stack = append(d.stack, v)
			more, err := s.next('}')
			if err != nil {
				return node{}, err
			}
			if !more {
				return d.close(kObject, base), nil
			}
		}
	case c == '[':
		s.i++
		base := len(d.stack)
		s.skipSpace()
		if s.i < len(s.b) && s.b[s.i] == ']' {
			s.i++
			return d.close(kArray, base), nil
		}
		for {
			v, err := d.value(depth + 1)
			if err != nil {
				return node{}, err
			}
			d.stack = append(d.stack, v)
			more, err := s.next(']')
			if err != nil {
				return node{}, err
			}
			if !more {
				return d.close(kArray, base), nil
			}
		}
	case c == '"':
		b, err := s.str(&d.buf)
		if err != nil {
			return node{}, err
		}
		return d.text(b), nil
	case c == 't' || c == 'f' || c == 'n':
		for _, lit := range [...]struct {
			s string
			k kind
		}{{"true", kTrue}, {"false", kFalse}, {"null", kNull}} {
			if len(s.b)-s.i >= len(lit.s) && string(s.b[s.i:s.i+len(lit.s)]) == lit.s {
				s.i += len(lit.s)
				return node{kind: lit.k}, nil
			}
		}
		return node{}, s.errorf("bad literal")
	default:
		from := s.i
		for s.i < len(s.b) && (s.b[s.i] >= '0' && s.b[s.i] <= '9' || s.b[s.i] == '-' || s.b[s.i] == '+' || s.b[s.i] == '.' || s.b[s.i] == 'e' || s.b[s.i] == 'E') {
			s.i++
		}
		f, err := strconv.ParseFloat(unsafeString(s.b[from:s.i]), 64)
		if err != nil || from == s.i {
			return node{}, s.errorf("bad number")
		}
		return node{kind: kNumber, x: math.Float64bits(f)}, nil
	}
}

// close ends an array or object whose children are stack[base:]: they move
// to the table, consecutive. An object of the 18 locales' texts is a kText.
func (d *decoder) close(k kind, base int) node {
	kids := d.stack[base:]
	t := d.t
	if k == kObject && len(kids) == catalog.NumLocales {
		k = kText
		for i, c := range kids {
			if c.kind != kString || c.key != t.locale[i] {
				k = kObject
				break
			}
		}
	}
	n := node{kind: k, a: uint32(len(t.nodes)), n: uint32(len(kids))}
	t.nodes = append(t.nodes, kids...)
	d.stack = d.stack[:base]
	return n
}

// text is a string's node, its bytes (and, for text not all ASCII, its folded
// form) kept in the table.
func (d *decoder) text(b []byte) node {
	t := d.t
	n := node{kind: kString, a: uint32(len(t.text)), n: uint32(len(b)), ascii: isASCII(unsafeString(b))}
	t.text = append(t.text, b...)
	if !n.ascii {
		f := Fold(unsafeString(b))
		if f == unsafeString(b) {
			n.x = uint64(n.a)<<32 | uint64(n.n)
		} else {
			n.x = uint64(len(t.text))<<32 | uint64(len(f))
			t.text = append(t.text, f...)
		}
	}
	return n
}

// scanner reads JSON text.
type scanner struct {
	b []byte
	i int
}

func (s *scanner) errorf(format string, args ...any) error {
	return fmt.Errorf("%w: %s at byte %d", ErrSyntax, fmt.Sprintf(format, args...), s.i)
}

func (s *scanner) skipSpace() {
	for s.i < len(s.b) && (s.b[s.i] == ' ' || s.b[s.i] == '\n' || s.b[s.i] == '\t' || s.b[s.i] == '\r') {
		s.i++
	}
}

func (s *scanner) expect(c byte) error {
	s.skipSpace()
	if s.i == len(s.b) || s.b[s.i] != c {
		return s.errorf("want %q", c)
	}
	s.i++
	return nil
}

// next reads ',' (more to come: true) or the closing byte (false).
func (s *scanner) next(closing byte) (bool, error) {
	s.skipSpace()
	if s.i < len(s.b) {
		switch s.b[s.i] {
		case ',':
			s.i++
			return true, nil
		case closing:
			s.i++
			return false, nil
		}
	}
	return false, s.errorf("want ',' or %q", closing)
}

// str reads a string, returning its bytes unescaped: a slice of the input
// where it has no escapes, else of *buf (valid until the next call).
func (s *scanner) str(buf *[]byte) ([]byte, error) {
	if s.i == len(s.b) || s.b[s.i] != '"' {
		return nil, s.errorf("want a string")
	}
	s.i++
	from := s.i
	for s.i < len(s.b) {
		switch c := s.b[s.i]; {
		case c == '"':
			s.i++
			return s.b[from : s.i-1], nil
		case c == '\\':
			return s.escaped(from, buf)
		case c < 0x20:
			return nil, s.errorf("control character in a string")
		}
		s.i++
	}
	return nil, s.errorf("unterminated string")
}

// escaped reads the rest of a string from s.i, its first escape, into buf.
func (s *scanner) escaped(from int, buf *[]byte) ([]byte, error) {
	b := append((*buf)[:0], s.b[from:s.i]...)
	for s.i < len(s.b) {
		c := s.b[s.i]
		switch {
		case c == '"':
			s.i++
			*buf = b
			return b, nil
		case c < 0x20:
			return nil, s.errorf("control character in a string")
		case c != '\\':
			b = append(b, c)
			s.i++
			continue
		}
		if s.i+1 >= len(s.b) {
			break
		}
		e := s.b[s.i+1]
		s.i += 2
		switch e {
		case '"', '\\', '/':
			b = append(b, e)
		case 'b':
			b = append(b, '\b')
		case 'f':
			b = append(b, '\f')
		case 'n':
			b = append(b, '\n')
		case 'r':
			b = append(b, '\r')
		case 't':
			b = append(b, '\t')
		case 'u':
			r, ok := s.hex4()
			if !ok {
				return nil, s.errorf("bad \\u escape")
			}
			if utf16.IsSurrogate(r) {
				r2 := rune(-1)
				if s.i+1 < len(s.b) && s.b[s.i] == '\\' && s.b[s.i+1] == 'u' {
					s.i += 2
					if r2, ok = s.hex4(); !ok {
						return nil, s.errorf("bad \\u escape")
					}
				}
				r = utf16.DecodeRune(r, r2)
			}
			b = utf8.AppendRune(b, r)
		default:
			return nil, s.errorf("bad escape")
		}
	}
	return nil, s.errorf("unterminated string")
}

func (s *scanner) hex4() (rune, bool) {
	if len(s.b)-s.i < 4 {
		return 0, false
	}
	var r rune
	for _, c := range s.b[s.i : s.i+4] {
		var v byte
		switch {
		case '0' <= c && c <= '9':
			v = c - '0'
		case 'a' <= c && c <= 'f':
			v = c - 'a' + 10
		case 'A' <= c && c <= 'F':
			v = c - 'A' + 10
		default:
			return 0, false
		}
		r = r<<4 | rune(v)
	}
	s.i += 4
	return r, true
}

// skip passes over one value, depth levels in.
func (s *scanner) skip(depth int) error {
	if depth > MaxDepth {
		return s.errorf("nested more than %d deep", MaxDepth)
	}
	s.skipSpace()
	if s.i == len(s.b) {
		return s.errorf("unexpected end")
	}
	switch c := s.b[s.i]; c {
	case '{', '[':
		closing := byte('}')
		if c == '[' {
			closing = ']'
		}
		s.i++
		if s.skipSpace(); s.i < len(s.b) && s.b[s.i] == closing {
			s.i++
			return nil
		}
		for {
			if c == '{' {
				s.skipSpace()
				var buf []byte
				if _, err := s.str(&buf); err != nil {
					return err
				}
				if err := s.expect(':'); err != nil {
					return err
				}
			}
			if err := s.skip(depth + 1); err != nil {
				return err
			}
			more, err := s.next(closing)
			if err != nil {
				return err
			}
			if !more {
				return nil
			}
		}
	case '"':
		var buf []byte
		_, err := s.str(&buf)
		return err
	}
	from := s.i
	for s.i < len(s.b) && s.b[s.i] != ',' && s.b[s.i] != '}' && s.b[s.i] != ']' && s.b[s.i] != ' ' && s.b[s.i] != '\n' && s.b[s.i] != '\t' && s.b[s.i] != '\r' {
		s.i++
	}
	if from == s.i {
		return s.errorf("want a value")
	}
	return nil
}

// Split finds the items of a list body, {"status":200,"data":[…]}: item i's
// JSON is body[spans[2i]:spans[2i+1]].
func Split(body []byte) ([]uint32, error) {
	if len(body) > math.MaxUint32 {
		return nil, fmt.Errorf("%w: over 4 GiB", ErrSyntax)
	}
	s := scanner{b: body}
	if err := s.expect('{'); err != nil {
		return nil, err
	}
	var spans []uint32
	found := false
	for more := true; more; {
		s.skipSpace()
		var buf []byte
		k, err := s.str(&buf)
		if err != nil {
			return nil, err
		}
		if err := s.expect(':'); err != nil {
			return nil, err
		}
		if string(k) != "data" || found {
			if err := s.skip(1); err != nil {
				return nil, err
			}
		} else {
			found = true
			if err := s.expect('['); err != nil {
				return nil, err
			}
			if s.skipSpace(); s.i < len(s.b) && s.b[s.i] == ']' {
				s.i++
			} else {
				for more := true; more; {
					s.skipSpace()
					from := s.i
					if err := s.skip(2); err != nil {
						return nil, err
					}
					spans = append(spans, uint32(from), uint32(s.i))
					if more, err = s.next(']'); err != nil {
						return nil, err
					}
				}
			}
		}
		if more, err = s.next('}'); err != nil {
			return nil, err
		}
	}
	if s.skipSpace(); s.i != len(body) || !found {
		return nil, s.errorf("not a list body")
	}
	if spans == nil {
		spans = []uint32{}
	}
	return spans, nil
}
