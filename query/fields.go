package query

import (
	"fmt"
	"slices"
	"strings"
	"unicode/utf8"
)

// MaxFields bounds the paths of one fields parameter.
const MaxFields = 32

// Fields is a parsed fields parameter: the paths to keep in every item.
type Fields struct {
	paths [][]string // sorted, none below another
	tree  fieldTree
}

// fieldTree: a field kept whole (nil), or the fields kept of its value.
type fieldTree map[string]fieldTree

// ParseFields reads fields=a,b.c: paths separated by commas (spaces around
// them ignored). A blank parameter is none (nil).
func ParseFields(s string) (*Fields, error) {
	if !utf8.ValidString(s) {
		return nil, &Error{Param: "fields", Reason: "is not UTF-8 text; percent-encode its characters as UTF-8"}
	}
	if strings.TrimSpace(s) == "" {
		return nil, nil
	}
	f := &Fields{}
	pos := 1
	for n, part := range strings.Split(s, ",") {
		at := pos + utf8.RuneCountInString(part) - utf8.RuneCountInString(strings.TrimLeft(part, " "))
		pos += utf8.RuneCountInString(part) + 1
		text := strings.TrimSpace(part)
		fail := func(format string, args ...any) error {
			return &Error{Param: "fields", Term: n + 1, Pos: at, Text: text, Reason: fmt.Sprintf(format, args...)}
		}
		if n == MaxFields {
			return nil, &Error{Param: "fields", Reason: fmt.Sprintf("names more than %d paths; ask for fewer", MaxFields)}
		}
		if text == "" {
			return nil, fail("no path between commas; write paths joined by commas (uuid,displayName,chromas.uuid)")
		}
		path := strings.Split(text, ".")
		for _, name := range path {
			if name == "" {
				return nil, fail("path %q has an empty name; write names joined by single dots (shopData.cost)", text)
			}
			for _, r := range name {
				if !isNameRune(r) {
					return nil, fail("%q is not a path: a path is names of letters, digits and '_' joined by dots", text)
				}
			}
		}
		if len(path) > MaxPathSegments {
			return nil, fail("path %q has more than %d names", text, MaxPathSegments)
		}
		f.paths = append(f.paths, path)
	}
	// Sorted, each once, none below another kept whole: the canonical form.
	slices.SortFunc(f.paths, func(a, b []string) int { return strings.Compare(strings.Join(a, "."), strings.Join(b, ".")) })
	f.paths = slices.CompactFunc(f.paths, slices.Equal)
	f.paths = slices.DeleteFunc(f.paths, func(p []string) bool {
		for _, q := range f.paths {
			if len(q) < len(p) && slices.Equal(q, p[:len(q)]) {
				return true
			}
		}
		return false
	})
	f.tree = fieldTree{}
	for _, p := range f.paths {
		t := f.tree
		for i, name := range p {
			if i == len(p)-1 {
				t[name] = nil
				break
			}
			if t[name] == nil {
				t[name] = fieldTree{}
			}
			t = t[name]
		}
	}
	return f, nil
}

// Check makes sure every path is one of p's; a path may name an object (kept whole).
func (f *Fields) Check(p *Paths, written string) error {
	if f == nil {
		return nil
	}
	for _, path := range f.paths {
		if why := p.check(path, false); why != "" {
			text := strings.Join(path, ".")
			n, at := locate(written, text)
			return &Error{Param: "fields", Term: n, Pos: at, Text: text, Reason: "unknown path: " + why}
		}
	}
	return nil
}

// locate finds which field of written is text, and where it starts.
func locate(written, text string) (n, at int) {
	pos := 1
	for i, part := range strings.Split(written, ",") {
		if strings.TrimSpace(part) == text {
			return i + 1, pos + utf8.RuneCountInString(part) - utf8.RuneCountInString(strings.TrimLeft(part, " "))
		}
		pos += utf8.RuneCountInString(part) + 1
	}
	return 1, 1
}

// String is the canonical form: the paths sorted, each once, none below
// another.
func (f *Fields) String() string {
	if f == nil {
		return ""
	}
	names := make([]string, len(f.paths))
	for i, p := range f.paths {
		names[i] = strings.Join(p, ".")
	}
	return strings.Join(names, ",")
}

// Paths lists the canonical paths.
func (f *Fields) Paths() []string {
	if f == nil {
		return nil
	}
	return strings.Split(f.String(), ",")
}

// Project appends item, a JSON object, to dst with only f's fields: each
// member kept whole, or, where f names fields below it, its object (or each
// object of its array) projected in turn. A value with no fields to keep (a
// null, a text) is kept whole. Members keep their order and bytes.
func (f *Fields) Project(dst, item []byte) ([]byte, error) {
	s := scanner{b: item}
	dst, err := project(dst, &s, f.tree, 0)
	if err == nil {
		if s.skipSpace(); s.i != len(item) {
			err = s.errorf("text after the item")
		}
	}
	return dst, err
}

// project appends the value at s, with only the fields of t.
func project(dst []byte, s *scanner, t fieldTree, depth int) ([]byte, error) {
	if depth > MaxDepth {
		return nil, s.errorf("nested more than %d deep", MaxDepth)
	}
	s.skipSpace()
	from := s.i
	if s.i == len(s.b) || s.b[s.i] != '{' && s.b[s.i] != '[' {
		err := s.skip(depth)
		return append(dst, s.b[from:s.i]...), err
	}
	if s.b[s.i] == '[' {
		s.i++
		dst = append(dst, '[')
		if s.skipSpace(); s.i < len(s.b) && s.b[s.i] == ']' {
			s.i++
			return append(dst, ']'), nil
		}
		for first := true; ; first = false {
			if !first {
				dst = append(dst, ',')
			}
			var err error
			if dst, err = project(dst, s, t, depth+1); err != nil {
				return nil, err
			}
			more, err := s.next(']')
			if err != nil {
				return nil, err
			}
			if !more {
				return append(dst, ']'), nil
			}
		}
	}
	s.i++
	dst = append(dst, '{')
	kept := 0
	if s.skipSpace(); s.i < len(s.b) && s.b[s.i] == '}' {
		s.i++
		return append(dst, '}'), nil
	}
	var buf []byte
	for {
		s.skipSpace()
		keyAt := s.i
		k, err := s.str(&buf)
		if err != nil {
			return nil, err
		}
		keyEnd := s.i
		if err := s.expect(':'); err != nil {
			return nil, err
		}
		sub, want := t[string(k)]
		if want {
			if kept > 0 {
				dst = append(dst, ',')
			}
			kept++
			dst = append(append(dst, s.b[keyAt:keyEnd]...), ':')
			if sub == nil {
				s.skipSpace()
				from := s.i
				if err := s.skip(depth + 1); err != nil {
					return nil, err
				}
				dst = append(dst, s.b[from:s.i]...)
			} else if dst, err = project(dst, s, sub, depth+1); err != nil {
				return nil, err
			}
		} else if err := s.skip(depth + 1); err != nil {
			return nil, err
		}
		more, err := s.next('}')
		if err != nil {
			return nil, err
		}
		if !more {
			return append(dst, '}'), nil
		}
	}
}
