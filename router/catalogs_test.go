package router_test

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/refdata/refdata/catalog"
	"github.com/refdata/refdata/edition"
	"github.com/refdata/refdata/router/apitest"
)

// items reads a list body's items, by uuid, and their uuids in order.
func items(t *testing.T, target string, body []byte) (map[string]map[string]json.RawMessage, []string) {
	t.Helper()
	var env struct{ Data []map[string]json.RawMessage }
	if err := json.Unmarshal(body, &env); err != nil {
		t.Fatalf("GET %s: %v", target, err)
	}
	byID := map[string]map[string]json.RawMessage{}
	var order []string
	for _, it := range env.Data {
		var u string
		if err := json.Unmarshal(it["uuid"], &u); err != nil || u == "" {
			t.Fatalf("GET %s: an item without a uuid", target)
		}
		byID[u] = it
		order = append(order, u)
	}
	return byID, order
}

// TestNewCatalogs: the catalogs content tiers, gear, ceremonies, missions and
// objectives serve the sample's items — the list, each item by its uuid (in
// any letter case) as the list has it, language=all with each localized text
// keyed by the 18 codes, and, since no locale has text of its own for them,
// the en-US bodies saying en-US in the other locales; an unknown uuid is a
// 404 that says where to list them. (TestEveryOperation walks their statuses;
// this checks what the bodies hold.)
func TestNewCatalogs(t *testing.T) {
	t.Parallel()
	ed := sample(t)
	check := apitest.New(t)
	h := testRouter(t, edition.Serve(ed), nil)
	fetch := func(t *testing.T, target string) (*http.Response, []byte) {
		t.Helper()
		res := check.Do(t, h, get(target))
		body, _ := io.ReadAll(res.Body)
		if res.StatusCode != http.StatusOK {
			t.Fatalf("GET %s: %d %.300s", target, res.StatusCode, body)
		}
		return res, body
	}
	for _, tc := range []struct {
		c         catalog.Category
		localized []string // the fields openapi.yaml marks x-localized
	}{
		{catalog.ContentTiers, []string{"displayName"}},
		{catalog.Gear, []string{"displayName", "description"}},
		{catalog.Ceremonies, []string{"displayName"}},
		{catalog.Missions, []string{"displayName", "title"}},
		{catalog.Objectives, []string{"directive"}},
	} {
		t.Run(tc.c.Name(), func(t *testing.T) {
			t.Parallel()
			base := "/v1/" + tc.c.Name()
			res, enBody := fetch(t, base)
			en, order := items(t, base, enBody)
			if len(order) == 0 {
				t.Fatalf("GET %s: no items", base)
			}
			var want []string
			for _, u := range ed.UUIDs(tc.c) {
				want = append(want, u.String())
			}
			if !slices.Equal(order, want) {
				t.Errorf("GET %s: items %v, want the edition's %v", base, order, want)
			}
			if res.Header.Get("Content-Language") != "en-US" || res.Header.Get("X-Data-Version") != ed.ManifestID {
				t.Errorf("GET %s: Content-Language %q, X-Data-Version %q", base, res.Header.Get("Content-Language"), res.Header.Get("X-Data-Version"))
			}
			for i, u := range order {
				target := base + "/" + u
				if i == 0 {
					target = base + "/" + strings.ToUpper(u)
				}
				_, body := fetch(t, target)
				var item struct{ Data json.RawMessage }
				if err := json.Unmarshal(body, &item); err != nil {
					t.Fatal(err)
				}
				listed, _ := json.Marshal(en[u])
				var got, want any
				if err := json.Unmarshal(item.Data, &got); err != nil {
					t.Fatalf("GET %s: %v", target, err)
				}
				_ = json.Unmarshal(listed, &want)
				if !reflect.DeepEqual(got, want) {
					t.Errorf("GET %s: %s, the list has %s", target, item.Data, listed)
				}
			}
			// An unknown uuid: 404, naming the catalog's list.
			unknown := base + "/00000000-0000-0000-0000-00000000000f"
			res = check.Do(t, h, get(unknown))
			msg, _ := io.ReadAll(res.Body)
			if res.StatusCode != http.StatusNotFound || !bytes.Contains(msg, []byte(tc.c.Noun())) || !bytes.Contains(msg, []byte(base)) {
				t.Errorf("GET %s: %d %s, want 404 naming the %s and %s", unknown, res.StatusCode, msg, tc.c.Noun(), base)
			}
			// language=all: the same items, each localized text keyed by the 18 codes.
			res, body := fetch(t, base+"?language=all")
			all, allOrder := items(t, base+"?language=all", body)
			if !slices.Equal(allOrder, order) || res.Header.Get("Content-Language") != catalog.AllLanguages {
				t.Errorf("language=all: items %v, Content-Language %q", allOrder, res.Header.Get("Content-Language"))
			}
			texts := 0
			for _, u := range order {
				for _, f := range tc.localized {
					// A text, or null (LocalizedTextOrNull: null in every locale then).
					var enText *string
					var byLocale map[string]*string
					if err := json.Unmarshal(en[u][f], &enText); err != nil {
						t.Fatalf("%s %s: %v", u, f, err)
					}
					if err := json.Unmarshal(all[u][f], &byLocale); err != nil || len(byLocale) != catalog.NumLocales {
						t.Errorf("language=all: %s %s is %s (%v), want the %d locales", u, f, all[u][f], err, catalog.NumLocales)
						continue
					}
					for lang, text := range byLocale {
						if (text == nil) != (enText == nil) || text != nil && *text != *enText {
							t.Errorf("language=all: %s %s in %s is %s; the en-US list has %s (no locale has text of its own)", u, f, lang, all[u][f], en[u][f])
						}
					}
					if enText != nil {
						texts++
					}
				}
			}
			if texts == 0 {
				t.Errorf("no localized text in %s", base)
			}
			// No locale has text of its own: en-US's bytes, said to be en-US.
			for _, lang := range []string{"ja-JP", "pt-BR", "de-DE"} {
				target := base + "?language=" + lang
				res, got := fetch(t, target)
				if !bytes.Equal(got, enBody) {
					t.Errorf("GET %s: not the en-US body", target)
				}
				if cl := res.Header.Get("Content-Language"); cl != "en-US" {
					t.Errorf("GET %s: Content-Language %q, want en-US", target, cl)
				}
			}
		})
	}
}

// TestCatalogReferences: what the new catalogs are referenced by resolves in
// them — every non-null contentTierUuid of a skin (/v1/weapons/skins, and the
// skins nested in /v1/weapons) names a content tier of /v1/contenttiers, which
// /v1/contenttiers/{uuid} serves; every objective of a mission names an
// objective of /v1/objectives.
func TestCatalogReferences(t *testing.T) {
	t.Parallel()
	check := apitest.New(t)
	h := testRouter(t, edition.Serve(sample(t)), nil)
	fetch := func(target string) []byte {
		t.Helper()
		res := check.Do(t, h, get(target))
		body, _ := io.ReadAll(res.Body)
		if res.StatusCode != http.StatusOK {
			t.Fatalf("GET %s: %d %.300s", target, res.StatusCode, body)
		}
		return body
	}
	tiers, _ := items(t, "/v1/contenttiers", fetch("/v1/contenttiers"))
	objectives, _ := items(t, "/v1/objectives", fetch("/v1/objectives"))

	var skins struct {
		Data []struct {
			UUID            string  `json:"uuid"`
			ContentTierUUID *string `json:"contentTierUuid"`
		}
	}
	if err := json.Unmarshal(fetch("/v1/weapons/skins"), &skins); err != nil {
		t.Fatal(err)
	}
	var weapons struct {
		Data []struct {
			Skins []struct {
				UUID            string  `json:"uuid"`
				ContentTierUUID *string `json:"contentTierUuid"`
			} `json:"skins"`
		}
	}
	if err := json.Unmarshal(fetch("/v1/weapons"), &weapons); err != nil {
		t.Fatal(err)
	}
	named := map[string]int{} // content tier uuid → skins naming it
	refs, nulls := 0, 0
	resolve := func(where, skin string, tier *string) {
		if tier == nil {
			nulls++
			return
		}
		refs++
		named[*tier]++
		if tiers[*tier] == nil {
			t.Errorf("%s: skin %s names content tier %s, which /v1/contenttiers does not list", where, skin, *tier)
		}
	}
	for _, s := range skins.Data {
		resolve("/v1/weapons/skins", s.UUID, s.ContentTierUUID)
	}
	nested := 0
	for _, w := range weapons.Data {
		for _, s := range w.Skins {
			nested++
			resolve("/v1/weapons", s.UUID, s.ContentTierUUID)
		}
	}
	if refs == 0 || nulls == 0 || nested != len(skins.Data) {
		t.Errorf("%d skins with a content tier, %d without, %d nested of %d listed: want both kinds, every skin nested once", refs, nulls, nested, len(skins.Data))
	}
	for u := range named {
		var tier struct {
			Data struct {
				UUID string `json:"uuid"`
				Rank *int   `json:"rank"`
			}
		}
		if err := json.Unmarshal(fetch("/v1/contenttiers/"+u), &tier); err != nil || tier.Data.UUID != u || tier.Data.Rank == nil {
			t.Errorf("/v1/contenttiers/%s: %+v (%v)", u, tier.Data, err)
		}
	}

	var missions struct {
		Data []struct {
			UUID       string `json:"uuid"`
			Objectives []struct {
				ObjectiveUUID string `json:"objectiveUuid"`
				Value         int    `json:"value"`
			} `json:"objectives"`
			ProgressToComplete int `json:"progressToComplete"`
		}
	}
	if err := json.Unmarshal(fetch("/v1/missions"), &missions); err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, m := range missions.Data {
		for _, o := range m.Objectives {
			n++
			if objectives[o.ObjectiveUUID] == nil {
				t.Errorf("mission %s names objective %s, which /v1/objectives does not list", m.UUID, o.ObjectiveUUID)
			}
		}
	}
	if n == 0 {
		t.Error("no mission names an objective")
	}
}
