package envelope_test

import (
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/refdata/refdata/envelope"
)

// TestDecode: the rules for snapshot files, enveloped or bare.
func TestDecode(t *testing.T) {
	for _, tc := range []struct {
		in      string
		want    any
		pointer string // of the error; "-" for none
		reason  string
	}{
		{`{"status":200,"data":[1]}`, []any{1.0}, "-", ""},
		{`{"data":{"a":1},"status":200}`, map[string]any{"a": 1.0}, "-", ""},
		{`[{"uuid":"x"}]`, []any{map[string]any{"uuid": "x"}}, "-", ""},
		{`{"manifestId":"A"}`, map[string]any{"manifestId": "A"}, "-", ""}, // a bare object
		{`{"status":200,"data":null}`, nil, "-", ""},
		{`{"status":404,"data":[]}`, nil, "/status", "wrong envelope: status is 404, want 200"},
		{`{"status":"200","data":[]}`, nil, "/status", "wrong envelope: status is \"200\", want 200"},
		{`{"status":200}`, nil, "/data", `wrong envelope: "status" but no "data"`},
		{`{"status":200,"data":[`, nil, "", "truncated file: JSON ends early"},
		{``, nil, "", "truncated file: JSON ends early"},
		{`{"status":200,"data":[{]}`, nil, "", "malformed JSON: "},
		{`[1] [2]`, nil, "", "malformed JSON: data after the top-level value"},
	} {
		got, err := envelope.Decode([]byte(tc.in))
		if tc.pointer == "-" {
			if err != nil || !reflect.DeepEqual(got, tc.want) {
				t.Errorf("Decode(%s) = %v, %v; want %v", tc.in, got, err, tc.want)
			}
			continue
		}
		var e *envelope.Error
		if !errors.As(err, &e) || e.Pointer != tc.pointer || !strings.HasPrefix(e.Reason, tc.reason) {
			t.Errorf("Decode(%s): error %#v, want %q at %q", tc.in, err, tc.reason, tc.pointer)
		}
	}
}

// TestRaw: an upstream's answer must be an envelope of valid UTF-8 whose data
// has the kind asked for; the data comes back as sent.
func TestRaw(t *testing.T) {
	for _, tc := range []struct {
		in     string
		kind   envelope.Kind
		want   string
		reason string
	}{
		{`{"status":200,"data": [ {"a":1} ]}`, envelope.Array, `[ {"a":1} ]`, ""},
		{`{"status":200,"data":{"manifestId":"A"}}`, envelope.Object, `{"manifestId":"A"}`, ""},
		{`[{"a":1}]`, envelope.Array, "", "wrong envelope: not an object"},
		{`{"data":[]}`, envelope.Array, "", `wrong envelope: no "status"`},
		{`{"status":"200","data":[]}`, envelope.Array, "", "wrong envelope: status is \"200\", want 200"},
		{`{"status":200,"data":{}}`, envelope.Array, "", "wrong envelope: data is not a JSON array"},
		{`{"status":200,"data":[]}`, envelope.Object, "", "wrong envelope: data is not a JSON object"},
		{`{"status":200}`, envelope.Array, "", "wrong envelope: data is not a JSON array"},
		{`{"status":500,"data":[]}`, envelope.Array, "", "wrong envelope: status is 500, want 200"},
		{`{"status":200,"data":[`, envelope.Array, "", "truncated file: JSON ends early"},
		{"{\"status\":200,\"data\":[\"\xff\"]}", envelope.Array, "", "body is not valid UTF-8"},
	} {
		got, err := envelope.Raw([]byte(tc.in), tc.kind)
		switch {
		case tc.reason == "" && (err != nil || string(got) != tc.want):
			t.Errorf("Raw(%s) = %s, %v; want %s", tc.in, got, err, tc.want)
		case tc.reason != "" && (err == nil || !strings.HasPrefix(err.Error(), tc.reason)):
			t.Errorf("Raw(%s): %v, want %q", tc.in, err, tc.reason)
		}
	}
}

// TestMarshal: what refdata writes reads back through Decode and Raw, with
// HTML characters as they are.
func TestMarshal(t *testing.T) {
	data := []any{map[string]any{"displayName": "R&D <Prime>"}}
	b, err := envelope.Marshal(data)
	if err != nil {
		t.Fatal(err)
	}
	if want := `{"data":[{"displayName":"R&D <Prime>"}],"status":200}` + "\n"; string(b) != want {
		t.Errorf("Marshal = %q, want %q", b, want)
	}
	got, err := envelope.Decode(b)
	if err != nil || !reflect.DeepEqual(got, data) {
		t.Errorf("Decode(Marshal) = %v, %v", got, err)
	}
	raw, err := envelope.Raw(b, envelope.Array)
	if err != nil || !json.Valid(raw) {
		t.Errorf("Raw(Marshal) = %s, %v", raw, err)
	}
	if _, err := envelope.Marshal(func() {}); err == nil {
		t.Error("Marshal of a func gave no error")
	}
}
