// Package impl implements gen.ServerInterface: every handler looks up a body the
// active catalog.Edition rendered at load time and writes it. It reaches data only
// through Repository.
//
// It implements the plain chi ServerInterface rather than the strict one: the hot
// path needs the request (If-None-Match, Accept-Encoding) and writes pre-rendered
// bytes, which the plain interface hands over directly.
package impl
