// Package edition owns one game version as it is served: every body of every
// route in every locale with its encodings and header fields. An import
// encodes a rendered version into an index and a new segment of the bodies
// the previous version lacks (Encoder, Encode); a server reads the index
// (Decode) and each body's bytes from the segments when a request first needs
// it. It also holds the Repository the handlers serve from, and Static, a
// repository of editions that never change.
package edition
