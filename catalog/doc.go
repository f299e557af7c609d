// Package catalog owns the data model of one game version: loading a
// snapshot, normalizing and validating it against openapi.yaml, rendering every
// body as JSON, diffing two versions, and the error codes every layer speaks.
// It imports nothing of serving, compression or scheduling.
package catalog
