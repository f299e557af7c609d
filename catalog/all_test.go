package catalog

import (
	"strings"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"
)

// TestAllSchemasFollowTheirItems: every <X>All schema of openapi.yaml has the
// fields of <X>, required alike, with each x-localized text as LocalizedText
// (LocalizedTextOrNull when nullable) and every other field as in <X> or as the
// …All of what <X> refers to — so editing an item schema without its …All twin
// fails here.
func TestAllSchemasFollowTheirItems(t *testing.T) {
	t.Parallel()
	doc, err := Spec()
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for name, ref := range doc.Components.Schemas {
		base, ok := strings.CutSuffix(name, "All")
		if !ok || base == "LanguageOr" {
			continue
		}
		b := doc.Components.Schemas[base]
		if b == nil {
			t.Errorf("%s has no item schema %s", name, base)
			continue
		}
		n++
		all, item := ref.Value, b.Value
		if strings.Join(all.Required, ",") != strings.Join(item.Required, ",") {
			t.Errorf("%s requires %v, %s %v", name, all.Required, base, item.Required)
		}
		for k, ip := range item.Properties {
			ap := all.Properties[k]
			if ap == nil {
				t.Errorf("%s lacks %s", name, k)
				continue
			}
			if !sameShape(ip, ap) {
				t.Errorf("%s.%s does not follow %s.%s", name, k, base, k)
			}
		}
		if len(all.Properties) != len(item.Properties) {
			t.Errorf("%s has %d fields, %s %d", name, len(all.Properties), base, len(item.Properties))
		}
	}
	if n < 25 {
		t.Errorf("only %d …All schemas", n)
	}
}

func sameShape(item, all *openapi3.SchemaRef) bool {
	switch {
	case item.Ref != "":
		return all.Ref == item.Ref || all.Ref == item.Ref+"All"
	case isLocalized(item.Value):
		want := "#/components/schemas/LocalizedText"
		if item.Value.Nullable {
			want += "OrNull"
		}
		return all.Ref == want
	case item.Value.Items != nil:
		return all.Value.Items != nil && sameShape(item.Value.Items, all.Value.Items)
	case len(item.Value.AllOf) == 1:
		return len(all.Value.AllOf) == 1 && sameShape(item.Value.AllOf[0], all.Value.AllOf[0])
	}
	return all.Ref == "" && all.Value.Type.Is(strings.Join(item.Value.Type.Slice(), ""))
}
