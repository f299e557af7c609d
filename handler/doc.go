// Package handler implements gen.ServerInterface: every handler looks up a body
// the active edition holds (or, on a pinned route, a retained one: pinned.go)
// and describes the answer (Answer), which one writer (Server.write) writes,
// reaching data only through an edition.Repository. Errors become answers in
// one place (errors.go). The plain catalog routes' methods
// are generated from openapi.yaml (catalog_methods.gen.go, tools/handlergen).
//
// It implements the plain chi ServerInterface rather than the strict one: the
// hot path needs the request (If-None-Match, Accept-Encoding) and writes
// pre-rendered bytes, and some answers are streams (events, media ranges),
// which the plain interface hands over directly.
package handler
