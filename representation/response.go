package representation

import (
	"net/http"
	"strings"
	"unsafe"
)

// Field is one response header with its value made once in the form net/http
// takes; fasthttp's []byte views the same strings. The zero Field is no header.
type Field struct {
	Name  string   // canonical (textproto) form
	Value []string // one value
}

// NewField makes a header field; name is canonicalized.
func NewField(name, value string) Field {
	return Field{Name: http.CanonicalHeaderKey(name), Value: []string{value}}
}

// NameBytes and ValueBytes view the field's strings as bytes, which nothing may
// write to (fasthttp copies them).
func (f *Field) NameBytes() []byte { return view(f.Name) }
func (f *Field) ValueBytes() []byte {
	if len(f.Value) == 0 {
		return nil
	}
	return view(f.Value[0])
}

// view is s as bytes without copying; they must not be written.
func view(s string) []byte { return unsafe.Slice(unsafe.StringData(s), len(s)) }

// Route is what every answer of one route shares, made once: its label (the
// route template), its Cache-Control and its header fields.
type Route struct {
	Label  string
	Cache  string // Cache-Control
	Header []Field
	// Compressed: the route's bodies are sent gzip or br only, never
	// decompressed for a client (a bulk file is tens of MB, stored
	// compressed): a request whose Accept-Encoding takes neither is not
	// Acceptable (406), one without the header gets gzip.
	Compressed bool
}

// NewRoute describes a route of contentType bodies cached as cache says, with
// extra fields on every answer.
func NewRoute(label, contentType, cache string, extra ...Field) *Route {
	h := []Field{NewField("Content-Type", contentType), NewField("Cache-Control", cache), vary}
	return &Route{Label: label, Cache: cache, Header: append(h, extra...)}
}

// vary: every answer depends on Accept-Encoding, identity included.
var vary = NewField("Vary", "Accept-Encoding")

// Response describes one successful answer: the route's fields, the
// version's, and the body. It only points at parts made when a version (or a
// page) is rendered, so making one allocates nothing.
type Response struct {
	Route   *Route
	Version *Field // X-Data-Version; nil for a body of no version
	// Location is Content-Location, the pinned URL of the same bytes; nil for none.
	Location *Field
	Body     *Body
}

// Acceptable says whether a request with this Accept-Encoding can be sent
// the body: always, but on a Compressed route only if it takes gzip or br
// (or says nothing). A caller answers 406 to one that cannot, before
// Negotiate.
func (r *Response) Acceptable(acceptEncoding []string) bool {
	if !r.Route.Compressed {
		return true
	}
	_, ok := r.Body.pickCompressed(acceptEncoding)
	return ok
}

// Negotiate picks the encoding to send, with 304 when If-None-Match names its
// ETag, else 200. It allocates nothing. On a Compressed route a request that
// is not Acceptable gets gzip: its caller answers 406 first.
func (r *Response) Negotiate(acceptEncoding, ifNoneMatch []string) (status int, enc *Encoded) {
	if r.Route.Compressed {
		enc, _ = r.Body.pickCompressed(acceptEncoding)
	} else {
		enc = r.Body.Pick(acceptEncoding)
	}
	if len(ifNoneMatch) > 0 && ETagMatch(ifNoneMatch, enc.ETag()) {
		return http.StatusNotModified, enc
	}
	return http.StatusOK, enc
}

// Fields appends to buf every header field of the answer in status and enc,
// in one order for every writer (Content-Encoding not on a 304). A buf of
// MaxFields on the caller's stack keeps it from allocating.
func (r *Response) Fields(status int, enc *Encoded, buf []*Field) []*Field {
	for i := range r.Route.Header {
		buf = append(buf, &r.Route.Header[i])
	}
	if r.Version != nil {
		buf = append(buf, r.Version)
	}
	if r.Location != nil {
		buf = append(buf, r.Location)
	}
	if r.Body.Language.Name != "" {
		buf = append(buf, r.Body.Language)
	}
	buf = append(buf, &enc.ETagField)
	if status != http.StatusNotModified && enc.Encoding.Name != "" {
		buf = append(buf, enc.Encoding)
	}
	return buf
}

// MaxFields is room for the fields of any Response.
const MaxFields = 12

// Write answers req with r through net/http (Send). A body read from a store
// is read first: when it fails its check, the error is returned and nothing
// is written.
func Write(w http.ResponseWriter, req *http.Request, r *Response) error {
	_, _, err := Send(HTTPSink{W: w, Req: req}, r, req.Header["Accept-Encoding"], req.Header["If-None-Match"])
	return err
}

// WriteHeader is Write without the body: it returns the representation to
// send (nil for HEAD or a 304), for a caller that sends the bytes itself.
func WriteHeader(w http.ResponseWriter, req *http.Request, r *Response) *Encoded {
	status, enc, _ := Send(HTTPSink{W: w, Req: req, HeadOnly: true}, r, req.Header["Accept-Encoding"], req.Header["If-None-Match"])
	if status == http.StatusNotModified || req.Method == http.MethodHead {
		return nil
	}
	return enc
}

// SetFields puts fields into a net/http header.
func SetFields(h http.Header, fields []Field) {
	for i := range fields {
		h[fields[i].Name] = fields[i].Value
	}
}

// ErrorHeader is what every error answer carries.
var ErrorHeader = []Field{NewField("Content-Type", "application/json"), NewField("Cache-Control", "no-store")}

// ETagMatch applies RFC 9110's weak comparison for If-None-Match.
func ETagMatch(values []string, etag string) bool {
	for _, v := range values {
		for v != "" {
			var tag string
			tag, v, _ = strings.Cut(v, ",")
			tag = strings.TrimSpace(tag)
			if tag == "*" || strings.TrimPrefix(tag, "W/") == etag {
				return true
			}
		}
	}
	return false
}
