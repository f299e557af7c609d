package pipeline_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"maps"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/refdata/refdata/catalog"
	"github.com/refdata/refdata/pipeline"
	"github.com/refdata/refdata/router/apitest"
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
	t.Parallel()
	base, _ := baseStore(t, "14")
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
			t.Parallel()
			storeDir := filepath.Join(t.TempDir(), "store")
			copyDir(t, base, storeDir)
			before := treeHash(t, storeDir)
			snap := filepath.Join(t.TempDir(), "snap")
			copyDir(t, good, snap)
			tc.break_(t, snap)

			rep, err := pipeline.Import(openStore(t, storeDir), snap, options())
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

// TestUnknownFieldsAreReported: a field the schema does not know is reported
// once per catalog and field (with how many items carry it, one of them and
// the version it was first seen in), is not a rejection, and is served as the
// upstream sent it in every locale's body and list and in language=all.
func TestUnknownFieldsAreReported(t *testing.T) {
	t.Parallel()
	snap := fixtureDir(t, "15")
	var first, second string
	edit(t, snap, "en-US/maps.json", func(v any) any {
		item(v, 0)["newPatchField"] = "x"
		item(v, 1)["callouts"].([]any)[0].(map[string]any)["elevation"] = 3.0
		item(v, 2)["callouts"].([]any)[0].(map[string]any)["elevation"] = 4.0
		first, second = item(v, 0)["uuid"].(string), item(v, 1)["uuid"].(string)
		return v
	})
	st := openStore(t, t.TempDir())
	rep := mustImport(t, st, snap)
	want := []catalog.Unknown{
		{Category: catalog.Maps, Field: "callouts[].elevation", Items: 2, Example: second, FirstSeen: rep.ManifestID},
		{Category: catalog.Maps, Field: "newPatchField", Items: 1, Example: first, FirstSeen: rep.ManifestID},
	}
	got := slices.Clone(rep.Unknown)
	slices.SortFunc(got, func(a, b catalog.Unknown) int { return strings.Compare(a.Field, b.Field) })
	if !reflect.DeepEqual(got, want) {
		t.Errorf("unknown fields %+v, want %+v", got, want)
	}
	var b strings.Builder
	rep.Write(&b)
	for _, u := range want {
		if !strings.Contains(b.String(), u.String()) {
			t.Errorf("the report does not name %s:\n%s", u, b.String())
		}
	}
	// Served as sent, in the stored edition: in the item's body and the
	// list in every locale — those the maps are translated in too — and in
	// language=all (the same text in every locale: as sent, not by locale).
	ed, _, err := loadEdition(st, rep.ManifestID)
	if err != nil {
		t.Fatal(err)
	}
	translated := 0
	for loc := range catalog.NumLocales + 1 {
		for _, tc := range []struct{ uuid, want string }{
			{first, `"newPatchField":"x"`},
			{second, `"elevation":3`},
		} {
			u, ok := catalog.ParseUUID(tc.uuid)
			if !ok {
				t.Fatalf("%q is not a uuid", tc.uuid)
			}
			body := ed.Item(catalog.Maps, u, loc)
			if body == nil || !bytes.Contains(apitest.JSON(t, body), []byte(tc.want)) {
				t.Errorf("maps/%s?language=%s does not serve %s", tc.uuid, langName(loc), tc.want)
			}
			if loc != catalog.DefaultLocale && loc != catalog.AllLocales && body != ed.Item(catalog.Maps, u, catalog.DefaultLocale) {
				translated++
			}
		}
		list := apitest.JSON(t, ed.List(catalog.Maps, loc))
		if n := bytes.Count(list, []byte(`"newPatchField":`)); n != 1 {
			t.Errorf("maps?language=%s holds newPatchField %d times, want once", langName(loc), n)
		}
		if n := bytes.Count(list, []byte(`"elevation":`)); n != 2 {
			t.Errorf("maps?language=%s holds elevation %d times, want twice", langName(loc), n)
		}
	}
	if translated == 0 {
		t.Error("no locale has its own body of the maps: translated bodies are not checked")
	}
}
