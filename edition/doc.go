// Package edition owns one game version as it is served: every body of every
// route in every locale with its encodings and header fields. An import
// encodes a rendered version into a pack (Encode) that its store keeps; a
// server reads the pack back (Decode) and only indexes it. It also holds the
// Repository the handlers serve from, and Static, a repository of editions
// that never change (the embedded sample, tests).
package edition
