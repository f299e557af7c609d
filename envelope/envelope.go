// Package envelope is the API's body format, {"status":200,"data":…}, for
// everything that reads or writes it: snapshot files, an upstream's answers,
// the files sync writes, the tests. It imports nothing of ours.
//
// A body is one JSON value. An object with a "status" key is an envelope,
// whose status must be 200 and whose "data" must be present; any other value
// is bare data. An upstream's answer must be an envelope.
package envelope

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"unicode/utf8"
)

// Error says why a body is not what the rules allow, with a JSON pointer into
// it ("" for the whole body).
type Error struct {
	Pointer string
	Reason  string
}

func (e *Error) Error() string { return e.Reason }

// Decode reads one JSON value from b and returns its data. json.Unmarshal,
// unlike a Decoder, makes no second copy of b.
func Decode(b []byte) (any, error) {
	var v any
	if err := json.Unmarshal(b, &v); err != nil {
		var syn *json.SyntaxError
		if errors.As(err, &syn) && strings.HasSuffix(syn.Error(), "after top-level value") {
			return nil, &Error{Reason: "malformed JSON: data after the top-level value"}
		}
		return nil, syntaxError(err)
	}
	return Open(v)
}

// DecodeArray is Decode for a body whose data must be an array.
func DecodeArray(b []byte) ([]any, error) {
	v, err := Decode(b)
	if err != nil {
		return nil, err
	}
	items, ok := v.([]any)
	if !ok {
		return nil, &Error{Reason: "wrong envelope: data is not an array"}
	}
	return items, nil
}

// Open returns the data of a decoded value: an envelope's "data", or the value
// itself when it is not an envelope.
func Open(v any) (any, error) {
	m, ok := v.(map[string]any)
	if !ok {
		return v, nil
	}
	st, has := m["status"]
	if !has {
		return v, nil
	}
	if st != float64(200) {
		return nil, badStatus(st)
	}
	data, has := m["data"]
	if !has {
		return nil, &Error{Pointer: "/data", Reason: `wrong envelope: "status" but no "data"`}
	}
	return data, nil
}

// Kind is the JSON type the data of an answer must have.
type Kind byte

// The kinds an answer's data can be required to have.
const (
	Array  Kind = '['
	Object Kind = '{'
)

func (k Kind) String() string {
	if k == Array {
		return "array"
	}
	return "object"
}

// Raw checks an upstream's answer — valid UTF-8, an envelope with status 200,
// data of kind k — and returns the data's bytes as sent.
func Raw(b []byte, k Kind) (json.RawMessage, error) {
	if !utf8.Valid(b) {
		return nil, &Error{Reason: "body is not valid UTF-8"}
	}
	var env struct {
		Status any             `json:"status"`
		Data   json.RawMessage `json:"data"`
	}
	if err := json.Unmarshal(b, &env); err != nil {
		if _, ok := errors.AsType[*json.UnmarshalTypeError](err); ok { // valid JSON, not an object
			return nil, &Error{Reason: `wrong envelope: not an object; want {"status":200,"data":…}`}
		}
		return nil, syntaxError(err)
	}
	switch {
	case env.Status == nil:
		return nil, &Error{Pointer: "/status", Reason: `wrong envelope: no "status"; want {"status":200,"data":…}`}
	case env.Status != float64(200):
		return nil, badStatus(env.Status)
	}
	data := bytes.TrimLeft(env.Data, " \t\r\n")
	if len(data) == 0 || data[0] != byte(k) {
		return nil, &Error{Pointer: "/data", Reason: "wrong envelope: data is not a JSON " + k.String()}
	}
	return data, nil
}

// Marshal is how refdata writes an envelope: {"data":…,"status":200} and a
// newline, with <, > and & as they are (the bodies are data, not HTML).
func Marshal(data any) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(map[string]any{"status": 200, "data": data}); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// badStatus says what the status was, as JSON.
func badStatus(st any) *Error {
	b, _ := json.Marshal(st)
	return &Error{Pointer: "/status", Reason: fmt.Sprintf("wrong envelope: status is %s, want 200", b)}
}

func syntaxError(err error) *Error { return &Error{Reason: JSONReason(err)} }

// JSONReason words a JSON decoding error for a report: "truncated file: JSON
// ends early" when the text stops short, else "malformed JSON: …".
func JSONReason(err error) string {
	if errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF) || strings.HasSuffix(err.Error(), "unexpected end of JSON input") {
		return "truncated file: JSON ends early"
	}
	return "malformed JSON: " + err.Error()
}
