package router_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"io"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/refdata/refdata/catalog"
	"github.com/refdata/refdata/edition"
	"github.com/refdata/refdata/handler"
	"github.com/refdata/refdata/representation"
	"github.com/refdata/refdata/router"
	"github.com/refdata/refdata/router/apitest"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/")

func errorOf(t *testing.T, res *http.Response) string {
	t.Helper()
	var e struct{ Error string }
	if err := json.NewDecoder(res.Body).Decode(&e); err != nil {
		t.Fatalf("error body: %v", err)
	}
	return e.Error
}

func TestUserAgentRule(t *testing.T) {
	t.Parallel()
	check := apitest.New(t)
	h := testRouter(t, edition.Serve(active(t)), nil)
	for _, tc := range []struct {
		name, ua string
		want     int
	}{
		{"missing", "", http.StatusBadRequest},
		{"blank", "   ", http.StatusBadRequest},
		{"contract form", "MyApp/1.0 (+https://example.com)", http.StatusOK},
		{"any non-blank", "curl/8.0", http.StatusOK},
	} {
		t.Run(tc.name, func(t *testing.T) {
			req := get("/v1/version")
			req.Header.Del("User-Agent")
			if tc.ua != "" {
				req.Header.Set("User-Agent", tc.ua)
			}
			res := check.Do(t, h, req)
			if res.StatusCode != tc.want {
				t.Fatalf("status %d, want %d", res.StatusCode, tc.want)
			}
			if tc.want == http.StatusBadRequest && !strings.Contains(errorOf(t, res), "User-Agent") {
				t.Error("the message does not say what is missing")
			}
		})
	}
}

func TestErrorMessagesSayWhatToDo(t *testing.T) {
	t.Parallel()
	check := apitest.New(t)
	h := testRouter(t, edition.Serve(active(t)), nil)
	for _, tc := range []struct {
		path   string
		status int
		says   []string
		hides  []string // the library's text, which must not reach a client
	}{
		{"/v1/weapons?language=xx-XX", 400, append([]string{`"xx-XX"`}, catalog.Locales[:]...), nil},
		{"/v1/weapons/skins/zzz", 400, []string{`"zzz"`, "8-4-4-4-12"}, nil},
		{"/v1/themes/00000000-0000-0000-0000-000000000000", 404, []string{"no theme", "/v1/themes"}, nil},
		{"/v1/locres/../../etc/passwd", 404, []string{"no route"}, nil},
		{"/v1/locres/xx", 404, []string{`"xx"`, "de-DE"}, nil},
		{"/v1/diff/../../x/y", 404, []string{"no route"}, nil},
		{"/v1/nope", 404, []string{"/openapi.yaml"}, nil},
		{"/v1/weapons?language=de-DE&language=fr-FR", 400, []string{`"language"`, "once"}, []string{"Invalid format", "single value parameter"}},
		{"/v1/weapons/skins?language=de-DE&language=de-DE", 400, []string{`"language"`, "once"}, []string{"Invalid format", "single value parameter"}},
		// An empty language is not one of its values (openapi.yaml: anything
		// else is 400), though a handler reads it as a missing one.
		{"/v1/weapons?language=", 400, []string{`language ""`, "de-DE", "leave it out"}, nil},
		{"/v1/weapons/63e6c2b6-4a8e-869c-3d4c-e38355226584?language", 400, []string{`language ""`, "leave it out"}, nil},
		{"/v1/events?language=&active=true", 400, []string{`language ""`}, nil},
		{"/v1/versions/05E83EB5E32657B9/maps?language=", 400, []string{`language ""`}, nil},
	} {
		t.Run(tc.path, func(t *testing.T) {
			res := check.Do(t, h, get(tc.path))
			if res.StatusCode != tc.status {
				t.Fatalf("status %d, want %d", res.StatusCode, tc.status)
			}
			msg := errorOf(t, res)
			for _, s := range tc.says {
				if !strings.Contains(msg, s) {
					t.Errorf("message %q does not mention %q", msg, s)
				}
			}
			for _, s := range tc.hides {
				if strings.Contains(msg, s) {
					t.Errorf("message %q passes on the library's %q", msg, s)
				}
			}
		})
	}
}

func TestContentLanguage(t *testing.T) {
	t.Parallel()
	ed := sample(t)
	check := apitest.New(t)
	h := testRouter(t, edition.Serve(ed), nil)
	const classic = "29a0cfab-485b-f5d5-779a-b59f85e204a8" // translated in ja-JP by the fixtures
	for _, tc := range []struct {
		path, lang string
		translated bool
	}{
		{"/v1/weapons/" + classic, "", false},
		{"/v1/weapons/" + classic, "ja-JP", true},
		{"/v1/weapons/" + classic, "JA-jp", true},
		{"/v1/weapons", "de-DE", true},
		{"/v1/themes", "ja-JP", false}, // no theme is translated: the en-US body
		{"/v1/locres/ja-jp", "", true},
		// Real text where a source has it (fixtures/README.md), en-US said
		// to be en-US where none has.
		{"/v1/buddies", "ko-KR", true},
		{"/v1/sprays", "ja-JP", true},
		{"/v1/sprays/levels", "ja-JP", false}, // no source names spray levels
		{"/v1/agents", "pt-BR", true},
		{"/v1/agents", "ja-JP", false}, // agents: pt-BR only
		{"/v1/agents/add6443a-41bd-e414-f6ad-e58d267f4e95", "pt-BR", true},
		{"/v1/agents/" + nonPlayableSova, "pt-BR", false}, // no 2023 counterpart
		{"/v1/maps", "pt-BR", true},
		{"/v1/maps", "ar-AE", false},
		{"/v1/competitivetiers", "pt-BR", true},
		{"/v1/competitivetiers", "it-IT", false},
		{"/v1/seasons", "ja-JP", false},
		{"/v1/contenttiers", "ko-KR", false},
		{"/v1/events", "de-DE", false},
	} {
		t.Run(tc.path+"?"+tc.lang, func(t *testing.T) {
			url := tc.path
			if tc.lang != "" {
				url += "?language=" + tc.lang
			}
			res := check.Do(t, h, get(url))
			body, _ := io.ReadAll(res.Body)
			en := check.Do(t, h, get(tc.path))
			enBody, _ := io.ReadAll(en.Body)
			want := "en-US"
			switch {
			case strings.HasPrefix(tc.path, "/v1/locres/"):
				want = "ja-JP"
			case tc.translated:
				loc, _ := catalog.ParseLocale(tc.lang)
				want = catalog.Locales[loc]
			}
			if got := res.Header.Get("Content-Language"); got != want {
				t.Errorf("Content-Language %q, want %q", got, want)
			}
			if tc.lang != "" && tc.translated == bytes.Equal(body, enBody) {
				t.Errorf("translated=%v but body equal to en-US: %v", tc.translated, bytes.Equal(body, enBody))
			}
		})
	}
	// The translated text is there, and untranslated fields fall back to en-US.
	res := check.Do(t, h, get("/v1/weapons/"+classic+"?language=ja-JP"))
	var w struct {
		Data struct{ DisplayName, Category string }
	}
	_ = json.NewDecoder(res.Body).Decode(&w)
	if w.Data.DisplayName == "Classic" || w.Data.DisplayName == "" || w.Data.Category != "EEquippableCategory::Sidearm" {
		t.Errorf("ja-JP Classic = %+v", w.Data)
	}
}

func TestSampleCounts(t *testing.T) {
	t.Parallel()
	check := apitest.New(t)
	h := testRouter(t, edition.Serve(sample(t)), nil)
	for _, tc := range []struct {
		path string
		want int
	}{
		{"/v1/weapons/skins", 392}, // every real skin of version 15
		{"/v1/weapons", 18},
		{"/v1/weapons/skinchromas", 781},
		{"/v1/weapons/skinlevels", 679},
		{"/v1/buddies/levels", 181},
		{"/v1/maps", 8},
		{"/v1/locres", 18},
		{"/v1/weapons/skins?language=ja-JP&responseOptions=ignore_null", 392}, // unknown parameters are ignored
	} {
		res := check.Do(t, h, get(tc.path))
		var body struct{ Data []json.RawMessage }
		if err := json.NewDecoder(res.Body).Decode(&body); err != nil {
			t.Fatalf("%s: %v", tc.path, err)
		}
		if len(body.Data) != tc.want {
			t.Errorf("%s: %d items, want %d", tc.path, len(body.Data), tc.want)
		}
	}
}

func TestLocres(t *testing.T) {
	t.Parallel()
	check := apitest.New(t)
	h := testRouter(t, edition.Serve(active(t)), nil)
	res := check.Do(t, h, get("/v1/locres"))
	var list struct {
		Data []struct {
			Locale          string
			Tables, Entries int
		}
	}
	_ = json.NewDecoder(res.Body).Decode(&list)
	if len(list.Data) != catalog.NumLocales {
		t.Fatalf("%d locales, want %d", len(list.Data), catalog.NumLocales)
	}
	for i, l := range list.Data {
		if l.Locale != catalog.Locales[i] {
			t.Errorf("locale %d is %s, want %s", i, l.Locale, catalog.Locales[i])
		}
		res := check.Do(t, h, get("/v1/locres/"+strings.ToUpper(l.Locale)))
		var table struct{ Data map[string]map[string]string }
		_ = json.NewDecoder(res.Body).Decode(&table)
		entries := 0
		for _, ns := range table.Data {
			entries += len(ns)
		}
		if len(table.Data) != l.Tables || entries != l.Entries {
			t.Errorf("%s: table has %d tables/%d entries, summary says %d/%d", l.Locale, len(table.Data), entries, l.Tables, l.Entries)
		}
	}
}

// panicky panics on one route and serves the others.
type panicky struct{ *edition.Static }

func (p panicky) LatestDiff() (*representation.Body, error) { panic("boom") }

func TestRecovery(t *testing.T) {
	t.Parallel()
	check := apitest.New(t)
	var logs bytes.Buffer
	h, err := router.New(&handler.Server{Repo: panicky{edition.Serve(active(t))}}, slog.New(slog.NewJSONHandler(&logs, nil)), nil)
	if err != nil {
		t.Fatal(err)
	}
	res := check.Do(t, h, get("/v1/diff/latest"))
	if res.StatusCode != http.StatusInternalServerError {
		t.Fatalf("panic gave %d, want 500", res.StatusCode)
	}
	body, _ := io.ReadAll(res.Body)
	id := res.Header.Get("X-Request-Id")
	if id == "" || !strings.Contains(string(body), id) || strings.Contains(string(body), "boom") {
		t.Errorf("500 body %s with X-Request-Id %q: want the id, not the panic", body, id)
	}
	if !strings.Contains(logs.String(), "boom") || !strings.Contains(logs.String(), id) {
		t.Error("the panic was not logged with the request id")
	}
	if res := check.Do(t, h, get("/v1/version")); res.StatusCode != http.StatusOK {
		t.Fatalf("after a panic: %d", res.StatusCode)
	}
}

func TestSpecDocuments(t *testing.T) {
	t.Parallel()
	h := testRouter(t, edition.Serve(active(t)), nil)
	for _, path := range []string{"/openapi.yaml", "/openapi.json"} {
		rec := newRecorder(h, get(path, "User-Agent", ""))
		if rec.Code != http.StatusOK || !bytes.Contains(rec.Body.Bytes(), []byte("listWeapons")) {
			t.Errorf("%s: %d, %d bytes", path, rec.Code, rec.Body.Len())
		}
	}
}

// TestGolden pins a few bodies byte for byte: the version record (aliases, filled
// fields), a map (callouts converted to minimap positions) and a translated weapon.
func TestGolden(t *testing.T) {
	t.Parallel()
	check := apitest.New(t)
	h := testRouter(t, edition.Serve(sample(t)), nil)
	for name, path := range map[string]string{
		"version.json":        "/v1/version",
		"map-ascent.json":     "/v1/maps/7eaecc1b-4337-bbf6-6ab9-04b8f06b3319",
		"weapon-ja-JP.json":   "/v1/weapons/29a0cfab-485b-f5d5-779a-b59f85e204a8?language=ja-JP",
		"theme.json":          "/v1/themes/83815add-44a4-d508-47c7-0e81755fb716",
		"gamemode-fr-FR.json": "/v1/gamemodes?language=fr-FR",
	} {
		t.Run(name, func(t *testing.T) {
			res := check.Do(t, h, get(path))
			if res.StatusCode != http.StatusOK {
				t.Fatalf("%s: %d", path, res.StatusCode)
			}
			got, _ := io.ReadAll(res.Body)
			var pretty bytes.Buffer
			if err := json.Indent(&pretty, got, "", "  "); err != nil {
				t.Fatal(err)
			}
			file := filepath.Join("testdata", name)
			if *update {
				if err := os.WriteFile(file, pretty.Bytes(), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want, err := os.ReadFile(file)
			if err != nil {
				t.Fatalf("%v (run go test ./router -update to create it)", err)
			}
			if !bytes.Equal(pretty.Bytes(), want) {
				t.Errorf("%s differs from %s; if the change is intended, run go test ./router -update", path, file)
			}
		})
	}
}

// brokenDiff fails to read its stored diff with an error that names a file.
type brokenDiff struct{ *edition.Static }

func (brokenDiff) LatestDiff() (*representation.Body, error) {
	return nil, errors.New("read /var/lib/refdata/diffs/A-B.json: checksum mismatch")
}

// TestInternalErrorsStayInside: a 5xx names a request id, never the error's text;
// the log has the text under that id.
func TestInternalErrorsStayInside(t *testing.T) {
	t.Parallel()
	check := apitest.New(t)
	var logs bytes.Buffer
	h, err := router.New(&handler.Server{Repo: brokenDiff{edition.Serve(active(t))}}, slog.New(slog.NewJSONHandler(&logs, nil)), nil)
	if err != nil {
		t.Fatal(err)
	}
	res := check.Do(t, h, get("/v1/diff/latest"))
	body, _ := io.ReadAll(res.Body)
	id := res.Header.Get("X-Request-Id")
	if res.StatusCode != http.StatusInternalServerError || id == "" || !strings.Contains(string(body), id) || strings.Contains(string(body), "/var/lib") {
		t.Errorf("%d %s (X-Request-Id %q): want 500 naming the id and no path", res.StatusCode, body, id)
	}
	if !strings.Contains(logs.String(), "/var/lib/refdata/diffs/A-B.json") || !strings.Contains(logs.String(), id) {
		t.Errorf("log lacks the error under the id: %s", logs.String())
	}
}
