// Package query owns the `q` and `fields` parameters of the list and item
// routes: their grammar (Parse, ParseFields), checked against the paths an
// item of a catalog has (Paths: openapi.yaml's schema and the fields the
// upstream added), a canonical form of each, the evaluation of a query over a
// list decoded once into a compact Table, and the projection of an item's
// JSON onto the fields asked for. It knows nothing of HTTP; package handler
// serves the answers and keeps them.
package query
