package catalog

import "github.com/getkin/kin-openapi/openapi3"

// AppendAll and AppendJSON are the language=all writer and its value writer,
// for the comparison with encoding/json (Encode) in allwriter_test.go.
var (
	AppendAll  = appendAll
	AppendJSON = appendJSON
)

// ComponentSchema is componentSchema: openapi.yaml's schema by name.
func ComponentSchema(name string) (*openapi3.Schema, error) { return componentSchema(name) }
