// Package catalog owns the data model of one game version: it loads a snapshot,
// normalizes it to the contract's shape, and renders it into an Edition — every
// response body as bytes, made once when the version is loaded.
package catalog
