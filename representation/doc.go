// Package representation owns how a rendered body goes over HTTP: its encodings
// (identity, gzip, brotli, made once per body at load time), their ETags and
// header values, the choice among them for a request (Accept-Encoding,
// If-None-Match), and the Response that describes a whole answer — route label,
// cache policy, header fields, bytes per encoding — which both the router's
// handlers (package impl) and the edge write. It knows nothing of versions or
// categories: package catalog renders the bytes and wraps them in a Body.
package representation
