package catalog_test

import (
	"slices"
	"strings"
	"testing"
	"testing/fstest"
	"time"

	"github.com/refdata/refdata/catalog"
)

// tinySnapshot is one version with two player titles and one map; title and
// xMultiplier are spliced in as raw JSON so a test can vary their spelling.
func tinySnapshot(t *testing.T, id, title, xMul, deTitle string) *catalog.Edition {
	t.Helper()
	fsys := fstest.MapFS{
		"version.json": {Data: []byte(`{"manifestId":"` + id + `","branch":"b","version":"v","buildVersion":"1","buildDate":"2021-01-01"}`)},
		"en-US/playertitles.json": {Data: []byte(`[
			{"uuid":"00000000-0000-0000-0000-000000000001","displayName":"` + title + `","titleText":"t","isHiddenIfNotOwned":false,"assetPath":"a"},
			{"uuid":"00000000-0000-0000-0000-000000000002","displayName":"Same","titleText":"t","isHiddenIfNotOwned":false,"assetPath":"a"}]`)},
		"en-US/maps.json": {Data: []byte(`[{"uuid":"00000000-0000-0000-0000-0000000000aa","displayName":"M","coordinates":null,
			"displayIcon":null,"listViewIcon":"u","splash":"u","assetPath":"a","mapUrl":"m",
			"xMultiplier":` + xMul + `,"yMultiplier":1,"xScalarToAdd":0,"yScalarToAdd":0,"callouts":null}]`)},
		"de-DE/playertitles.json": {Data: []byte(`[{"uuid":"00000000-0000-0000-0000-000000000002","displayName":"` + deTitle + `"}]`)},
	}
	snap, err := catalog.LoadSnapshot(fsys, ".")
	if err != nil {
		t.Fatal(err)
	}
	v, err := catalog.Validate(snap)
	if err != nil || len(v.Rejections) > 0 {
		t.Fatalf("tiny snapshot invalid: %v %v", err, v.Rejections)
	}
	ed, err := catalog.Build(snap)
	if err != nil {
		t.Fatal(err)
	}
	return ed
}

func TestDiffFields(t *testing.T) {
	a := tinySnapshot(t, "000000000000000A", "Old", "12", "Gleich")
	tests := []struct {
		name        string
		b           *catalog.Edition
		wantChanged []string // "uuid-suffix:fields"
	}{
		{"numbers compare by value", tinySnapshot(t, "000000000000000B", "Old", "12.0", "Gleich"), nil},
		{"a number changes", tinySnapshot(t, "000000000000000B", "Old", "12.5", "Gleich"), []string{"aa:xMultiplier"}},
		{"en-US text changes", tinySnapshot(t, "000000000000000B", "New", "12", "Gleich"), []string{"01:displayName"}},
		{"only a translation changes", tinySnapshot(t, "000000000000000B", "Old", "12", "Anders"), []string{"02:displayName"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			d, err := catalog.Diff(a, tc.b, time.Unix(0, 0))
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, ch := range append(d.Categories.Playertitles.Changed, d.Categories.Maps.Changed...) {
				got = append(got, ch.Uuid[len(ch.Uuid)-2:]+":"+strings.Join(ch.Fields, ","))
			}
			if !slices.Equal(got, tc.wantChanged) || d.Summary.TotalChanged != len(tc.wantChanged) {
				t.Errorf("changed = %q (total %d), want %q", got, d.Summary.TotalChanged, tc.wantChanged)
			}
			if d.Categories.Weapons.Added == nil || d.Categories.Weapons.Changed == nil || d.FromVersion != "000000000000000A" {
				t.Errorf("empty categories must be empty arrays, not null: %+v", d.Categories.Weapons)
			}
		})
	}
}
