// Package representation owns how a body goes over HTTP: its encodings
// (identity, gzip, brotli) and their ETags and header values, made when the
// body is made, the choice among them for a request (Accept-Encoding,
// If-None-Match), and the Response that describes a whole answer, which the
// router's handlers (package impl) and the edge both write. It knows nothing
// of versions or categories.
package representation
