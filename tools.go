//go:build tools

// Package tools pins the code generator so `go run` uses the version in go.mod.
package tools

import (
	_ "github.com/oapi-codegen/oapi-codegen/v2/cmd/oapi-codegen"
)
