package catalog_test

import (
	"errors"
	"fmt"
	"testing"

	"github.com/refdata/refdata/catalog"
)

// TestErrors: an error's code and client message survive wrapping; an error
// without a code is internal and its text is not a client's to read.
func TestErrors(t *testing.T) {
	t.Parallel()
	cause := errors.New("disk on fire")
	for _, tc := range []struct {
		name      string
		err       error
		code, msg string
		text      string // Error()
	}{
		{"nil", nil, "", "", ""},
		{"not found", catalog.Errorf(catalog.ENOTFOUND, "no weapon %s", "x"), catalog.ENOTFOUND, "no weapon x", "no weapon x"},
		{"wrapped", fmt.Errorf("serve: %w", catalog.Errorf(catalog.EINVALID, "bad locale")), catalog.EINVALID, "bad locale", "serve: bad locale"},
		{"unavailable", catalog.Errorf(catalog.EUNAVAILABLE, "not ready"), catalog.EUNAVAILABLE, "not ready", "not ready"},
		{"internal", catalog.Internal("cannot read the version", cause), catalog.EINTERNAL, "cannot read the version", "cannot read the version: disk on fire"},
		{"no code", cause, catalog.EINTERNAL, "internal error", "disk on fire"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			if got := catalog.ErrorCode(tc.err); got != tc.code {
				t.Errorf("code %q, want %q", got, tc.code)
			}
			if tc.err == nil {
				return
			}
			if got := catalog.ErrorMessage(tc.err); got != tc.msg {
				t.Errorf("message %q, want %q", got, tc.msg)
			}
			if got := tc.err.Error(); got != tc.text {
				t.Errorf("Error() %q, want %q", got, tc.text)
			}
		})
	}
	if err := catalog.Internal("m", cause); !errors.Is(err, cause) {
		t.Error("an internal error does not unwrap to its cause")
	}
}
