// Package representation owns how a body goes over HTTP: its encodings
// (identity, gzip, brotli) with their ETags and header values, the choice
// among them for a request, and the Response that describes a whole answer,
// which Send writes to a server's Sink: the router's and the edge's the same
// way. It knows nothing of versions or categories.
package representation
