package query_test

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/refdata/refdata/catalog"
	"github.com/refdata/refdata/query"
)

// text is a localized text as a language=all body has it: en-US's, with the
// locales given their own.
func text(en string, own map[string]string) map[string]string {
	m := map[string]string{}
	for _, l := range catalog.Locales {
		m[l] = en
		if s, ok := own[l]; ok {
			m[l] = s
		}
	}
	return m
}

// listBody is a list body of items, as JSON.
func listBody(t testing.TB, items ...any) []byte {
	t.Helper()
	b, err := json.Marshal(map[string]any{"status": 200, "data": items})
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// sampleTable: four items in every locale, with the shapes a query meets.
func sampleTable(t testing.TB) *query.Table {
	t.Helper()
	ja := catalog.Locales[8]
	body := listBody(t,
		map[string]any{
			"uuid": "AAAAAAAA-0000-0000-0000-000000000001", "displayName": text("Red Vandal", map[string]string{ja: "赤いヴァンダル"}),
			"cost": 2900, "hidden": false, "tier": nil, "start": "2021-01-12T00:00:00Z",
			"chromas": []any{map[string]any{"displayName": text("Base", nil), "uuid": "c1"}, map[string]any{"displayName": text("Crimson\nRed", nil), "uuid": "c2"}},
			"tags":    []any{"rifle", "auto"},
			"shop":    map[string]any{"cost": 2900, "grid": map[string]any{"row": 1}},
		},
		map[string]any{
			"uuid": "aaaaaaaa-0000-0000-0000-000000000002", "displayName": text("ΣΊΣΥΦΟΣ Phantom Nullifier", nil),
			"cost": 2000.5, "hidden": true, "tier": "t1", "start": "2022-06-01T10:00:00+02:00",
			"chromas": []any{}, "tags": []any{"Rifle"}, "shop": nil,
		},
		map[string]any{
			"uuid": "aaaaaaaa-0000-0000-0000-000000000003", "displayName": text("Straße Kelvin", map[string]string{ja: "ストラッセ"}),
			"cost": -5, "hidden": true, "tier": "null", "start": "not a time",
			"chromas": []any{map[string]any{"displayName": text("Blue", nil), "uuid": "c3"}},
			"shop":    map[string]any{"cost": 0, "grid": nil},
		},
		map[string]any{
			"uuid": "aaaaaaaa-0000-0000-0000-000000000004", "displayName": text("Odin", nil),
			"cost": 3200, "hidden": false, "tier": "t2", "start": "2020-04-06T16:00:00Z",
			"chromas": []any{map[string]any{"displayName": text("Odin", map[string]string{ja: "オーディン 赤"}), "uuid": "c4"}},
			"shop":    map[string]any{"cost": 3200, "grid": map[string]any{"row": 2}},
			"extra":   "ＷＩＤＥ text",
		},
	)
	tb, err := query.Decode(body)
	if err != nil {
		t.Fatal(err)
	}
	return tb
}

// TestSelect: which items each query selects (numbered from 1), in en-US,
// in ja-JP and with language=all.
func TestSelect(t *testing.T) {
	t.Parallel()
	tb := sampleTable(t)
	const en, ja, all = catalog.DefaultLocale, 8, catalog.AllLocales
	cases := []struct {
		q   string
		loc int
		EN  []int
	}{
		{"vandal", en, []int{1}},
		{"VANDAL", en, []int{1}},
		{"vandal", ja, nil},
		{"ヴァンダル", ja, []int{1}},
		{"ヴァンダル", all, []int{1}},
		{"name:ヴァンダル", en, []int{1}},
		{"name=Odin", ja, []int{4}},
		{"name=odin", en, nil},
		{"σίσυφος", en, []int{2}},
		{"ςίσυφοσ", en, []int{2}}, // final sigma folds with sigma
		{"strasse", en, nil},      // simple folding: ß is not ss
		{"STRASSE", en, nil},
		{"straße", en, []int{3}},
		{"\u212Aelvin", en, []int{3}}, // the Kelvin sign is K
		{"kelvin", en, []int{3}},
		{"wide", en, nil},
		{"extra:ｗｉｄｅ", en, []int{4}},
		{`"red vandal"`, en, []int{1}},
		{`""`, en, []int{1, 2, 3, 4}},
		{"chromas.displayName:red", en, []int{1}},
		{"chromas.displayName:赤", ja, []int{4}},
		{"chromas.displayName:赤", en, nil},
		{"chromas.displayName:赤", all, []int{4}},
		{"-chromas.displayName:red", en, []int{2, 3, 4}},
		{"chromas.uuid=c3", en, []int{3}},
		{"chromas.uuid:c", en, []int{1, 3, 4}},
		{"uuid=aaaaaaaa-0000-0000-0000-000000000001", en, []int{1}},
		{"uuid=AAAAAAAA-0000-0000-0000-000000000002", en, []int{2}},
		{"uuid:AAAAAAAA", en, []int{1, 2, 3, 4}},
		{"cost>=2900", en, []int{1, 4}},
		{"cost>2900", en, []int{4}},
		{"cost<0", en, []int{3}},
		{"cost<=-5", en, []int{3}},
		{"cost=2000.5", en, []int{2}},
		{"cost:2900", en, []int{1}},
		{"cost=2.9e3", en, []int{1}},
		{"cost:abc", en, nil},
		{"shop.cost=0", en, []int{3}},
		{"shop.grid.row=2", en, []int{4}},
		{"shop.grid.row>0", en, []int{1, 4}},
		{"-shop.grid.row>0", en, []int{2, 3}},
		{"shop=null", en, []int{2}},
		{"shop.grid=null", en, []int{3}},
		{"hidden=true", en, []int{2, 3}},
		{"hidden:FALSE", en, []int{1, 4}},
		{"hidden=yes", en, nil},
		{"tier=null", en, []int{1}},
		{`tier="null"`, en, []int{3}},
		{"tier:NULL", en, []int{1}},
		{"null", en, []int{2}},      // a word: text, not a test for null
		{"name:null", en, []int{2}}, // so is name's value
		{"Kelvin OR null", en, []int{2, 3}},
		{"-tier=null", en, []int{2, 3, 4}},
		{"tier:t", en, []int{2, 4}},
		{"tags=rifle", en, []int{1}},
		{"tags:rifle", en, []int{1, 2}},
		{"start>=2021-01-12T00:00:00Z", en, []int{1, 2}},
		{"start>2021-01-12T00:00:00Z", en, []int{2}},
		{"start<2022-06-01T08:00:00Z", en, []int{1, 4}},
		{"start<=2022-06-01T08:00:00Z", en, []int{1, 2, 4}},
		{"nothere:x", en, nil},
		{"-nothere:x", en, []int{1, 2, 3, 4}},
		{"vandal OR odin", en, []int{1, 4}},
		{"vandal OR odin hidden=false", en, []int{1, 4}},
		{"vandal OR odin cost>3000", en, []int{4}},
		{"cost>3000 vandal OR odin", en, []int{4}},
		{"-vandal -odin", en, []int{2, 3}},
		{"-cost>0 OR hidden=false", en, []int{1, 3, 4}},
	}
	for _, tc := range cases {
		q, err := query.Parse(tc.q)
		if err != nil {
			t.Fatalf("Parse(%q): %v", tc.q, err)
		}
		var got []int
		for _, i := range q.Select(tb, tc.loc) {
			got = append(got, i+1)
		}
		if !slices.Equal(got, tc.EN) {
			t.Errorf("%q in %s: items %v, want %v", tc.q, locale(tc.loc), got, tc.EN)
		}
	}
	var nilQuery *query.Query
	if got := nilQuery.Select(tb, en); len(got) != tb.Len() {
		t.Errorf("no query selects %d items, want all %d", len(got), tb.Len())
	}
}

func locale(loc int) string {
	if loc == catalog.AllLocales {
		return "all"
	}
	return catalog.Locales[loc]
}

// TestRequire: a route's own filter is a term in front of q's, and in its
// canonical form.
func TestRequire(t *testing.T) {
	t.Parallel()
	tb := sampleTable(t)
	q, err := query.Parse("vandal OR odin")
	if err != nil {
		t.Fatal(err)
	}
	q = query.Require(q, "hidden", "false")
	if got, want := q.String(), "hidden=false vandal OR odin"; got != want {
		t.Errorf("canonical %q, want %q", got, want)
	}
	if got := q.Select(tb, catalog.DefaultLocale); !slices.Equal(got, []int{0, 3}) {
		t.Errorf("selects %v", got)
	}
	if got := query.Require(nil, "hidden", "true").Select(tb, catalog.DefaultLocale); !slices.Equal(got, []int{1, 2}) {
		t.Errorf("alone, selects %v", got)
	}
}

// TestDecodeRefuses: what is not a list body is an error, never a panic or a
// table.
func TestDecodeRefuses(t *testing.T) {
	t.Parallel()
	for _, body := range []string{
		``, `{`, `[]`, `{"status":200}`, `{"status":200,"data":{}}`, `{"status":200,"data":[1,]}`,
		`{"data":[1]} x`, `{"data":["\x01"]}`, `{"data":["\u12"]}`, `{"data":[tru]}`, `{"data":[-]}`,
		`{"data":[` + strings.Repeat("[", 70) + strings.Repeat("]", 70) + `]}`,
	} {
		if _, err := query.Decode([]byte(body)); err == nil {
			t.Errorf("Decode(%q) succeeded", body)
		}
		if _, err := query.Split([]byte(body)); err == nil && body != `{"data":[-]}` && body != `{"data":[tru]}` {
			t.Errorf("Split(%q) succeeded", body)
		}
	}
}

// TestDecodeText: escapes are read as JSON has them, and a table's items
// match what the same body splits into.
func TestDecodeText(t *testing.T) {
	t.Parallel()
	body := []byte(`{"status":200,"data":[{"displayName":"a\"b\\c\/d\u00e9\ud83d\ude00\n"}, {"displayName":"plain"} ,{}]}`)
	tb, err := query.Decode(body)
	if err != nil {
		t.Fatal(err)
	}
	for q, want := range map[string][]int{`"a\"b\\c/dÉ😀"`: {0}, "plain": {1}, "displayName=plain": {1}} {
		pq, err := query.Parse(q)
		if err != nil {
			t.Fatal(err)
		}
		if got := pq.Select(tb, catalog.DefaultLocale); !slices.Equal(got, want) {
			t.Errorf("%s selects %v, want %v", q, got, want)
		}
	}
	spans, err := query.Split(body)
	if err != nil {
		t.Fatal(err)
	}
	var items []string
	for i := 0; i < len(spans); i += 2 {
		items = append(items, string(body[spans[i]:spans[i+1]]))
	}
	if want := []string{`{"displayName":"a\"b\\c\/d\u00e9\ud83d\ude00\n"}`, `{"displayName":"plain"}`, `{}`}; !slices.Equal(items, want) {
		t.Errorf("Split: %q, want %q", items, want)
	}
	if tb.Len() != len(items) {
		t.Errorf("table of %d items, split into %d", tb.Len(), len(items))
	}
}
