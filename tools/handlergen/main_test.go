package main

import (
	"bytes"
	"maps"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/refdata/refdata/catalog"
	"github.com/refdata/refdata/handler"
)

const (
	specFile    = "../../openapi.yaml"
	catalogFile = "../../catalog/category.go"
	outFile     = "../../handler/catalog_methods.gen.go"
)

// TestOutputIsCurrent: handler/catalog_methods.gen.go is what openapi.yaml and
// catalog/category.go generate (make check-generate checks it too).
func TestOutputIsCurrent(t *testing.T) {
	t.Parallel()
	want, err := generate(specFile, catalogFile)
	if err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile(outFile)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s is out of date with openapi.yaml: run 'make generate' and commit", outFile)
	}
}

// TestEveryCategoryHasMethods: every category of catalog has a list route and
// an item route in the spec, each a method of handler.Server: generated when its
// parameters are the plain ones, else written by hand. The categories read
// from catalog's source are the compiled package's.
func TestEveryCategoryHasMethods(t *testing.T) {
	t.Parallel()
	names, err := categories(catalogFile)
	if err != nil {
		t.Fatal(err)
	}
	var compiled []string
	for _, c := range catalog.Categories() {
		compiled = append(compiled, c.Name())
	}
	if got, want := slices.Sorted(maps.Keys(names)), slices.Sorted(slices.Values(compiled)); !slices.Equal(got, want) {
		t.Fatalf("the categories table of %s names %v, catalog.Categories() %v", catalogFile, got, want)
	}
	routes, err := catalogRoutes(specFile, catalogFile)
	if err != nil {
		t.Fatal(err)
	}
	server := reflect.TypeFor[*handler.Server]()
	generated := 0
	for _, c := range catalog.Categories() {
		for _, path := range []string{"/v1/" + c.Name(), "/v1/" + c.Name() + "/{uuid}"} {
			i := slices.IndexFunc(routes, func(r route) bool { return r.Path == path })
			if i < 0 {
				t.Errorf("%s: no GET %s in the spec", c.Name(), path)
				continue
			}
			r := routes[i]
			if r.Category != names[c.Name()] {
				t.Errorf("GET %s is answered from catalog.%s", path, r.Category)
			}
			if _, ok := server.MethodByName(r.Method); !ok {
				t.Errorf("GET %s: handler.Server has no method %s", path, r.Method)
			}
			if r.Plain {
				generated++
			}
		}
	}
	if len(routes) != 2*int(catalog.NumCategories) {
		t.Errorf("%d catalog routes, want a list and an item for each of %d categories", len(routes), catalog.NumCategories)
	}
	// The hand-written ones are the lists with a filter of their own.
	if want := 2*int(catalog.NumCategories) - 3; generated != want {
		t.Errorf("%d routes generated, want %d (all but /v1/agents, /v1/events and /v1/levelborders)", generated, want)
	}
}

// TestRoutesFromSpec: which routes of a spec get a generated method, and the
// specs and tables the generator refuses.
func TestRoutesFromSpec(t *testing.T) {
	t.Parallel()
	const table = `package catalog
var categories = [2]struct{ name, schema string }{
	Things: {"things", "Thing"},
	ThingParts: {"things/parts", "ThingPart"},
}
`
	param := func(name, in string) string {
		req := ""
		if in == "path" {
			req = ", required: true"
		}
		return `{name: ` + name + `, in: ` + in + req + `, schema: {type: string}}`
	}
	lang, q, fields, uuid := param("language", "query"), param("q", "query"), param("fields", "query"), param("uuid", "path")
	op := func(id string, tags string, params ...string) string {
		return `
    get:
      operationId: ` + id + `
      tags: [` + tags + `]
      parameters: [` + strings.Join(params, ", ") + `]
      responses: {'200': {description: ok}}`
	}
	spec := func(paths ...string) string {
		return "openapi: 3.0.3\ninfo: {title: t, version: '1'}\npaths:\n" + strings.Join(paths, "\n")
	}
	for _, tc := range []struct {
		name, spec, table string
		want              []route // nil with err
		err               string
	}{
		{
			name: "plain, own filter, not a category, pinned",
			spec: spec(
				"  /v1/things:"+op("listThings", "a", lang, q, fields),
				"  /v1/things/{uuid}:"+op("getThing", "a", uuid, lang, fields),
				"  /v1/things/parts:"+op("listThingParts", "a", lang, param("color", "query"), q, fields),
				"  /v1/things/parts/{uuid}:"+op("getThingPart", "a", uuid, lang),
				"  /v1/other:"+op("listOther", "a", lang, q, fields),
				"  /v1/versions/{manifestId}/things:"+op("listPinnedThings", "pinned", param("manifestId", "path"), lang, q, fields),
			),
			table: table,
			want: []route{
				{Path: "/v1/things", Method: "ListThings", Category: "Things", Name: "things", Plain: true},
				{Path: "/v1/things/parts", Method: "ListThingParts", Category: "ThingParts", Name: "things/parts"},
				{Path: "/v1/things/parts/{uuid}", Method: "GetThingPart", Category: "ThingParts", Name: "things/parts", Item: true},
				{Path: "/v1/things/{uuid}", Method: "GetThing", Category: "Things", Name: "things", Item: true, Plain: true},
			},
		},
		{name: "operationId", spec: spec("  /v1/things:" + op("list_things", "a", lang, q, fields)), table: table, err: `operationId "list_things"`},
		{name: "no table", spec: spec(), table: "package catalog\nvar others = []int{1}\n", err: "no var categories"},
		{name: "table entry", spec: spec(), table: "package catalog\nvar categories = [1]struct{ n string }{0: {\"x\"}}\n", err: "not Constant: {name, ...}"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			sp, cp := filepath.Join(dir, "openapi.yaml"), filepath.Join(dir, "category.go")
			if err := os.WriteFile(sp, []byte(tc.spec), 0o644); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(cp, []byte(tc.table), 0o644); err != nil {
				t.Fatal(err)
			}
			got, err := catalogRoutes(sp, cp)
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("err %v, want one containing %q", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("routes\n%+v\nwant\n%+v", got, tc.want)
			}
			if _, err := generate(sp, cp); err != nil {
				t.Errorf("generate: %v", err)
			}
		})
	}
}
