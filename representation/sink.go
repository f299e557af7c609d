package representation

import "net/http"

// Sink is an answer being made by a server: net/http's (HTTPSink) or
// fasthttp's (package edge). Send and the error writers decide status, fields
// and body; a Sink only puts them where its server sends them from.
// Implementations are small values, so that a Sink passed to Send costs no
// allocation.
type Sink interface {
	// Set sets a header field, replacing any of its name.
	Set(f *Field)
	// Body makes enc's bytes the answer's body, or returns them for Send to
	// send after the head. An error: the stored bytes failed their check,
	// and nothing is set.
	Body(enc *Encoded) ([]byte, error)
	// Send completes the answer: status, then body, the bytes Body returned
	// (enc not nil) or those of an answer made for this request alone (enc
	// nil). No body for a HEAD.
	Send(status int, enc *Encoded, body []byte)
}

// Send answers r through s to a request with these Accept-Encoding and
// If-None-Match values: the one place where a Response's status, header
// fields and body are decided, for every server (no body for a 304). It
// returns the status and the representation sent. An error: the stored
// bytes failed their check, and nothing is sent. It allocates nothing for
// bytes in memory or in the cache.
func Send[S Sink](s S, r *Response, acceptEncoding, ifNoneMatch []string) (int, *Encoded, error) {
	status, enc := r.Negotiate(acceptEncoding, ifNoneMatch)
	var body []byte
	if status != http.StatusNotModified {
		var err error
		if body, err = s.Body(enc); err != nil {
			return status, enc, err
		}
	}
	var buf [MaxFields]*Field
	for _, f := range r.Fields(status, enc, buf[:0]) {
		s.Set(f)
	}
	s.Send(status, enc, body)
	return status, enc, nil
}

// SetAll sets fields on s.
func SetAll[S Sink](s S, fields []Field) {
	for i := range fields {
		s.Set(&fields[i])
	}
}

// HTTPSink is a net/http answer as a Sink. Req may be nil: not a HEAD.
// HeadOnly: the caller sends the body itself (Body reads nothing).
type HTTPSink struct {
	W        http.ResponseWriter
	Req      *http.Request
	HeadOnly bool
}

func (s HTTPSink) head() bool { return s.Req != nil && s.Req.Method == http.MethodHead }

// Set sets f in W's header.
func (s HTTPSink) Set(f *Field) { s.W.Header()[f.Name] = f.Value }

// Body reads enc's bytes before anything is written, so that bytes failing
// their check leave the answer unwritten.
func (s HTTPSink) Body(enc *Encoded) ([]byte, error) {
	if s.HeadOnly || s.head() {
		return nil, nil
	}
	return enc.Read()
}

// Send writes the head and the body. A body made for this request alone
// replaces any Content-Length and ETag set before (an error answer in place
// of a body).
func (s HTTPSink) Send(status int, enc *Encoded, body []byte) {
	h := s.W.Header()
	switch {
	case enc == nil:
		delete(h, "Content-Length")
		delete(h, "Etag")
	case status != http.StatusNotModified:
		h["Content-Length"] = enc.LengthHeader
	}
	s.W.WriteHeader(status)
	if body != nil && !s.head() {
		_, _ = s.W.Write(body)
	}
}
