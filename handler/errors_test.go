package handler

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/refdata/refdata/catalog"
	"github.com/refdata/refdata/router/apitest"
)

// TestFail is the error table: each catalog error code is answered with its
// status and the error envelope carrying the error's message. An internal
// error's text (its cause names files) never reaches the client: the client
// gets a request id, and the log has the cause under that id.
func TestFail(t *testing.T) {
	t.Parallel()
	check := apitest.New(t)
	const secret = "open /var/lib/refdata/diffs/A-B.json: checksum mismatch"
	for _, tc := range []struct {
		name   string
		err    error
		status int
		// message is the envelope's whole message; for an internal error,
		// what it starts with (the request id follows).
		message  string
		internal bool
	}{
		{"invalid", catalog.Errorf(catalog.EINVALID, "language %q is not supported", "xx-XX"), http.StatusBadRequest, `language "xx-XX" is not supported`, false},
		{"not found", catalog.Errorf(catalog.ENOTFOUND, "no theme with uuid %s", "aaaaaaaa-0000-0000-0000-000000000001"), http.StatusNotFound, "no theme with uuid aaaaaaaa-0000-0000-0000-000000000001", false},
		{"not found, wrapped", fmt.Errorf("repository: %w", catalog.Errorf(catalog.ENOTFOUND, "version 0000000000000000 is not retained")), http.StatusNotFound, "version 0000000000000000 is not retained", false},
		{"unavailable", catalog.Errorf(catalog.EUNAVAILABLE, "staged version not yet switched"), http.StatusServiceUnavailable, "staged version not yet switched", false},
		{"limit", catalog.Errorf(catalog.ELIMIT, "this client holds 100 waiting requests"), http.StatusTooManyRequests, "this client holds 100 waiting requests", false},
		{"encoding", catalog.Errorf(catalog.EENCODING, "send Accept-Encoding: gzip or br"), http.StatusNotAcceptable, "send Accept-Encoding: gzip or br", false},
		{"internal", catalog.Internal("the stored diff cannot be read", errors.New(secret)), http.StatusInternalServerError, "the stored diff cannot be read (request id ", true},
		{"internal, wrapped", fmt.Errorf("serve: %w", catalog.Internal("the page could not be rendered", errors.New(secret))), http.StatusInternalServerError, "the page could not be rendered (request id ", true},
		{"no code", errors.New(secret), http.StatusInternalServerError, "internal error (request id ", true},
		{"a code the table lacks", &catalog.Error{Code: "teapot", Message: "short and stout", Err: errors.New(secret)}, http.StatusInternalServerError, "short and stout (request id ", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			var logs bytes.Buffer
			req := httptest.NewRequest(http.MethodGet, "/v1/diff/latest", nil)
			rec := httptest.NewRecorder()
			// What a handler may have set before it met the error.
			rec.Header().Set("ETag", `"stale"`)
			rec.Header().Set("Content-Length", "12345")
			(&Server{Logger: slog.New(slog.NewJSONHandler(&logs, nil))}).fail(rec, req, tc.err)
			res := rec.Result()
			body := rec.Body.Bytes()
			if res.StatusCode != tc.status {
				t.Fatalf("status %d, want %d (%s)", res.StatusCode, tc.status, body)
			}
			check.CheckError(t, req, res, body)
			if cc := res.Header.Get("Cache-Control"); cc != "no-store" {
				t.Errorf("Cache-Control %q, want no-store", cc)
			}
			for _, name := range []string{"ETag", "Content-Length"} {
				if v := res.Header.Get(name); v != "" {
					t.Errorf("the error answer keeps %s %q of the body it replaced", name, v)
				}
			}
			var e struct {
				Status int    `json:"status"`
				Error  string `json:"error"`
			}
			dec := json.NewDecoder(bytes.NewReader(body))
			dec.DisallowUnknownFields()
			if err := dec.Decode(&e); err != nil {
				t.Fatalf("envelope %s: %v", body, err)
			}
			if e.Status != tc.status {
				t.Errorf("envelope status %d, want %d", e.Status, tc.status)
			}
			id := res.Header.Get("X-Request-Id")
			if !tc.internal {
				if e.Error != tc.message {
					t.Errorf("message %q, want %q", e.Error, tc.message)
				}
				if id != "" || logs.Len() != 0 {
					t.Errorf("a client's error got request id %q and was logged: %s", id, logs.String())
				}
				return
			}
			if id == "" {
				t.Fatal("an internal error without X-Request-Id")
			}
			if want := tc.message + id + ")"; !strings.HasPrefix(e.Error, want) {
				t.Errorf("message %q, want it to start %q", e.Error, want)
			}
			for _, leak := range []string{secret, "/var/lib", "checksum"} {
				if strings.Contains(string(body), leak) {
					t.Errorf("the client reads %q: %s", leak, body)
				}
			}
			var logged struct {
				RequestID string `json:"request_id"`
				Err       string `json:"err"`
				Path      string `json:"path"`
			}
			if err := json.Unmarshal(logs.Bytes(), &logged); err != nil {
				t.Fatalf("log %q: %v", logs.String(), err)
			}
			if logged.RequestID != id || !strings.Contains(logged.Err, secret) || logged.Path != "/v1/diff/latest" {
				t.Errorf("log %s: want the cause under request id %s", logs.String(), id)
			}
		})
	}
}

// TestFailCoversTheTable: TestFail has a case for every code the table maps,
// and the table maps every code catalog defines.
func TestFailCoversTheTable(t *testing.T) {
	t.Parallel()
	want := map[string]int{
		catalog.EINVALID:     http.StatusBadRequest,
		catalog.ENOTFOUND:    http.StatusNotFound,
		catalog.EUNAVAILABLE: http.StatusServiceUnavailable,
		catalog.ELIMIT:       http.StatusTooManyRequests,
		catalog.EENCODING:    http.StatusNotAcceptable,
		catalog.EINTERNAL:    http.StatusInternalServerError,
	}
	if fmt.Sprint(statuses) != fmt.Sprint(want) {
		t.Errorf("the table is %v, TestFail covers %v", statuses, want)
	}
}

// TestRequestIDsDiffer: two internal errors are told apart in the log.
func TestRequestIDsDiffer(t *testing.T) {
	t.Parallel()
	ids := map[string]bool{}
	for range 3 {
		rec := httptest.NewRecorder()
		(&Server{}).fail(rec, httptest.NewRequest(http.MethodGet, "/v1/version", nil), errors.New("boom"))
		ids[rec.Header().Get("X-Request-Id")] = true
	}
	if len(ids) != 3 || ids[""] {
		t.Errorf("request ids %v: want three different ones", ids)
	}
}

// TestFailWithoutError: a handler that fails with a nil error still answers,
// as an internal error.
func TestFailWithoutError(t *testing.T) {
	t.Parallel()
	req := httptest.NewRequest(http.MethodGet, "/v1/version", nil)
	rec := httptest.NewRecorder()
	(&Server{}).fail(rec, req, nil)
	res := rec.Result()
	apitest.New(t).CheckError(t, req, res, rec.Body.Bytes())
	if res.StatusCode != http.StatusInternalServerError || res.Header.Get("X-Request-Id") == "" {
		t.Errorf("%d, X-Request-Id %q: want 500 with a request id", res.StatusCode, res.Header.Get("X-Request-Id"))
	}
}
