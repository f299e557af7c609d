package catalog_test

import (
	"slices"
	"testing"
	"testing/fstest"

	"github.com/refdata/refdata/catalog"
)

func TestValidateReportsProblems(t *testing.T) {
	fsys := fstest.MapFS{
		"version.json": {Data: []byte(`{"manifestId":"abc","branch":"b","version":"v","buildVersion":"1","buildDate":"d"}`)},
		"en-US/playertitles.json": {Data: []byte(`[
			{"uuid":"00000000-0000-0000-0000-000000000001","displayName":"A","titleText":null,"isHiddenIfNotOwned":"no","assetPath":"a","newField":1},
			{"uuid":"00000000-0000-0000-0000-000000000001","displayName":"B","titleText":"t","isHiddenIfNotOwned":false,"assetPath":"a"},
			{"displayName":"C","titleText":"t","isHiddenIfNotOwned":false,"assetPath":"a"}]`)},
	}
	snap, err := catalog.LoadSnapshot(fsys, ".")
	if err != nil {
		t.Fatal(err)
	}
	v, err := catalog.Validate(snap)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, p := range v.Rejections {
		got = append(got, p.File+" "+p.Pointer)
	}
	for _, want := range []string{"version.json /manifestId", "en-US/playertitles.json /0/isHiddenIfNotOwned", "en-US/playertitles.json /1/uuid", "en-US/playertitles.json /2/uuid"} {
		if !slices.Contains(got, want) {
			t.Errorf("no rejection at %s; got %q", want, got)
		}
	}
	if len(v.Unknown) != 1 || v.Unknown[0].Pointer != "/0/newField" {
		t.Errorf("unknown = %+v, want /0/newField", v.Unknown)
	}
}
