package pipeline_test

import (
	"encoding/json"
	"errors"
	"maps"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/refdata/refdata/pipeline"
)

// edit rewrites the data of an enveloped file of a snapshot directory.
func edit(t *testing.T, dir, file string, f func(data any) any) {
	t.Helper()
	p := filepath.Join(dir, file)
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	var v any
	if err := json.Unmarshal(b, &v); err != nil {
		t.Fatal(err)
	}
	if m, ok := v.(map[string]any); ok && m["data"] != nil {
		m["data"] = f(m["data"])
	} else {
		v = f(v)
	}
	out, _ := json.Marshal(v)
	if err := os.WriteFile(p, out, 0o644); err != nil {
		t.Fatal(err)
	}
}

func item(data any, i int) map[string]any { return data.([]any)[i].(map[string]any) }

func write(t *testing.T, dir, file, content string) {
	t.Helper()
	if err := os.WriteFile(filepath.Join(dir, file), []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestRejections: each kind of bad snapshot is refused with a report naming the
// problem, and the store — active pointer and every byte — is unchanged.
func TestRejections(t *testing.T) {
	base := t.TempDir()
	mustImport(t, openStore(t, base), fixtureDir(t, "14"))
	good := fixtureDir(t, "15")

	cases := []struct {
		name   string
		break_ func(t *testing.T, dir string)
		want   string // in the report
	}{
		{"malformed JSON", func(t *testing.T, d string) { write(t, d, "en-US/maps.json", `{"status":200,"data":[{]}`) }, "en-US/maps.json at /: malformed JSON"},
		{"truncated file", func(t *testing.T, d string) {
			b, _ := os.ReadFile(filepath.Join(d, "en-US/weapons.json"))
			write(t, d, "en-US/weapons.json", string(b[:len(b)/2]))
		}, "en-US/weapons.json at /: truncated file"},
		{"wrong envelope status", func(t *testing.T, d string) { write(t, d, "en-US/flex.json", `{"status":404,"data":[]}`) }, "wrong envelope: status is 404"},
		{"wrong envelope data", func(t *testing.T, d string) { write(t, d, "en-US/events.json", `{"status":200,"data":{"uuid":"x"}}`) }, "data is not an array"},
		{"duplicate uuid", func(t *testing.T, d string) {
			edit(t, d, "en-US/buddies.json", func(v any) any { a := v.([]any); return append(a, a[0]) })
		}, "duplicate buddy uuid"},
		{"duplicate nested chroma uuid", func(t *testing.T, d string) {
			edit(t, d, "en-US/weapons.json", func(v any) any {
				sk := item(v, 0)["skins"].([]any)[0].(map[string]any)
				ch := sk["chromas"].([]any)
				sk["chromas"] = append(ch, ch[0])
				return v
			})
		}, "duplicate skin chroma uuid"},
		{"missing uuid", func(t *testing.T, d string) {
			edit(t, d, "en-US/maps.json", func(v any) any { delete(item(v, 1), "uuid"); return v })
		}, `property "uuid" is missing`},
		{"uuid not a UUID", func(t *testing.T, d string) {
			edit(t, d, "en-US/playertitles.json", func(v any) any { item(v, 0)["uuid"] = "../../etc/passwd"; return v })
		}, "is not 8-4-4-4-12 hexadecimal digits"},
		{"wrong type", func(t *testing.T, d string) {
			edit(t, d, "en-US/weapons.json", func(v any) any { item(v, 2)["displayName"] = 42.0; return v })
		}, "/2/displayName: value must be a string"},
		{"missing required number", func(t *testing.T, d string) {
			edit(t, d, "en-US/maps.json", func(v any) any { delete(item(v, 0), "xMultiplier"); return v })
		}, `property "xMultiplier" is missing`},
		{"item not an object", func(t *testing.T, d string) {
			edit(t, d, "en-US/currencies.json", func(v any) any { return append(v.([]any), "Radianite") })
		}, "item is a string, want an object"},
		{"bad manifestId", func(t *testing.T, d string) {
			edit(t, d, "version.json", func(v any) any { v.(map[string]any)["manifestId"] = "05e83eb5e32657b9/.."; return v })
		}, "version.json at /manifestId"},
		{"missing version record", func(t *testing.T, d string) { os.Remove(filepath.Join(d, "version.json")) }, "version.json at /: missing"},
		{"translation of an unknown item", func(t *testing.T, d string) {
			edit(t, d, "de-DE/maps.json", func(v any) any {
				return append(v.([]any), map[string]any{"uuid": "00000000-0000-0000-0000-000000000000", "displayName": "Nirgendwo"})
			})
		}, "translation names no en-US item"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			storeDir := filepath.Join(t.TempDir(), "store")
			copyDir(t, base, storeDir)
			before := treeHash(t, storeDir)
			snap := filepath.Join(t.TempDir(), "snap")
			copyDir(t, good, snap)
			tc.break_(t, snap)

			rep, err := pipeline.Import(openStore(t, storeDir), snap, pipeline.Options{})
			if !errors.Is(err, pipeline.ErrRejected) {
				t.Fatalf("err = %v, want a rejection", err)
			}
			var b strings.Builder
			rep.Write(&b)
			if rep.Outcome != "rejected" || rep.NumRejections == 0 || !strings.Contains(b.String(), tc.want) {
				t.Errorf("report does not say %q:\n%s", tc.want, b.String())
			}
			if after := treeHash(t, storeDir); !maps.Equal(before, after) {
				t.Errorf("the store changed:\nbefore %v\nafter  %v", before, after)
			}
		})
	}
}

// TestUnknownFieldsAreReported: a field the schema does not know is counted,
// not a rejection.
func TestUnknownFieldsAreReported(t *testing.T) {
	snap := fixtureDir(t, "15")
	edit(t, snap, "en-US/maps.json", func(v any) any {
		item(v, 0)["newPatchField"] = "x"
		item(v, 1)["callouts"].([]any)[0].(map[string]any)["elevation"] = 3.0
		return v
	})
	rep := mustImport(t, openStore(t, t.TempDir()), snap)
	var b strings.Builder
	rep.Write(&b)
	if rep.NumUnknown != 2 || !strings.Contains(b.String(), "/0/newPatchField") || !strings.Contains(b.String(), "/1/callouts/0/elevation") {
		t.Errorf("unknown fields not reported as expected (%d):\n%s", rep.NumUnknown, b.String())
	}
}
