package router_test

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"os"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/refdata/refdata/catalog"
	"github.com/refdata/refdata/edition"
	"github.com/refdata/refdata/handler"
	"github.com/refdata/refdata/router/apitest"
)

// handQuery is a query and the same filter written by hand: keep gets an
// item as the list in the request's language has it, and as language=all has
// it (for name:).
type handQuery struct {
	list string // the catalog's path after /v1/
	q    string
	keep func(it, all map[string]any) bool
}

// handQueries are asked in two languages and compared with their filters
// applied to the full lists. The UUIDs are the sample's.
var handQueries = []handQuery{
	{"weapons/skins", "odin", named("displayName", contains("odin"))},
	{"weapons/skins", "オーディン", named("displayName", contains("オーディン"))},
	{"weapons/skins", "ODIN vandal", both(named("displayName", contains("odin")), named("displayName", contains("vandal")))},
	{"weapons/skins", "odin OR vandal", either(named("displayName", contains("odin")), named("displayName", contains("vandal")))},
	{"weapons/skins", "name:odin", anyLocale(contains("odin"))},
	{"weapons/skins", "name:オーディン -name:glitchpop", both(anyLocale(contains("オーディン")), not(anyLocale(contains("glitchpop"))))},
	{"weapons/skins", `"prime//2.0"`, named("displayName", contains("prime//2.0"))},
	{"weapons/skins", "chromas.displayName:red", named("chromas.displayName", contains("red"))},
	{"weapons/skins", "-chromas.displayName:red", not(named("chromas.displayName", contains("red")))},
	{"weapons/skins", "levels.levelItem=null", named("levels.levelItem", is(nil))},
	{"weapons/skins", "levels.levelItem:finisher", named("levels.levelItem", contains("finisher"))},
	{"weapons/skins", "levels.levelItem=EEquippableSkinLevelItem::Finisher -levels.levelItem:VFX", both(named("levels.levelItem", is("EEquippableSkinLevelItem::Finisher")), not(named("levels.levelItem", contains("vfx"))))},
	{"weapons/skins", "levels.uuid=524EBE7D-4A3B-CF50-ED55-1092D82CEBF9", named("levels.uuid", is("524ebe7d-4a3b-cf50-ed55-1092d82cebf9"))},
	{"weapons/skins", "contentTierUuid=null", named("contentTierUuid", is(nil))},
	{"weapons/skins", "-contentTierUuid=null", not(named("contentTierUuid", is(nil)))},
	{"weapons/skins", "contentTierUuid=12683D76-48D7-84A3-4E09-6985794F0445", named("contentTierUuid", is("12683d76-48d7-84a3-4e09-6985794f0445"))},
	{"weapons/skins", "themeUuid=5b09613d-470c-74f4-a69a-028474b703a6 OR wallpaper=null chromas.swatch=null", both(either(named("themeUuid", is("5b09613d-470c-74f4-a69a-028474b703a6")), named("wallpaper", is(nil))), named("chromas.swatch", is(nil)))},
	{"weapons/skins", `displayName="Prime Vandal"`, named("displayName", is("Prime Vandal"))},
	{"weapons", "shopData.cost>=2000", named("shopData.cost", compare(">=", 2000))},
	{"weapons", "shopData.cost<1000 -shopData.cost=0", both(named("shopData.cost", compare("<", 1000)), not(named("shopData.cost", compare("=", 0))))},
	{"weapons", "weaponStats.magazineSize>20 shopData.category:rifle", both(named("weaponStats.magazineSize", compare(">", 20)), named("shopData.category", contains("rifle")))},
	{"weapons", "weaponStats.damageRanges.headDamage>=150", named("weaponStats.damageRanges.headDamage", compare(">=", 150))},
	{"weapons", "skins.chromas.displayName:red", named("skins.chromas.displayName", contains("red"))},
	{"weapons", "shopData=null", named("shopData", is(nil))},
	{"weapons", "category=EEquippableCategory::Sidearm", named("category", is("EEquippableCategory::Sidearm"))},
	{"weapons", "weaponStats.wallPenetration:high OR weaponStats.fireRate<=4", either(named("weaponStats.wallPenetration", contains("high")), named("weaponStats.fireRate", compare("<=", 4)))},
	{"seasons", "startTime>=2021-01-01T00:00:00Z endTime<2022-01-01T00:00:00Z", both(named("startTime", after(">=", "2021-01-01T00:00:00Z")), named("endTime", after("<", "2022-01-01T00:00:00Z")))},
	{"seasons", "parentUuid=null", named("parentUuid", is(nil))},
	{"events", "startTime<=2021-12-01T00:00:00Z endTime>2021-12-01T00:00:00Z", both(named("startTime", after("<=", "2021-12-01T00:00:00Z")), named("endTime", after(">", "2021-12-01T00:00:00Z")))},
	{"agents", "role.displayName:duelist", named("role.displayName", contains("duelist"))},
	{"agents", "isPlayableCharacter=false OR abilities.displayName:wall", either(named("isPlayableCharacter", is(false)), named("abilities.displayName", contains("wall")))},
	{"buddies", "levels.charmLevel=1 isHiddenIfNotOwned=true", both(named("levels.charmLevel", compare("=", 1)), named("isHiddenIfNotOwned", is(true)))},
	{"maps", "callouts.regionName:site xMultiplier>0", both(named("callouts.regionName", contains("site")), named("xMultiplier", compare(">", 0)))},
	{"playertitles", `titleText=""`, named("titleText", is(""))},
	{"competitivetiers", "tiers.tierName:gold", named("tiers.tierName", contains("gold"))},
	{"bundles", `"night market" OR champions`, either(named("displayName", contains("night market")), named("displayName", contains("champions")))},
	{"currencies", "name:radianite", anyLocale(contains("radianite"))},
	{"levelborders", "startingLevel>=100", named("startingLevel", compare(">=", 100))},
}

// at lists the values at a dotted path below v, through objects and arrays.
func at(v any, path string) []any {
	vals := []any{v}
	for _, name := range strings.Split(path, ".") {
		var next []any
		for _, x := range flat(vals) {
			if m, ok := x.(map[string]any); ok {
				if y, ok := m[name]; ok {
					next = append(next, y)
				}
			}
		}
		vals = next
	}
	return flat(vals)
}

func flat(vals []any) []any {
	var out []any
	for _, x := range vals {
		if a, ok := x.([]any); ok {
			out = append(out, flat(a)...)
		} else {
			out = append(out, x)
		}
	}
	return out
}

type keepFunc = func(it, all map[string]any) bool

func named(path string, ok func(any) bool) keepFunc {
	return func(it, _ map[string]any) bool {
		for _, v := range at(it, path) {
			if ok(v) {
				return true
			}
		}
		return false
	}
}

func anyLocale(ok func(any) bool) keepFunc {
	return func(_, all map[string]any) bool {
		for _, text := range all["displayName"].(map[string]any) {
			if ok(text) {
				return true
			}
		}
		return false
	}
}

func both(a, b keepFunc) keepFunc {
	return func(it, all map[string]any) bool { return a(it, all) && b(it, all) }
}
func either(a, b keepFunc) keepFunc {
	return func(it, all map[string]any) bool { return a(it, all) || b(it, all) }
}
func not(a keepFunc) keepFunc { return func(it, all map[string]any) bool { return !a(it, all) } }

func contains(w string) func(any) bool {
	return func(v any) bool {
		s, ok := v.(string)
		return ok && strings.Contains(strings.ToLower(s), strings.ToLower(w))
	}
}

func is(want any) func(any) bool {
	return func(v any) bool {
		if f, ok := v.(float64); ok {
			return want == f
		}
		return v == want
	}
}

func compare(op string, n float64) func(any) bool {
	return func(v any) bool {
		f, ok := v.(float64)
		switch {
		case !ok:
			return false
		case op == ">":
			return f > n
		case op == ">=":
			return f >= n
		case op == "<":
			return f < n
		case op == "<=":
			return f <= n
		}
		return f == n
	}
}

func after(op, instant string) func(any) bool {
	w, err := time.Parse(time.RFC3339, instant)
	if err != nil {
		panic(err)
	}
	return func(v any) bool {
		s, _ := v.(string)
		t, err := time.Parse(time.RFC3339, s)
		if err != nil {
			return false
		}
		switch op {
		case ">":
			return t.After(w)
		case ">=":
			return !t.Before(w)
		case "<":
			return t.Before(w)
		}
		return !t.After(w)
	}
}

// fullList is a list as the route without q serves it.
type fullList struct {
	raw   []json.RawMessage
	items []map[string]any
	all   []map[string]any // language=all's
}

func fetchList(t *testing.T, check *apitest.Checker, h http.Handler, target string) ([]json.RawMessage, []map[string]any) {
	t.Helper()
	res := check.Do(t, h, get(target))
	body, _ := io.ReadAll(res.Body)
	if res.StatusCode != http.StatusOK {
		t.Fatalf("GET %s: %d %.300s", target, res.StatusCode, body)
	}
	var raw struct{ Data []json.RawMessage }
	var dec struct{ Data []map[string]any }
	if err := json.Unmarshal(body, &raw); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(body, &dec); err != nil {
		t.Fatal(err)
	}
	return raw.Data, dec.Data
}

// TestQueriesMatchHandFilters: each query of handQueries, in en-US and
// ja-JP, answers exactly the items of the full list its filter written by
// hand keeps, in the list's order and bytes, in the list's envelope; every
// answer valid by openapi.yaml. Through the router and the edge.
func TestQueriesMatchHandFilters(t *testing.T) {
	t.Parallel()
	if len(handQueries) < 30 {
		t.Fatalf("%d queries; the table asks at least 30", len(handQueries))
	}
	viaBoth(t, func(t *testing.T, build func(edition.Repository, http.Handler, ...func(*handler.Server)) http.Handler) {
		h := build(served(t), nil)
		check := apitest.New(t)
		lists := map[string]*fullList{}
		answered, some, all := 0, 0, 0
		for _, lang := range []string{"en-US", "ja-JP"} {
			for _, tc := range handQueries {
				key := tc.list + " " + lang
				full := lists[key]
				if full == nil {
					full = &fullList{}
					full.raw, full.items = fetchList(t, check, h, "/v1/"+tc.list+"?language="+lang)
					_, full.all = fetchList(t, check, h, "/v1/"+tc.list+"?language=all")
					lists[key] = full
				}
				var want bytes.Buffer
				want.WriteString(`{"status":200,"data":[`)
				n := 0
				for i, it := range full.items {
					if tc.keep(it, full.all[i]) {
						if n > 0 {
							want.WriteByte(',')
						}
						want.Write(full.raw[i])
						n++
					}
				}
				want.WriteString("]}")
				target := "/v1/" + tc.list + "?language=" + lang + "&q=" + url.QueryEscape(tc.q)
				res := check.Do(t, h, get(target))
				body, _ := io.ReadAll(res.Body)
				if res.StatusCode != http.StatusOK {
					t.Errorf("GET %s: %d %s", target, res.StatusCode, body)
					continue
				}
				if !bytes.Equal(body, want.Bytes()) {
					t.Errorf("GET %s: %d bytes, want the %d of the %d items its filter keeps:\n%.400s\nwant\n%.400s", target, len(body), want.Len(), n, body, want.Bytes())
				}
				answered++
				if n > 0 {
					some++
				}
				if n == len(full.items) {
					all++
				}
			}
		}
		t.Logf("%d answers, %d keep some items, %d all", answered, some, all)
		// The table is worth something only if most queries keep some items and
		// few keep all (the trimmed versions the race detector serves have few
		// items: 47 and 7 of 76; the sample, 67 and 5).
		if some <= answered/2 || all > answered/8 {
			t.Errorf("of %d answers, %d keep some items and %d all: choose queries that select", answered, some, all)
		}
	})
}

// TestQueryPinned: answers to q and fields read from a version's current
// routes while it is active are, in every encoding, the bytes and ETags its
// pinned URLs (their Content-Location: the query in canonical form) serve once
// a newer version is, immutable and 304 on those ETags; the current answers
// are cached as the catalog is. Through the router and the edge.
func TestQueryPinned(t *testing.T) {
	t.Parallel()
	viaBoth(t, func(t *testing.T, build func(edition.Repository, http.Handler, ...func(*handler.Server)) http.Handler) {
		full := served(t)
		older, err := full.RetainedEdition(previous(t, full))
		if err != nil {
			t.Fatal(err)
		}
		check := apitest.New(t)
		then, now := build(edition.Serve(older), nil), build(full, nil)
		weapon := older.UUIDs(catalog.Weapons)[0].String()
		pinned := "/v1/versions/" + older.ManifestID
		for _, tc := range []struct{ target, canonical string }{
			{"/v1/weapons/skins?q=+chromas.displayName:%22red%22++&language=JA-jp", "/weapons/skins?language=ja-JP&q=chromas.displayName%3Ared"},
			{"/v1/weapons?q=shopData.cost%3E%3D2000&fields=shopData.cost,+displayName,displayName&language=en-US", "/weapons?fields=displayName%2CshopData.cost&q=shopData.cost%3E%3D2000"},
			{"/v1/agents?isPlayableCharacter=TRUE&q=role.displayName:duelist+OR+role.displayName:sentinel&language=all", "/agents?language=all&q=isPlayableCharacter%3Dtrue+role.displayName%3Aduelist+OR+role.displayName%3Asentinel"},
			{"/v1/buddies?fields=uuid,levels.charmLevel&language=de-DE", "/buddies?fields=levels.charmLevel%2Cuuid&language=de-DE"},
			{"/v1/weapons/skins?q=name:%22prime%22+-contentTierUuid=null", "/weapons/skins?q=name%3Aprime+-contentTierUuid%3Dnull"},
			{"/v1/weapons/skins?q=nothing-is-called-this", "/weapons/skins?q=nothing-is-called-this"},
			{"/v1/weapons/" + strings.ToUpper(weapon) + "?fields=skins.uuid,displayName&language=fr-FR", "/weapons/" + strings.ToUpper(weapon) + "?fields=displayName%2Cskins.uuid&language=fr-FR"},
		} {
			for _, enc := range []string{"", "gzip", "br"} {
				was := read(t, check, then, tc.target, "Accept-Encoding", enc)
				if was.status != http.StatusOK || was.location != pinned+tc.canonical {
					t.Fatalf("%s (%q) while active: %d %.200s, Content-Location %q; want 200, %s", tc.target, enc, was.status, was.body, was.location, pinned+tc.canonical)
				}
				res := check.Do(t, then, get(tc.target, "Accept-Encoding", enc))
				if got := res.Header.Get("Cache-Control"); got != handler.CatalogCache(0) {
					t.Errorf("%s: Cache-Control %q, want the catalog's", tc.target, got)
				}
				for _, url := range []string{was.location, strings.Replace(was.location, older.ManifestID, strings.ToLower(older.ManifestID), 1)} {
					res := check.Do(t, now, get(url, "Accept-Encoding", enc))
					b, _ := io.ReadAll(res.Body)
					if res.StatusCode != http.StatusOK || !bytes.Equal(b, was.body) || res.Header.Get("ETag") != was.etag {
						t.Errorf("%s (%q): %d, %d bytes with ETag %s; served %d bytes with ETag %s while active", url, enc, res.StatusCode, len(b), res.Header.Get("ETag"), len(was.body), was.etag)
					}
					if res.Header.Get("Cache-Control") != handler.CacheImmutable || res.Header.Get("Content-Location") != was.location {
						t.Errorf("%s: Cache-Control %q, Content-Location %q", url, res.Header.Get("Cache-Control"), res.Header.Get("Content-Location"))
					}
					if res := check.Do(t, now, get(url, "Accept-Encoding", enc, "If-None-Match", was.etag)); res.StatusCode != http.StatusNotModified {
						t.Errorf("%s (%q) If-None-Match: %d, want 304", url, enc, res.StatusCode)
					}
				}
				for _, target := range []string{tc.target, was.location} {
					if res := check.Do(t, then, get(target, "Accept-Encoding", enc, "If-None-Match", `"x", `+was.etag)); res.StatusCode != http.StatusNotModified || res.Header.Get("ETag") != was.etag {
						t.Errorf("%s (%q) If-None-Match: %d, ETag %s; want 304", target, enc, res.StatusCode, res.Header.Get("ETag"))
					}
					head := get(target, "Accept-Encoding", enc)
					head.Method = http.MethodHead
					if res := check.Do(t, then, head); res.StatusCode != http.StatusOK || res.Header.Get("ETag") != was.etag {
						t.Errorf("HEAD %s (%q): %d, ETag %s", target, enc, res.StatusCode, res.Header.Get("ETag"))
					}
				}
			}
		}
	})
}

// TestQueryErrors: a query or fields that cannot be answered is 400, in the
// error envelope, naming the term (or field) and where it is; so are the
// limits, q given twice, and q or fields beside a parameter that answers
// from a list of its own.
func TestQueryErrors(t *testing.T) {
	t.Parallel()
	full := served(t)
	check := apitest.New(t)
	h := testRouter(t, full, nil)
	weapon := full.Active().UUIDs(catalog.Weapons)[0].String()
	for _, tc := range []struct{ target, says string }{
		{"/v1/weapons/skins?q=%22abc", `q: term 1 (\"\\\"abc\", at character 1): unclosed quote`},
		{"/v1/weapons?q=shopData.cost%3D%3E5", `q: term 1 (\"shopData.cost=\u003e5\", at character 14): bad operator \"=\u003e\"`},
		{"/v1/weapons?q=vandal+shopData.kost%3E1", `q: term 2 (\"shopData.kost\u003e1\", at character 8): unknown path: no field \"kost\" in shopData`},
		{"/v1/weapons?q=displayName%3Eabc", `neither`},
		{"/v1/weapons?q=shopData:x", `shopData is an object`},
		{"/v1/competitivetiers?q=gold", `which a competitive tier set does not have`},
		{"/v1/weapons?q=" + strings.Repeat("a", 513), `at most 512`},
		{"/v1/weapons?q=" + strings.Repeat("a+", 17), `more than 16 terms`},
		{"/v1/weapons?q=a&q=b", `give it once`},
		{"/v1/weapons/skins?fields=uuid,nope", `fields: field 2 (\"nope\", at character 6): unknown path`},
		{"/v1/weapons/skins?fields=uuid,,x", `no path between commas`},
		{"/v1/weapons/" + weapon + "?fields=shopData.kost", `unknown path`},
		{"/v1/weapons/" + weapon + "?fields=uuid&language=xx", `language \"xx\" is not supported`},
		{"/v1/weapons?q=vandal&language=xx", `language \"xx\" is not supported`},
		{"/v1/agents?isPlayableCharacter=maybe&q=jett", `use true or false`},
		{"/v1/events?at=2021-12-01T00:00:00Z&q=x", `give one or the other`},
		{"/v1/events?active=true&fields=uuid", `give one or the other`},
		{"/v1/levelborders?level=5&q=x", `give one or the other`},
		{"/v1/versions/" + previous(t, full) + "/weapons?q=cost%3D%3E5", `bad operator`},
		{"/v1/versions/" + previous(t, full) + "/weapons/" + weapon + "?fields=a..b", `empty name`},
	} {
		res := check.Do(t, h, get(tc.target))
		body, _ := io.ReadAll(res.Body)
		if res.StatusCode != http.StatusBadRequest || !bytes.Contains(body, []byte(tc.says)) {
			t.Errorf("GET %s: %d %s; want 400 saying %s", tc.target, res.StatusCode, body, tc.says)
		}
	}
}

// project is canonical fields applied by hand to a decoded value.
func project(v any, paths []string) any {
	switch x := v.(type) {
	case []any:
		out := []any{}
		for _, e := range x {
			out = append(out, project(e, paths))
		}
		return out
	case map[string]any:
		out := map[string]any{}
		for _, p := range paths {
			head, _, deeper := strings.Cut(p, ".")
			val, ok := x[head]
			if _, done := out[head]; !ok || done {
				continue
			}
			if !deeper {
				out[head] = val
				continue
			}
			var sub []string
			for _, q := range paths {
				if rest, ok := strings.CutPrefix(q, head+"."); ok {
					sub = append(sub, rest)
				}
			}
			out[head] = project(val, sub)
		}
		return out
	}
	return v
}

// TestFields: fields keeps the paths it names of each item of a list (q's
// or the whole) and of one item, as a hand projection of the full item does,
// and names them in the envelope.
func TestFields(t *testing.T) {
	t.Parallel()
	full := served(t)
	check := apitest.New(t)
	h := testRouter(t, full, nil)
	skin := full.Active().UUIDs(catalog.WeaponSkins)[3].String()
	for _, tc := range []struct {
		target, whole string
		fields        []string
	}{
		{"/v1/weapons/skins?fields=uuid,displayName,chromas.uuid&language=ja-JP", "/v1/weapons/skins?language=ja-JP", []string{"chromas.uuid", "displayName", "uuid"}},
		{"/v1/weapons?fields=shopData.cost,weaponStats.damageRanges.headDamage,skins.levels.levelItem", "/v1/weapons", []string{"shopData.cost", "skins.levels.levelItem", "weaponStats.damageRanges.headDamage"}},
		{"/v1/maps?fields=callouts&language=all", "/v1/maps?language=all", []string{"callouts"}},
		{"/v1/weapons/skins/" + skin + "?fields=levels.uuid,levels,displayName", "/v1/weapons/skins/" + skin, []string{"displayName", "levels"}},
		{"/v1/weapons/skins/" + skin + "?fields=chromas.displayName&language=all", "/v1/weapons/skins/" + skin + "?language=all", []string{"chromas.displayName"}},
	} {
		var got, whole struct {
			Fields []string
			Data   any
		}
		for _, x := range []struct {
			target string
			into   any
		}{{tc.target, &got}, {tc.whole, &whole}} {
			res := check.Do(t, h, get(x.target))
			body, _ := io.ReadAll(res.Body)
			if res.StatusCode != http.StatusOK {
				t.Fatalf("GET %s: %d %s", x.target, res.StatusCode, body)
			}
			if err := json.Unmarshal(body, x.into); err != nil {
				t.Fatal(err)
			}
		}
		want := project(whole.Data, tc.fields)
		gotJSON, _ := json.Marshal(got.Data)
		wantJSON, _ := json.Marshal(want)
		if strings.Join(got.Fields, ",") != strings.Join(tc.fields, ",") || !bytes.Equal(gotJSON, wantJSON) {
			t.Errorf("GET %s: fields %v, data %.300s; want %v, %.300s", tc.target, got.Fields, gotJSON, tc.fields, wantJSON)
		}
	}
}

// TestQueryUpstreamFields: the fields an upstream added to a version, and
// anything below them, are paths q and fields take on the catalog that has
// them, named among the fields when a path is not one; not on another.
func TestQueryUpstreamFields(t *testing.T) {
	t.Parallel()
	ed, _ := withUnknownFields(t)
	check := apitest.New(t)
	h := testRouter(t, edition.Serve(ed), nil)
	count := func(target string) int {
		t.Helper()
		res := check.Do(t, h, get(target))
		body, _ := io.ReadAll(res.Body)
		if res.StatusCode != http.StatusOK {
			t.Fatalf("GET %s: %d %s", target, res.StatusCode, body)
		}
		var env struct{ Data []map[string]any }
		if err := json.Unmarshal(body, &env); err != nil {
			t.Fatal(err)
		}
		return len(env.Data)
	}
	for target, want := range map[string]int{
		"/v1/maps?q=background:DUSK":                                       2,
		"/v1/maps?q=-background=dusk":                                      len(ed.UUIDs(catalog.Maps)) - 2,
		"/v1/maps?q=callouts.elevation%3E2":                                1,
		"/v1/themes?q=rarity.tier=rare":                                    len(ed.UUIDs(catalog.Themes)),
		"/v1/themes?q=rarity.tier.deeper:x":                                0,
		"/v1/maps?q=background:dusk&language=ko-KR&fields=background,uuid": 2,
	} {
		if got := count(target); got != want {
			t.Errorf("GET %s: %d items, want %d", target, got, want)
		}
	}
	for target, says := range map[string]string{
		"/v1/maps?q=backgrund:dusk":         `its fields are assetPath, background, callouts`,
		"/v1/buddies?q=background:x":        `no field \"background\" in a buddy`,
		"/v1/maps?fields=callouts.elevaton": `no field \"elevaton\" in callouts; its fields are elevation, location`,
	} {
		res := check.Do(t, h, get(target))
		body, _ := io.ReadAll(res.Body)
		if res.StatusCode != http.StatusBadRequest || !bytes.Contains(body, []byte(says)) {
			t.Errorf("GET %s: %d %s; want 400 saying %s", target, res.StatusCode, body, says)
		}
	}
}

// TestQueryDocExamples: every curl command of docs/query.md answers, over the
// full sample, what the comment after it says: "→ N items: …" is a 200 with N
// items, "→ 400: …" a 400, a bare "→ …" a 200; and the answer holds the
// comment's JSON, whose "…" stand for any bytes, piece by piece in order.
func TestQueryDocExamples(t *testing.T) {
	t.Parallel()
	doc, err := os.ReadFile("../docs/query.md")
	if err != nil {
		t.Fatal(err)
	}
	h := testRouter(t, edition.Serve(sample(t)), nil)
	check := apitest.New(t)
	// Commands joined across their "\" line ends; an answer's comment across
	// its continuation lines ("#" and more than three spaces).
	var cmds, answers []string
	for _, line := range strings.Split(string(doc), "\n") {
		switch {
		case strings.HasPrefix(line, "curl "):
			cmds, answers = append(cmds, line), append(answers, "")
		case len(cmds) > 0 && strings.HasSuffix(cmds[len(cmds)-1], `\`):
			cmds[len(cmds)-1] = strings.TrimSuffix(cmds[len(cmds)-1], `\`) + " " + strings.TrimSpace(line)
		case len(cmds) > 0 && strings.HasPrefix(line, "#   → "):
			answers[len(answers)-1] = strings.TrimPrefix(line, "#   → ")
		case len(cmds) > 0 && answers[len(answers)-1] != "" && strings.HasPrefix(line, "#    "):
			answers[len(answers)-1] += " " + strings.TrimSpace(strings.TrimPrefix(line, "#"))
		}
	}
	if len(cmds) < 6 {
		t.Fatalf("%d curl commands in docs/query.md; it shows 6", len(cmds))
	}
	pathRE := regexp.MustCompile(`\$api(/\S+)`)
	paramRE := regexp.MustCompile(`--data-urlencode '([^']*)'`)
	countRE := regexp.MustCompile(`^(\d+) items?: `)
	for i, cmd := range cmds {
		p := pathRE.FindStringSubmatch(cmd)
		if p == nil {
			t.Errorf("%s: no $api/… path", cmd)
			continue
		}
		q := url.Values{}
		for _, m := range paramRE.FindAllStringSubmatch(cmd, -1) {
			k, v, _ := strings.Cut(m[1], "=")
			q.Add(k, v)
		}
		target := p[1] + "?" + q.Encode()
		status, items, want := http.StatusOK, -1, answers[i]
		if m := countRE.FindStringSubmatch(want); m != nil {
			items, _ = strconv.Atoi(m[1])
			want = strings.TrimPrefix(want, m[0])
		} else if rest, ok := strings.CutPrefix(want, "400: "); ok {
			status, want = http.StatusBadRequest, rest
		}
		res := check.Do(t, h, get(target))
		body, _ := io.ReadAll(res.Body)
		if res.StatusCode != status {
			t.Errorf("GET %s: %d %.300s; docs/query.md says %d", target, res.StatusCode, body, status)
			continue
		}
		if items >= 0 {
			var env struct{ Data []json.RawMessage }
			if err := json.Unmarshal(body, &env); err != nil || len(env.Data) != items {
				t.Errorf("GET %s: %d items (%v); docs/query.md says %d", target, len(env.Data), err, items)
			}
		}
		rest := string(body)
		for _, piece := range strings.Split(want, "…") {
			at := strings.Index(rest, piece)
			if at < 0 {
				t.Errorf("GET %s: the answer lacks %s where docs/query.md shows it:\n%.600s", target, piece, body)
				break
			}
			rest = rest[at+len(piece):]
		}
	}
}
