// Command handlergen writes handler's methods for the plain catalog routes from
// openapi.yaml: a GET /v1/<category> list that takes exactly language, q and
// fields, and a GET /v1/<category>/{uuid} item that takes exactly uuid,
// language and fields, where <category> is the Name() of a catalog.Category.
// Each becomes a one-line method of handler.Server writing (Server.write) the
// answer catalogList or catalogItem describes for that category. A catalog
// route with parameters of its own (/v1/agents' isPlayableCharacter, …) gets
// none: its method is hand-written, and the compiler asks for it (handler's
// `var _ gen.ServerInterface`).
//
// The categories' Go names are read from catalog/category.go's source (its
// `categories` table, keyed by the constants), not from the compiled package,
// so the generator imports nothing of the module and runs before it compiles.
//
//	go run ./tools/handlergen -spec openapi.yaml -catalog catalog/category.go -out handler/catalog_methods.gen.go
package main

import (
	"bytes"
	"flag"
	"fmt"
	"go/ast"
	"go/format"
	"go/parser"
	"go/token"
	"os"
	"slices"
	"strconv"
	"strings"
	"text/template"
	"unicode"

	"github.com/getkin/kin-openapi/openapi3"
)

func main() {
	spec := flag.String("spec", "openapi.yaml", "the OpenAPI document")
	cats := flag.String("catalog", "catalog/category.go", "the source file holding catalog's categories table")
	out := flag.String("out", "handler/catalog_methods.gen.go", "the file to write")
	flag.Parse()
	b, err := generate(*spec, *cats)
	if err == nil {
		err = os.WriteFile(*out, b, 0o644)
	}
	if err != nil {
		fmt.Fprintf(os.Stderr, "handlergen: %v\n", err)
		os.Exit(1)
	}
}

// route is one catalog route of the spec.
type route struct {
	Path     string // e.g. /v1/weapons/skins/{uuid}
	Method   string // the generated interface's method: the operationId, first letter upper
	Category string // catalog's constant, e.g. WeaponSkins
	Name     string // its Name(), e.g. weapons/skins
	Item     bool
	Plain    bool // only the standard parameters: the generator writes its method
}

// The parameters of a plain list and a plain item, as in:name.
var (
	plainList = []string{"query:fields", "query:language", "query:q"}
	plainItem = []string{"path:uuid", "query:fields", "query:language"}
)

// generate is the Go source of handler's catalog methods.
func generate(specPath, catalogPath string) ([]byte, error) {
	routes, err := catalogRoutes(specPath, catalogPath)
	if err != nil {
		return nil, err
	}
	var buf bytes.Buffer
	if err := tmpl.Execute(&buf, routes); err != nil {
		return nil, fmt.Errorf("render: %w", err)
	}
	src, err := format.Source(buf.Bytes())
	if err != nil {
		return nil, fmt.Errorf("format the generated source: %w", err)
	}
	return src, nil
}

// catalogRoutes are the spec's GET routes /v1/<category> and
// /v1/<category>/{uuid}, by path.
func catalogRoutes(specPath, catalogPath string) ([]route, error) {
	cats, err := categories(catalogPath)
	if err != nil {
		return nil, err
	}
	doc, err := openapi3.NewLoader().LoadFromFile(specPath)
	if err != nil {
		return nil, fmt.Errorf("load %s: %w", specPath, err)
	}
	var routes []route
	for path, item := range doc.Paths.Map() {
		op := item.Get
		if op == nil || slices.Contains(op.Tags, "pinned") { // gen/config.yaml excludes that tag
			continue
		}
		rest, ok := strings.CutPrefix(path, "/v1/")
		if !ok {
			continue
		}
		name, isItem := strings.CutSuffix(rest, "/{uuid}")
		ident, ok := cats[name]
		if !ok {
			continue
		}
		method, err := methodName(op.OperationID)
		if err != nil {
			return nil, fmt.Errorf("GET %s: %w", path, err)
		}
		var params []string
		for _, ref := range append(item.Parameters, op.Parameters...) {
			if ref.Value == nil {
				return nil, fmt.Errorf("GET %s: a parameter has no value (%s)", path, ref.Ref)
			}
			params = append(params, ref.Value.In+":"+ref.Value.Name)
		}
		slices.Sort(params)
		plain := slices.Equal(params, plainList)
		if isItem {
			plain = slices.Equal(params, plainItem)
		}
		routes = append(routes, route{Path: path, Method: method, Category: ident, Name: name, Item: isItem, Plain: plain})
	}
	slices.SortFunc(routes, func(a, b route) int { return strings.Compare(a.Path, b.Path) })
	return routes, nil
}

// methodName is the method oapi-codegen names after operationId: its first
// letter upper case. An operationId it would rewrite further is refused.
func methodName(operationID string) (string, error) {
	if operationID == "" || !unicode.IsLetter(rune(operationID[0])) || strings.IndexFunc(operationID, func(r rune) bool {
		return r > unicode.MaxASCII || !unicode.IsLetter(r) && !unicode.IsDigit(r)
	}) >= 0 {
		return "", fmt.Errorf("operationId %q is not letters and digits", operationID)
	}
	return strings.ToUpper(operationID[:1]) + operationID[1:], nil
}

// categories reads the `categories` table of catalog's source: each category's
// Name() (the first string of its entry) to its constant.
func categories(path string) (map[string]string, error) {
	f, err := parser.ParseFile(token.NewFileSet(), path, nil, 0)
	if err != nil {
		return nil, fmt.Errorf("parse %s: %w", path, err)
	}
	var table *ast.CompositeLit
	for _, d := range f.Decls {
		g, ok := d.(*ast.GenDecl)
		if !ok || g.Tok != token.VAR {
			continue
		}
		for _, spec := range g.Specs {
			vs := spec.(*ast.ValueSpec)
			if len(vs.Names) == 1 && vs.Names[0].Name == "categories" && len(vs.Values) == 1 {
				table, _ = vs.Values[0].(*ast.CompositeLit)
			}
		}
	}
	if table == nil {
		return nil, fmt.Errorf("%s: no var categories = [...]{...} table", path)
	}
	m := map[string]string{}
	for _, e := range table.Elts {
		kv, ok := e.(*ast.KeyValueExpr)
		if !ok {
			return nil, fmt.Errorf("%s: an entry of categories is not Constant: {name, ...}", path)
		}
		key, ok := kv.Key.(*ast.Ident)
		entry, ok2 := kv.Value.(*ast.CompositeLit)
		if !ok || !ok2 || len(entry.Elts) == 0 {
			return nil, fmt.Errorf("%s: an entry of categories is not Constant: {name, ...}", path)
		}
		lit, ok := entry.Elts[0].(*ast.BasicLit)
		if !ok || lit.Kind != token.STRING {
			return nil, fmt.Errorf("%s: %s's entry does not start with its name as a string", path, key.Name)
		}
		name, err := strconv.Unquote(lit.Value)
		if err != nil {
			return nil, fmt.Errorf("%s: %s's name: %w", path, key.Name, err)
		}
		m[name] = key.Name
	}
	if len(m) == 0 {
		return nil, fmt.Errorf("%s: the categories table is empty", path)
	}
	return m, nil
}

var tmpl = template.Must(template.New("").Parse(`// Code generated by tools/handlergen from openapi.yaml and catalog/category.go. DO NOT EDIT.

package handler

import (
	"net/http"

	"github.com/refdata/refdata/catalog"
	"github.com/refdata/refdata/gen"
)

// The catalog routes with parameters of their own are hand-written:
{{- range .}}{{if not .Plain}}
//   - GET {{.Path}}: {{.Method}}
{{- end}}{{end}}
{{range .}}{{if .Plain}}
// {{.Method}} serves GET {{.Path}}.
{{- if .Item}}
func (s *Server) {{.Method}}(w http.ResponseWriter, r *http.Request, uuid gen.Uuid, p gen.{{.Method}}Params) {
	s.write(w, r, s.catalogItem(r, catalog.{{.Category}}, uuid, deref(p.Language), deref(p.Fields)))
}
{{- else}}
func (s *Server) {{.Method}}(w http.ResponseWriter, r *http.Request, p gen.{{.Method}}Params) {
	s.write(w, r, s.catalogList(r, catalog.{{.Category}}, deref(p.Language), deref(p.Q), deref(p.Fields)))
}
{{- end}}
{{end}}{{end}}`))
