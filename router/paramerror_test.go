package router

import (
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/refdata/refdata/gen"
	"github.com/refdata/refdata/router/apitest"
)

// TestParamErrorSaysOurs: every kind of error the generated router reports for
// a parameter is answered with our message, naming the parameter, in the
// Error schema, and none of the binder's own text (the route tests reach only
// the repeated parameter; the others are built here).
func TestParamErrorSaysOurs(t *testing.T) {
	t.Parallel()
	check := apitest.New(t)
	inner := errors.New("binder internals: *uuid.UUID")
	for _, tc := range []struct {
		name string
		err  error
		says string
	}{
		{"required", &gen.RequiredParamError{ParamName: "language"}, `parameter "language" is required`},
		{"too many", &gen.TooManyValuesForParamError{ParamName: "from", Count: 2}, `parameter "from" is given more than once`},
		{"format", &gen.InvalidParamFormatError{ParamName: "uuid", Err: inner}, `parameter "uuid" is not in the form`},
		{"unmarshaling", &gen.UnmarshalingParamError{ParamName: "to", Err: inner}, "a request parameter is not in the form"},
		{"anything else", inner, "a request parameter is not in the form"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			req := httptest.NewRequest(http.MethodGet, "/v1/weapons", nil)
			rec := httptest.NewRecorder()
			paramError(rec, req, tc.err)
			res := rec.Result()
			body := rec.Body.Bytes()
			if res.StatusCode != http.StatusBadRequest {
				t.Fatalf("status %d, want 400", res.StatusCode)
			}
			check.CheckError(t, req, res, body)
			var e struct{ Error string }
			if err := json.Unmarshal(body, &e); err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(e.Error, tc.says) {
				t.Errorf("message %q does not say %q", e.Error, tc.says)
			}
			if strings.Contains(e.Error, "internals") || strings.Contains(e.Error, "uuid.UUID") {
				t.Errorf("message %q passes on the binder's text", e.Error)
			}
		})
	}
}
