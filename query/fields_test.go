package query_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/refdata/refdata/catalog"
	"github.com/refdata/refdata/query"
)

// TestParseFields: the canonical form sorts, drops repeats and paths below
// another; bad fields name the field and where it is.
func TestParseFields(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{
		"uuid":                                  "uuid",
		" uuid , displayName,chromas.uuid,uuid": "chromas.uuid,displayName,uuid",
		"chromas.uuid,chromas":                  "chromas",
		"a.b.c,a.b,a.bc":                        "a.b,a.bc",
		"":                                      "",
		"  ":                                    "",
	} {
		f, err := query.ParseFields(in)
		if err != nil {
			t.Errorf("ParseFields(%q): %v", in, err)
			continue
		}
		if got := f.String(); got != want {
			t.Errorf("ParseFields(%q) = %q, want %q", in, got, want)
		}
	}
	for _, tc := range []struct {
		in        string
		field, at int
		reason    string
	}{
		{"uuid,,name", 2, 6, "no path between commas"},
		{"uuid, a b", 2, 7, "not a path"},
		{"a..b", 1, 1, "empty name"},
		{"uuid,x:1", 2, 6, "not a path"},
		{strings.Repeat("a,", 32) + "a", 0, 0, "more than 32"},
		{"a.b.c.d.e.f.g.h.i", 1, 1, "more than 8"},
	} {
		_, err := query.ParseFields(tc.in)
		var qe *query.Error
		if !errors.As(err, &qe) || qe.Term != tc.field || qe.Pos != tc.at || !strings.Contains(qe.Reason, tc.reason) {
			t.Errorf("ParseFields(%q) = %v; want field %d at %d: %q", tc.in, err, tc.field, tc.at, tc.reason)
		}
	}
	p, err := query.CategoryPaths(catalog.Weapons, nil)
	if err != nil {
		t.Fatal(err)
	}
	f, err := query.ParseFields("uuid, shopData,skins.chromas.uuid")
	if err != nil || f.Check(p, "uuid, shopData,skins.chromas.uuid") != nil {
		t.Errorf("fields of a weapon refused: %v", err)
	}
	written := "uuid, shopData.kost"
	f, _ = query.ParseFields(written)
	var qe *query.Error
	if err := f.Check(p, written); !errors.As(err, &qe) || qe.Term != 2 || qe.Pos != 7 || !strings.Contains(qe.Reason, `no field "kost" in shopData`) {
		t.Errorf("Check(%q) = %v", written, err)
	}
}

// TestProject: members kept whole or cut to the fields below them, in
// objects and each object of an array, in their order and bytes.
func TestProject(t *testing.T) {
	t.Parallel()
	item := `{"assetPath":"x","chromas":[{"displayName":"A\"","swatch":null,"uuid":"c1"},{"uuid":"c2","displayName":"B"},"odd"],"displayName":{"de-DE":"Ü","en-US":"U"},"levels":[],"shopData":{"cost":2900,"grid":{"row":1,"col":2}},"none":null,"uuid":"u1"}`
	for fields, want := range map[string]string{
		"uuid":                       `{"uuid":"u1"}`,
		"uuid,assetPath":             `{"assetPath":"x","uuid":"u1"}`,
		"chromas.uuid":               `{"chromas":[{"uuid":"c1"},{"uuid":"c2"},"odd"]}`,
		"chromas.displayName,uuid":   `{"chromas":[{"displayName":"A\""},{"displayName":"B"},"odd"],"uuid":"u1"}`,
		"displayName":                `{"displayName":{"de-DE":"Ü","en-US":"U"}}`,
		"shopData.grid.row":          `{"shopData":{"grid":{"row":1}}}`,
		"shopData":                   `{"shopData":{"cost":2900,"grid":{"row":1,"col":2}}}`,
		"none.deeper,levels.uuid":    `{"levels":[],"none":null}`,
		"missing":                    `{}`,
		"chromas.swatch,shopData.no": `{"chromas":[{"swatch":null},{},"odd"],"shopData":{}}`,
	} {
		f, err := query.ParseFields(fields)
		if err != nil {
			t.Fatal(err)
		}
		got, err := f.Project([]byte("prefix:"), []byte(item))
		if err != nil {
			t.Errorf("Project(%s): %v", fields, err)
			continue
		}
		if string(got) != "prefix:"+want {
			t.Errorf("Project(%s) = %s, want %s", fields, got, want)
		}
	}
	f, _ := query.ParseFields("uuid")
	for _, bad := range []string{`{"uuid":"u1"`, `{"uuid" "u1"}`, `{"uuid":"u1"} x`, `{"a":[1,}`, `{"uuid":` + strings.Repeat("[", 70) + strings.Repeat("]", 70) + `}`} {
		if _, err := f.Project(nil, []byte(bad)); err == nil {
			t.Errorf("Project(%s) succeeded", bad)
		}
	}
}
