package catalog

import (
	"errors"
	"fmt"
)

// The error codes every layer speaks (package handler maps them to statuses). An
// error without one is internal: its text is for the log, never a client.
const (
	EINVALID     = "invalid"     // the request or input is malformed
	ENOTFOUND    = "not_found"   // no such item, version or diff
	EUNAVAILABLE = "unavailable" // nothing to serve yet, or not ready
	ELIMIT       = "limit"       // one client asks for more at once than a server gives one
	EENCODING    = "encoding"    // the request takes none of the encodings a body is sent in
	EINTERNAL    = "internal"    // anything else
)

// Error is an error meant for whoever asked: a code and a message that says
// what to do; Err is an internal error's cause, for the log only.
type Error struct {
	Code    string
	Message string
	Err     error
}

func (e *Error) Error() string {
	if e.Err != nil {
		return e.Message + ": " + e.Err.Error()
	}
	return e.Message
}

func (e *Error) Unwrap() error { return e.Err }

// Internal is an internal error: msg is what a client may read, err the cause.
func Internal(msg string, err error) error {
	return &Error{Code: EINTERNAL, Message: msg, Err: err}
}

// Errorf returns an *Error with code and a formatted message.
func Errorf(code, format string, args ...any) *Error {
	return &Error{Code: code, Message: fmt.Sprintf(format, args...)}
}

// ErrorCode is the code of the first *Error in err's chain, EINTERNAL when
// there is none, "" for nil.
func ErrorCode(err error) string {
	if e, ok := errors.AsType[*Error](err); ok {
		return e.Code
	}
	if err == nil {
		return ""
	}
	return EINTERNAL
}

// ErrorMessage is the message of the first *Error in err's chain, or a
// generic one: an internal error's text is not for clients.
func ErrorMessage(err error) string {
	if e, ok := errors.AsType[*Error](err); ok {
		return e.Message
	}
	return "internal error"
}
