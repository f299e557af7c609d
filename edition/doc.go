// Package edition owns one game version as it is served: every body of every
// route in every locale with its encodings and header fields. An import
// encodes a rendered version into a pack (Encode) its store keeps; a server
// reads it back (Decode). It also holds the Repository the handlers serve
// from, and Static, a repository of editions that never change.
package edition
