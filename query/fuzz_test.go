package query_test

import (
	"errors"
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"

	"github.com/refdata/refdata/catalog"
	"github.com/refdata/refdata/query"
)

// FuzzParse: whatever q is, Parse either refuses it with an *Error that
// points inside it, or reads it to a query whose canonical form reads back to
// itself, selects the same items of a table, and passes or fails a check the
// same way. Nothing panics. The seeds run in every `go test`; `make fuzz`
// explores further.
func FuzzParse(f *testing.F) {
	for _, s := range []string{
		"vandal", `"Prime 2.0" OR reaver -odin`, "chromas.displayName:red", "shopData.cost>=2000",
		"levels.uuid=2A6A4C9B-4A3B-98BD-9A0A-6BB4D25DBEE6", "name:Phantom -contentTierUuid=null",
		"start>=2021-01-12T00:00:00Z", `x:"a \"b\" \\ c"`, "a OR b OR c d", "cost=>5", `"open`,
		"-", "OR", "a OR", "(a)", "x:", ":x", "a..b:1", "σίσυφος", "tier=\"null\"", "\t a\n", "x=-1e3",
	} {
		f.Add(s)
	}
	tb := sampleTable(f)
	paths, err := query.CategoryPaths(catalog.WeaponSkins, nil)
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, s string) {
		q, err := query.Parse(s)
		if err != nil {
			var qe *query.Error
			if !errors.As(err, &qe) || qe.Param != "q" {
				t.Fatalf("Parse(%q): %v, not an *Error", s, err)
			}
			if n := utf8.RuneCountInString(s); qe.Term > 0 && (qe.Pos < 1 || qe.Pos > n) {
				t.Fatalf("Parse(%q): position %d outside its %d characters", s, qe.Pos, n)
			}
			return
		}
		if q == nil {
			if strings.TrimFunc(s, unicode.IsSpace) != "" {
				t.Fatalf("Parse(%q) is no query", s)
			}
			return
		}
		canonical := q.String()
		back, err := query.Parse(canonical)
		if err != nil {
			t.Fatalf("canonical %q of %q: %v", canonical, s, err)
		}
		if back.String() != canonical {
			t.Fatalf("canonical %q of %q reads back as %q", canonical, s, back.String())
		}
		for _, loc := range []int{catalog.DefaultLocale, 8, catalog.AllLocales} {
			a, b := q.Select(tb, loc), back.Select(tb, loc)
			if len(a) != len(b) {
				t.Fatalf("%q selects %v, its canonical %q %v", s, a, canonical, b)
			}
		}
		if e1, e2 := q.Check(paths), back.Check(paths); (e1 == nil) != (e2 == nil) {
			t.Fatalf("%q checks %v, its canonical %q %v", s, e1, canonical, e2)
		}
	})
}

// FuzzBody: whatever bytes a list or item body is, Decode, Split and
// Project return an error or a result, never a panic; a body both Decode and
// Split read has as many items in each.
func FuzzBody(f *testing.F) {
	f.Add([]byte(`{"status":200,"data":[{"uuid":"a","displayName":"x","n":[1,{"b":null}]}]}`))
	f.Add([]byte(`{"status":200,"data":[]}`))
	f.Add([]byte(`{"data":["\ud83d\ude00\u00e9\"",true,false,null,-1.5e3],"status":200}`))
	f.Add(listBody(f, map[string]any{"displayName": text("x", nil)}))
	fields, err := query.ParseFields("uuid,n.b,displayName")
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		tb, errT := query.Decode(body)
		spans, errS := query.Split(body)
		if errT == nil && errS == nil && tb.Len() != len(spans)/2 {
			t.Fatalf("Decode reads %d items, Split %d", tb.Len(), len(spans)/2)
		}
		_, _ = fields.Project(nil, body)
		if errS == nil {
			for i := 0; i < len(spans); i += 2 {
				_, _ = fields.Project(nil, body[spans[i]:spans[i+1]])
			}
		}
	})
}
