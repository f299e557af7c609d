package catalog

import (
	"encoding/json"
	"reflect"
	"testing"
)

func TestMergeOverlay(t *testing.T) {
	t.Parallel()
	parse := func(s string) []any {
		var v []any
		if err := json.Unmarshal([]byte(s), &v); err != nil {
			t.Fatal(err)
		}
		return v
	}
	for _, tc := range []struct{ name, base, over, want string }{
		{"by uuid, other fields kept",
			`[{"uuid":"a","displayName":"A","x":1},{"uuid":"b","displayName":"B"}]`,
			`[{"uuid":"b","displayName":"Be"}]`,
			`[{"uuid":"a","displayName":"A","x":1},{"uuid":"b","displayName":"Be"}]`},
		{"nested by uuid",
			`[{"uuid":"w","skins":[{"uuid":"s1","displayName":"S1"},{"uuid":"s2","displayName":"S2"}]}]`,
			`[{"uuid":"w","skins":[{"uuid":"s2","displayName":"Ess2"}]}]`,
			`[{"uuid":"w","skins":[{"uuid":"s1","displayName":"S1"},{"uuid":"s2","displayName":"Ess2"}]}]`},
		{"tiers by tier",
			`[{"uuid":"t","tiers":[{"tier":0,"tierName":"U"},{"tier":3,"tierName":"I"}]}]`,
			`[{"uuid":"t","tiers":[{"tier":3,"tierName":"Eisen"}]}]`,
			`[{"uuid":"t","tiers":[{"tier":0,"tierName":"U"},{"tier":3,"tierName":"Eisen"}]}]`},
		{"callouts by position",
			`[{"uuid":"m","callouts":[{"regionName":"A"},{"regionName":"B"}]}]`,
			`[{"uuid":"m","callouts":[{},{"regionName":"Be"}]}]`,
			`[{"uuid":"m","callouts":[{"regionName":"A"},{"regionName":"Be"}]}]`},
		{"unknown uuid adds nothing",
			`[{"uuid":"a","displayName":"A"}]`,
			`[{"uuid":"zz","displayName":"Z"}]`,
			`[{"uuid":"a","displayName":"A"}]`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			base := parse(tc.base)
			got := Translate(base, parse(tc.over))
			if want := parse(tc.want); !reflect.DeepEqual(got, want) {
				t.Errorf("got %v, want %v", got, want)
			}
			if !reflect.DeepEqual(base, parse(tc.base)) {
				t.Error("the en-US items were modified")
			}
		})
	}
}

func TestFillDefaultsNeverInventsIdentity(t *testing.T) {
	t.Parallel()
	sc, err := componentSchema("Theme")
	if err != nil {
		t.Fatal(err)
	}
	item := map[string]any{"displayName": "X", "assetPath": "p"}
	fills := map[Fill]int{}
	fillDefaults(sc, "Theme", item, fills)
	if _, ok := item["uuid"]; ok {
		t.Error("a missing uuid was filled in")
	}
	if item["displayIcon"] != nil || fills[Fill{"Theme", "displayIcon", "<nil>"}] != 1 {
		t.Errorf("nullable displayIcon not filled with null: %v %v", item, fills)
	}
}

// TestNullTextBecomesEmpty: localized text the contract types as a string is ""
// when the source has null, and the fill is counted; nullable text stays null.
func TestNullTextBecomesEmpty(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		c          Category
		item, want string
		fill       Fill
	}{
		{PlayerTitles, `{"uuid":"a","displayName":"T","titleText":null,"isHiddenIfNotOwned":false,"assetPath":"p"}`,
			`{"uuid":"a","displayName":"T","titleText":"","isHiddenIfNotOwned":false,"assetPath":"p"}`,
			Fill{"PlayerTitle", "titleText", `"" (null in the source)`}},
		{Weapons, `{"uuid":"w","skins":[{"uuid":"s","levels":[{"uuid":"l","displayName":null}]}]}`,
			`{"uuid":"w","skins":[{"uuid":"s","levels":[{"uuid":"l","displayName":""}]}]}`,
			Fill{"SkinLevel", "displayName", `"" (null in the source)`}},
		{Maps, `{"uuid":"m","narrativeDescription":null}`, `{"uuid":"m","narrativeDescription":null}`, Fill{}},
	} {
		var item, want map[string]any
		if err := json.Unmarshal([]byte(tc.item), &item); err != nil {
			t.Fatal(err)
		}
		_ = json.Unmarshal([]byte(tc.want), &want)
		fills := map[Fill]int{}
		sc, err := componentSchema(tc.c.Schema())
		if err != nil {
			t.Fatal(err)
		}
		fillDefaults(sc, tc.c.Schema(), item, fills)
		for k, v := range want {
			if !reflect.DeepEqual(pick(item, k), v) {
				t.Errorf("%s: %s = %#v, want %#v", tc.c.Name(), k, pick(item, k), v)
			}
		}
		if tc.fill != (Fill{}) && fills[tc.fill] != 1 {
			t.Errorf("%s: fills %v, want %v once", tc.c.Name(), fills, tc.fill)
		}
	}
}

// pick returns a top-level field, with nested skins reduced to what the test wrote.
func pick(m map[string]any, k string) any {
	v := m[k]
	if k != "skins" {
		return v
	}
	sk := v.([]any)[0].(map[string]any)
	lv := sk["levels"].([]any)[0].(map[string]any)
	return []any{map[string]any{"uuid": sk["uuid"], "levels": []any{map[string]any{"uuid": lv["uuid"], "displayName": lv["displayName"]}}}}
}
