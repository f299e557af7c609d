package query

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/refdata/refdata/catalog"
)

// Limits on one query; with a list's size they bound the work of answering it
// (each term is at most one pass over the list's decoded values).
const (
	MaxTerms        = 16 // terms in one q
	MaxPathSegments = 8  // names in one path
)

// Op is a term's operator.
type Op uint8

const (
	Contains Op = iota // path:value — text contains it (case folded); numbers and booleans equal it
	Equals             // path=value — exactly; a UUID in any letter case
	Greater            // path>value — numbers and RFC 3339 date-times
	AtLeast            // path>=value
	Less               // path<value
	AtMost             // path<=value
)

var opText = [...]string{Contains: ":", Equals: "=", Greater: ">", AtLeast: ">=", Less: "<", AtMost: "<="}

func (o Op) String() string { return opText[o] }

// ops reads an operator as written.
var ops = map[string]Op{":": Contains, "=": Equals, ">": Greater, ">=": AtLeast, "<": Less, "<=": AtMost}

// Query is a parsed q: every group must hold, and a group holds when any of
// its terms does (OR binds tighter than the space between terms).
type Query struct {
	groups    [][]*Term
	terms     int
	canonical string // String, once made
}

// Term is one condition.
type Term struct {
	Not bool
	// Path is the dotted path the term tests; nil for a bare word, which
	// tests displayName in the request's language.
	Path []string
	// AnyLocale: the path is "name", displayName in any of the 18 locales.
	AnyLocale bool
	Op        Op
	Value     string
	Quoted    bool

	N    int    // the term's number in q, from 1
	Pos  int    // where it starts in q, in characters from 1
	Text string // as written

	// What the value is, read once.
	isNull   bool
	isBool   bool
	boolVal  bool
	isNum    bool
	num      float64
	isTime   bool
	when     time.Time
	isUUID   bool
	folded   string // the value case folded (Contains)
	foldedOK bool   // folded is all ASCII
}

// Error is a q or fields that cannot be answered: which term, where, why.
type Error struct {
	Param  string // "q" or "fields"
	Term   int    // the term's (or field's) number from 1; 0: the parameter as a whole
	Pos    int    // character from 1 where the problem is
	Text   string // the term as written
	Reason string
}

func (e *Error) Error() string {
	if e.Term == 0 {
		return fmt.Sprintf("%s: %s", e.Param, e.Reason)
	}
	what := "term"
	if e.Param == "fields" {
		what = "field"
	}
	return fmt.Sprintf("%s: %s %d (%s, at character %d): %s", e.Param, what, e.Term, strconv.Quote(e.Text), e.Pos, e.Reason)
}

// Terms is the number of terms.
func (q *Query) Terms() int { return q.terms }

// Parse reads q's grammar (openapi.yaml, parameter Q):
//
//	query  = term { space [ "OR" space ] term }
//	term   = [ "-" ] ( path op value | value )
//	path   = name { "." name }          name: letters, digits, '_'
//	op     = ":" | "=" | ">" | ">=" | "<" | "<="
//	value  = word | '"' { char | '\"' | '\\' } '"'
//
// A blank q is no query (nil). Paths are not checked here: Check does that
// against a catalog's.
func Parse(q string) (*Query, error) {
	if !utf8.ValidString(q) {
		return nil, &Error{Param: "q", Reason: "is not UTF-8 text; percent-encode its characters as UTF-8"}
	}
	l := lexer{r: []rune(q)}
	out := &Query{}
	orAt := 0 // where a pending OR is, from 1; 0: none
	for {
		l.skipSpace()
		if l.i == len(l.r) {
			break
		}
		if l.isOR() {
			if len(out.groups) == 0 || orAt != 0 {
				return nil, &Error{Param: "q", Term: out.terms + 1, Pos: l.i + 1, Text: "OR", Reason: "OR stands between two terms (a OR b); quote it to look for the word: \"OR\""}
			}
			orAt = l.i + 1
			l.i += 2
			continue
		}
		if out.terms == MaxTerms {
			return nil, &Error{Param: "q", Reason: fmt.Sprintf("has more than %d terms; ask for fewer at once", MaxTerms)}
		}
		t, err := l.term(out.terms + 1)
		if err != nil {
			return nil, err
		}
		out.terms++
		if orAt != 0 {
			g := &out.groups[len(out.groups)-1]
			*g = append(*g, t)
			orAt = 0
		} else {
			out.groups = append(out.groups, []*Term{t})
		}
	}
	if orAt != 0 {
		return nil, &Error{Param: "q", Term: out.terms + 1, Pos: orAt, Text: "OR", Reason: "OR stands between two terms (a OR b), and nothing follows it"}
	}
	if out.terms == 0 {
		return nil, nil
	}
	return out, nil
}

type lexer struct {
	r []rune
	i int
}

func (l *lexer) skipSpace() {
	for l.i < len(l.r) && unicode.IsSpace(l.r[l.i]) {
		l.i++
	}
}

// ends says whether a term may end at j: at the end or a space.
func (l *lexer) ends(j int) bool { return j == len(l.r) || unicode.IsSpace(l.r[j]) }

// isOR: the word OR, alone.
func (l *lexer) isOR() bool {
	return l.i+1 < len(l.r) && l.r[l.i] == 'O' && l.r[l.i+1] == 'R' && l.ends(l.i+2)
}

func isNameRune(r rune) bool {
	return r == '_' || r == '.' || '0' <= r && r <= '9' || 'a' <= r && r <= 'z' || 'A' <= r && r <= 'Z'
}

// isOpRune: what an operator is written with, and the runes a mistyped one
// (!=, =~, ==) adds.
func isOpRune(r rune) bool {
	return r == ':' || r == '=' || r == '<' || r == '>' || r == '!' || r == '~'
}

func (l *lexer) term(n int) (*Term, error) {
	start := l.i
	t := &Term{N: n, Pos: start + 1}
	fail := func(at int, format string, args ...any) error {
		end := l.i
		for end < len(l.r) && !unicode.IsSpace(l.r[end]) {
			end++
		}
		return &Error{Param: "q", Term: n, Pos: at + 1, Text: string(l.r[start:max(end, at+1, start+1)]), Reason: fmt.Sprintf(format, args...)}
	}
	if l.r[l.i] == '-' {
		t.Not = true
		l.i++
		if l.ends(l.i) {
			return nil, fail(start, "a '-' negates the term right after it, with no space between (-word, -path:value)")
		}
	}
	// A path is followed by an operator; anything else is a word.
	j := l.i
	for j < len(l.r) && isNameRune(l.r[j]) {
		j++
	}
	if j < len(l.r) && isOpRune(l.r[j]) {
		k := j
		for k < len(l.r) && isOpRune(l.r[k]) {
			k++
		}
		written := string(l.r[j:k])
		if strings.ContainsAny(written, ":=<>") {
			if j == l.i {
				return nil, fail(j, "a term starts with an operator; write path%svalue, or quote the value", written)
			}
			op, ok := ops[written]
			if !ok {
				return nil, fail(j, "bad operator %q; use one of : = > >= < <=", written)
			}
			path := string(l.r[l.i:j])
			t.Path = strings.Split(path, ".")
			for _, seg := range t.Path {
				if seg == "" {
					return nil, fail(l.i, "path %q has an empty name; write names joined by single dots (shopData.cost)", path)
				}
			}
			if len(t.Path) > MaxPathSegments {
				return nil, fail(l.i, "path %q has more than %d names", path, MaxPathSegments)
			}
			t.Op = op
			l.i = k
			if err := l.value(t, fail); err != nil {
				return nil, err
			}
			t.Text = string(l.r[start:l.i])
			return t, t.compile(fail, start)
		}
	}
	if err := l.value(t, fail); err != nil {
		return nil, err
	}
	t.Text = string(l.r[start:l.i])
	return t, t.compile(fail, start)
}

// value reads a term's value: a quoted string or a word up to the next space.
func (l *lexer) value(t *Term, fail func(int, string, ...any) error) error {
	if l.i < len(l.r) && l.r[l.i] == '"' {
		open := l.i
		var b strings.Builder
		for l.i++; ; l.i++ {
			if l.i == len(l.r) {
				return fail(open, "unclosed quote; end the value with \" (write \\\" for a quote inside it)")
			}
			switch r := l.r[l.i]; r {
			case '\\':
				if l.i+1 < len(l.r) {
					l.i++
				}
				b.WriteRune(l.r[l.i])
				continue
			case '"':
			default:
				b.WriteRune(r)
				continue
			}
			break
		}
		l.i++
		if !l.ends(l.i) {
			return fail(l.i, "a quoted value ends its term; put a space after the closing quote")
		}
		t.Value, t.Quoted = b.String(), true
		return nil
	}
	from := l.i
	for !l.ends(l.i) {
		switch l.r[l.i] {
		case '"':
			return fail(l.i, "a quote inside a word; quote the whole value (\"…\")")
		case '(', ')':
			return fail(l.i, "parentheses do not group terms (OR binds tighter than the space: a b OR c is a and (b or c)); quote a value that holds them")
		}
		l.i++
	}
	if l.i == from {
		return fail(from-1, "no value after the operator; give one, or \"\" for the empty text")
	}
	t.Value = string(l.r[from:l.i])
	return nil
}

// nullTest says whether the term tests for a null value: null, not quoted,
// after a path other than name.
func (t *Term) nullTest() bool {
	return !t.Quoted && t.Path != nil && !t.AnyLocale && strings.EqualFold(t.Value, "null")
}

// compile reads the value once for the comparisons the term makes.
func (t *Term) compile(fail func(int, string, ...any) error, start int) error {
	if len(t.Path) == 1 && t.Path[0] == "name" {
		t.AnyLocale = true
		if t.Op != Contains && t.Op != Equals {
			return fail(start, "name matches displayName in any locale with : or =, not %s", t.Op)
		}
	}
	if f, err := strconv.ParseFloat(t.Value, 64); err == nil && !math.IsInf(f, 0) && !math.IsNaN(f) {
		t.isNum, t.num = true, f
	}
	switch t.Op {
	case Contains, Equals:
		// Unquoted, null tests for null; a word (displayName) is text.
		t.isNull = t.nullTest()
		if strings.EqualFold(t.Value, "true") || strings.EqualFold(t.Value, "false") {
			t.isBool, t.boolVal = true, strings.EqualFold(t.Value, "true")
		}
		_, t.isUUID = catalog.ParseUUID(t.Value)
		t.folded = Fold(t.Value)
		t.foldedOK = isASCII(t.folded)
	default:
		if !t.isNum {
			w, err := time.Parse(time.RFC3339, t.Value)
			if err != nil {
				return fail(start, "%s compares numbers and RFC 3339 date-times (2021-01-12T00:00:00Z); %q is neither", t.Op, t.Value)
			}
			t.isTime, t.when = true, w
		}
	}
	return nil
}

// String is the query's canonical form: the same terms in the same order,
// single spaces, " OR " between alternatives, each value bare where it reads
// back the same and quoted otherwise. Two spellings of one query have one
// canonical form, and it parses to the same query.
func (q *Query) String() string {
	if q == nil {
		return ""
	}
	if q.canonical != "" {
		return q.canonical
	}
	var b strings.Builder
	for i, g := range q.groups {
		if i > 0 {
			b.WriteByte(' ')
		}
		for j, t := range g {
			if j > 0 {
				b.WriteString(" OR ")
			}
			b.WriteString(t.String())
		}
	}
	q.canonical = b.String()
	return q.canonical
}

// String is the term's canonical form (Query.String).
func (t *Term) String() string {
	var b strings.Builder
	if t.Not {
		b.WriteByte('-')
	}
	if t.Path != nil {
		b.WriteString(strings.Join(t.Path, "."))
		b.WriteString(t.Op.String())
	}
	if bare := b.String() + t.Value; t.bareReadsBack(bare) {
		return bare
	}
	b.WriteString(quote(t.Value))
	return b.String()
}

// bareReadsBack: the term written with its value bare parses to the same term.
func (t *Term) bareReadsBack(s string) bool {
	if t.Value == "" || t.Quoted && (t.Op == Contains || t.Op == Equals) && t.Path != nil && !t.AnyLocale && strings.EqualFold(t.Value, "null") {
		return false // "null", quoted, is text; bare, a test for null
	}
	l := lexer{r: []rune(s)}
	if l.isOR() {
		return false
	}
	u, err := l.term(t.N)
	return err == nil && l.i == len(l.r) && u.Not == t.Not && u.Value == t.Value && u.Op == t.Op &&
		strings.Join(u.Path, ".") == strings.Join(t.Path, ".") && (u.Path == nil) == (t.Path == nil)
}

func quote(s string) string {
	var b strings.Builder
	b.WriteByte('"')
	for _, r := range s {
		if r == '"' || r == '\\' {
			b.WriteByte('\\')
		}
		b.WriteRune(r)
	}
	b.WriteByte('"')
	return b.String()
}

// Require adds a condition every answer must meet in front of q's terms (a
// filter parameter of the route's own, such as isPlayableCharacter), so the
// canonical form names it. q may be nil.
func Require(q *Query, path string, value string) *Query {
	t := &Term{Path: strings.Split(path, "."), Op: Equals, Value: value, N: 0, Text: path + "=" + value}
	_ = t.compile(func(int, string, ...any) error { return nil }, 0)
	out := &Query{groups: [][]*Term{{t}}, terms: 1}
	if q != nil {
		out.groups = append(out.groups, q.groups...)
		out.terms += q.terms
	}
	return out
}
