// Package refdata holds the contract, openapi.yaml, so the binary can serve it.
package refdata

import _ "embed"

// OpenAPIYAML is openapi.yaml as written: the source of truth for gen/ and the
// document served at /openapi.yaml.
//
//go:embed openapi.yaml
var OpenAPIYAML []byte
