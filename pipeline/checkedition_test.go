package pipeline_test

import (
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"sync"
	"testing"

	"github.com/refdata/refdata/catalog"
	"github.com/refdata/refdata/edition"
	"github.com/refdata/refdata/representation"
	"github.com/refdata/refdata/router/apitest"
)

// validSchemaBodies holds the keys (schema and body) of the bodies
// checkEdition found valid, for every test of the package.
var validSchemaBodies sync.Map

// checkEdition validates every body an edition serves on catalog routes — each
// list and each item, in every locale — against the operation's body schema in
// openapi.yaml (`<Schema>ListBody`, `<Schema>Body`). Bodies shared between locales
// are checked once.
func checkEdition(t testing.TB, ed *edition.Edition) {
	t.Helper()
	doc, err := catalog.Spec()
	if err != nil {
		t.Fatal(err)
	}
	checked := map[*representation.Body]bool{}
	check := func(schema string, b *representation.Body, what string) {
		if b == nil || checked[b] {
			return
		}
		checked[b] = true
		// The same bytes under the same schema were valid in an earlier edition
		// (consecutive versions share most bodies): not walked again.
		h := sha256.New()
		h.Write([]byte(schema + "\x00"))
		h.Write(apitest.JSON(t, b))
		key := [sha256.Size]byte(h.Sum(nil))
		if _, ok := validSchemaBodies.Load(key); ok {
			return
		}
		defer func() {
			if !t.Failed() {
				validSchemaBodies.Store(key, true)
			}
		}()
		ref := doc.Components.Schemas[schema]
		if ref == nil || ref.Value == nil {
			t.Fatalf("openapi.yaml has no schema %s", schema)
		}
		var v any
		if err := json.Unmarshal(apitest.JSON(t, b), &v); err != nil {
			t.Fatalf("%s: %v", what, err)
		}
		if err := ref.Value.VisitJSON(v); err != nil {
			t.Errorf("%s does not match %s: %v", what, schema, err)
		}
	}
	for _, c := range catalog.Categories() {
		for loc, lang := range catalog.Locales {
			check(c.Schema()+"ListBody", ed.List(c, loc), fmt.Sprintf("/v1/%s?language=%s", c.Name(), lang))
			for _, u := range ed.UUIDs(c) {
				check(c.Schema()+"Body", ed.Item(c, u, loc), fmt.Sprintf("/v1/%s/%s?language=%s", c.Name(), u, lang))
			}
		}
	}
}
