package catalog_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/refdata/refdata/catalog"
	"github.com/refdata/refdata/fixtures"
)

// TestBulkLinesEqualLists: each locale's bulk file and language=all's is a
// line {"catalog","data"} per item of every catalog's list, the catalogs in
// Categories' order, each list's items in its order and byte for byte its
// data; Len is the bytes WriteTo writes, and WriteWith writes the same from
// items' bytes kept elsewhere.
func TestBulkLinesEqualLists(t *testing.T) {
	t.Parallel()
	r := dataRendered(t, fixtures.Versions()[1])
	for loc := range catalog.NumLocales + 1 {
		d := r.Bulk[loc]
		if d == nil || !d.IsBulk() || !d.IsList() {
			t.Fatalf("locale %d: no bulk file", loc)
		}
		b := d.Bytes()
		if len(b) != d.Len() {
			t.Fatalf("locale %d: %d bytes, Len %d", loc, len(b), d.Len())
		}
		if len(b) > 0 && b[len(b)-1] != '\n' {
			t.Fatalf("locale %d: the last line has no newline", loc)
		}
		data := map[catalog.Category][]string{}
		var order []catalog.Category
		for line := range strings.SplitSeq(strings.TrimSuffix(string(b), "\n"), "\n") {
			var l struct {
				Catalog string          `json:"catalog"`
				Data    json.RawMessage `json:"data"`
			}
			dec := json.NewDecoder(strings.NewReader(line))
			dec.DisallowUnknownFields()
			if err := dec.Decode(&l); err != nil {
				t.Fatalf("locale %d: line %.80q: %v", loc, line, err)
			}
			c, ok := catalog.CategoryNamed(l.Catalog)
			if !ok {
				t.Fatalf("locale %d: line of catalog %q", loc, l.Catalog)
			}
			if len(order) == 0 || order[len(order)-1] != c {
				order = append(order, c)
			}
			// The line holds the item's bytes as they are: its data field
			// ends the line, before "}".
			raw := strings.TrimSuffix(line[strings.Index(line, `"data":`)+len(`"data":`):], "}")
			data[c] = append(data[c], raw)
		}
		var want []catalog.Category
		for _, c := range catalog.Categories() {
			l := r.Tables[c].List[loc]
			if len(l.Items) > 0 {
				want = append(want, c)
			}
			if got := `{"status":200,"data":[` + strings.Join(data[c], ",") + "]}"; got != string(l.Bytes()) {
				t.Fatalf("locale %d, %s: the lines' data differ from the list (%d items, %d lines)", loc, c.Name(), len(l.Items), len(data[c]))
			}
		}
		if !slices.Equal(order, want) {
			t.Fatalf("locale %d: catalogs in order %v, want %v", loc, order, want)
		}
		var w bytes.Buffer
		kept := func(it *catalog.Doc) ([]byte, error) { return bytes.Clone(it.JSON), nil }
		if n, err := d.WriteWith(&w, kept); err != nil || n != int64(len(b)) || !bytes.Equal(w.Bytes(), b) {
			t.Fatalf("locale %d: WriteWith wrote %d bytes (%v), not the body", loc, n, err)
		}
		failed := errors.New("item unreadable")
		if _, err := d.WriteWith(&w, func(*catalog.Doc) ([]byte, error) { return nil, failed }); len(d.Items) > 0 && !errors.Is(err, failed) {
			t.Fatalf("locale %d: an item's error is %v", loc, err)
		}
	}
	all := r.Bulk[catalog.AllLocales]
	if all.Lang != catalog.AllLanguages || r.Bulk[catalog.DefaultLocale].Lang != "en-US" {
		t.Errorf("languages %q and %q", all.Lang, r.Bulk[catalog.DefaultLocale].Lang)
	}
}

// TestBulkShared: a locale whose lists are all en-US's shares en-US's bulk
// file, as its lists do; Docs lists each bulk file once, last.
func TestBulkShared(t *testing.T) {
	t.Parallel()
	files := map[string][]byte{
		"version.json":       []byte(`{"status":200,"data":{"manifestId":"0123456789ABCDEF","branch":"b","version":"1","buildVersion":"1","engineVersion":"","riotClientVersion":"","riotClientBuild":"","buildDate":"2024-01-01T00:00:00Z"}}`),
		"en-US/themes.json":  []byte(`{"status":200,"data":[{"uuid":"11111111-1111-1111-1111-111111111111","displayName":"One","displayIcon":null,"storeFeaturedImage":null,"assetPath":"a"}]}`),
		"de-DE/themes.json":  []byte(`{"status":200,"data":[{"uuid":"11111111-1111-1111-1111-111111111111","displayName":"Eins","displayIcon":null,"storeFeaturedImage":null,"assetPath":"a"}]}`),
		"en-US/weapons.json": []byte(`{"status":200,"data":[]}`),
	}
	r, err := catalog.RenderFiles(files)
	if err != nil {
		t.Fatal(err)
	}
	de, _ := catalog.ParseLocale("de-DE")
	fr, _ := catalog.ParseLocale("fr-FR")
	en := r.Bulk[catalog.DefaultLocale]
	if r.Bulk[fr] != en || r.Bulk[de] == en || r.Bulk[de].Lang != "de-DE" {
		t.Errorf("fr-FR shares en-US's bulk file: %v, de-DE: %v", r.Bulk[fr] == en, r.Bulk[de] == en)
	}
	want := `{"catalog":"themes","data":{"assetPath":"a","displayIcon":null,"displayName":"Eins","storeFeaturedImage":null,"uuid":"11111111-1111-1111-1111-111111111111"}}` + "\n"
	if got := string(r.Bulk[de].Bytes()); got != want {
		t.Errorf("de-DE bulk file:\n%s\nwant\n%s", got, want)
	}
	docs := r.Docs()
	tail := docs[len(docs)-3:]
	if !slices.Equal(tail, []*catalog.Doc{en, r.Bulk[de], r.Bulk[catalog.AllLocales]}) {
		t.Error("Docs does not end with the three distinct bulk files")
	}
}

// TestBulkOrderDocumented: openapi.yaml lists a bulk line's catalogs in the
// order bulk files have them.
func TestBulkOrderDocumented(t *testing.T) {
	t.Parallel()
	doc, err := catalog.Spec()
	if err != nil {
		t.Fatal(err)
	}
	var documented []string
	for _, v := range doc.Components.Schemas["BulkLine"].Value.Properties["catalog"].Value.Enum {
		documented = append(documented, v.(string))
	}
	var names []string
	for _, c := range catalog.Categories() {
		names = append(names, c.Name())
	}
	if !slices.Equal(documented, names) {
		t.Errorf("openapi.yaml lists %v, bulk files have %v", documented, names)
	}
}
