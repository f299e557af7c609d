package query_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/refdata/refdata/catalog"
	"github.com/refdata/refdata/query"
)

// TestParseCanonical: each query parses, and its canonical form is the one
// written here; the canonical form parses back to itself.
func TestParseCanonical(t *testing.T) {
	t.Parallel()
	cases := []struct{ q, canonical string }{
		{"vandal", "vandal"},
		{"  vandal   prime ", "vandal prime"},
		{`"Prime 2.0"`, `"Prime 2.0"`},
		{`"prime"`, "prime"},
		{"chromas.displayName:red", "chromas.displayName:red"},
		{`chromas.displayName:"red"`, "chromas.displayName:red"},
		{"a:b OR c:d e", "a:b OR c:d e"},
		{"a:b\tOR\nc:d", "a:b OR c:d"},
		{"-contentTierUuid=null", "-contentTierUuid=null"},
		{`contentTierUuid="null"`, `contentTierUuid="null"`},
		{"shopData.cost>=2000", "shopData.cost>=2000"},
		{"cost<-5", "cost<-5"},
		{"startTime>2021-01-12T00:00:00Z", "startTime>2021-01-12T00:00:00Z"},
		{`x:"say \"hi\""`, `x:"say \"hi\""`},
		{`x:"back\\slash"`, `x:back\slash`},
		{`"OR"`, `"OR"`},
		{`"null"`, "null"},
		{`name:"null"`, "name:null"},
		{"or", "or"},
		{`"-word"`, `"-word"`},
		{`"a:b"`, `"a:b"`},
		{`x:""`, `x:""`},
		{"name:Odin", "name:Odin"},
		{"Odin's", "Odin's"},
		{"wow!", "wow!"},
		{"x=a=b", "x=a=b"},
		{"ＲＥＤ", "ＲＥＤ"},
		{"", ""},
		{"   ", ""},
	}
	for _, tc := range cases {
		q, err := query.Parse(tc.q)
		if err != nil {
			t.Errorf("Parse(%q): %v", tc.q, err)
			continue
		}
		if got := q.String(); got != tc.canonical {
			t.Errorf("Parse(%q).String() = %q, want %q", tc.q, got, tc.canonical)
		}
		back, err := query.Parse(q.String())
		if err != nil || back.String() != q.String() {
			t.Errorf("canonical %q reads back as %q, %v", q.String(), back.String(), err)
		}
	}
}

// TestParseErrors: each bad query is an *Error naming the term by number, the
// character where the problem is, and why.
func TestParseErrors(t *testing.T) {
	t.Parallel()
	cases := []struct {
		q         string
		term, pos int
		reason    string
	}{
		{`"abc`, 1, 1, "unclosed quote"},
		{`vandal x:"abc`, 2, 10, "unclosed quote"},
		{"cost=>5", 1, 5, `bad operator "=>"`},
		{"a:b cost==5", 2, 9, `bad operator "=="`},
		{"cost!=5", 1, 5, `bad operator "!="`},
		{"cost:=5", 1, 5, `bad operator ":="`},
		{"cost>abc", 1, 1, "neither"},
		{"startTime<2021", 0, 0, ""}, // a number: fine
		{"cost>null", 1, 1, "neither"},
		{"cost:", 1, 5, "no value"},
		{":red", 1, 1, "starts with an operator"},
		{"a..b:1", 1, 1, "empty name"},
		{".a:1", 1, 1, "empty name"},
		{"- a", 1, 1, "negates"},
		{"OR a", 1, 1, "between two terms"},
		{"a OR", 2, 3, "nothing follows"},
		{"a OR OR b", 2, 6, "between two terms"},
		{`x:"a"b`, 1, 6, "quoted value ends"},
		{`ab"c`, 1, 3, "quote inside"},
		{"(a OR b) c", 1, 1, "parentheses"},
		{"name>3", 1, 1, "any locale"},
		{"a.b.c.d.e.f.g.h.i:1", 1, 1, "more than 8"},
		{strings.Repeat("a ", 17), 0, 0, "more than 16 terms"},
		{"é:1", 0, 0, ""}, // a word, not a path
	}
	for _, tc := range cases {
		_, err := query.Parse(tc.q)
		if tc.reason == "" {
			if err != nil {
				t.Errorf("Parse(%q): %v", tc.q, err)
			}
			continue
		}
		var qe *query.Error
		if !errors.As(err, &qe) {
			t.Errorf("Parse(%q) = %v, want an *Error", tc.q, err)
			continue
		}
		if qe.Term != tc.term || qe.Pos != tc.pos || !strings.Contains(qe.Reason, tc.reason) {
			t.Errorf("Parse(%q): term %d at %d, %q; want term %d at %d, %q", tc.q, qe.Term, qe.Pos, qe.Reason, tc.term, tc.pos, tc.reason)
		}
		if msg := qe.Error(); tc.term > 0 && !strings.Contains(msg, "at character") {
			t.Errorf("Parse(%q): message %q does not say where", tc.q, msg)
		}
	}
	if _, err := query.Parse("\xff"); err == nil {
		t.Error("Parse of invalid UTF-8 succeeded")
	}
}

// TestCheckPaths: a query's paths are checked against the catalog's: the
// contract's fields through objects and arrays, the fields the upstream
// added (and anything below them), never an object where a value is needed.
func TestCheckPaths(t *testing.T) {
	t.Parallel()
	unknown := []catalog.Unknown{
		{Category: catalog.Weapons, Field: "skins[].chromas[].hint"},
		{Category: catalog.Weapons, Field: "art"},
	}
	cases := []struct {
		c      catalog.Category
		q      string
		reason string // "" passes
	}{
		{catalog.Weapons, "shopData.cost>=2000", ""},
		{catalog.Weapons, "skins.chromas.displayName:red", ""},
		{catalog.Weapons, "skins.chromas.hint:x", ""},
		{catalog.Weapons, "art.caption.deep:x", ""},
		{catalog.Weapons, "shopData.gridPosition.row=1", ""},
		{catalog.Weapons, "weaponStats.damageRanges.headDamage>100", ""},
		{catalog.Weapons, "vandal", ""},
		{catalog.Weapons, "name:vandal", ""},
		{catalog.WeaponSkins, "chromas.hint:x", ""},
		{catalog.WeaponSkinChromas, "hint:x", ""},
		{catalog.WeaponSkins, "levels.uuid=2a6a4c9b-4a3b-98bd-9a0a-6bb4d25dbee6", ""},
		{catalog.Weapons, "shopData.kost>1", `no field "kost" in shopData; its fields are assetPath, canBeTrashed, category`},
		{catalog.Weapons, "shopData:x", "shopData is an object: name one of its fields (assetPath, canBeTrashed"},
		{catalog.Weapons, "-shopData=null", ""},
		{catalog.Weapons, "displayname:x", `no field "displayname" in a weapon`},
		{catalog.WeaponSkins, "hint:x", `no field "hint"`},
		{catalog.CompetitiveTiers, "gold", "which a competitive tier set does not have"},
		{catalog.CompetitiveTiers, "tiers.tierName:gold", ""},
	}
	for _, tc := range cases {
		p, err := query.CategoryPaths(tc.c, unknown)
		if err != nil {
			t.Fatal(err)
		}
		q, err := query.Parse(tc.q)
		if err != nil {
			t.Fatalf("Parse(%q): %v", tc.q, err)
		}
		err = q.Check(p)
		switch {
		case tc.reason == "" && err != nil:
			t.Errorf("%s: Check(%q): %v", tc.c.Name(), tc.q, err)
		case tc.reason != "" && (err == nil || !strings.Contains(err.Error(), tc.reason)):
			t.Errorf("%s: Check(%q) = %v, want %q", tc.c.Name(), tc.q, err, tc.reason)
		}
	}
}
