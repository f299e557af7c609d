package pipeline_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/refdata/refdata/catalog"
	"github.com/refdata/refdata/router/apitest"
)

// TestLocalizedCaptures imports a capture with per-locale folders (the public
// API's full payloads in ja-JP, skins.json authoritative there too) and a
// language=all file, and checks that both become translations, that a folder or
// file outside the layout is named, and that every body still validates.
func TestLocalizedCaptures(t *testing.T) {
	t.Parallel()
	src := captures[2]
	dir := t.TempDir()
	read := func(name string) map[string]any {
		b, err := os.ReadFile(filepath.Join(src, name))
		if err != nil {
			t.Fatal(err)
		}
		var env map[string]any
		if err := json.Unmarshal(b, &env); err != nil {
			t.Fatal(err)
		}
		return env
	}
	write := func(name string, v any) {
		b, err := json.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.MkdirAll(filepath.Dir(filepath.Join(dir, name)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, name), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	entries, _ := os.ReadDir(src)
	for _, e := range entries {
		if e.Name() != "playertitles.json" {
			write(e.Name(), read(e.Name()))
		}
	}
	// ja-JP: the full payloads, with Japanese names on one weapon and one skin
	// (in skins.json, which wins over the nested copy).
	weapons, skins := read("weapons.json"), read("skins.json")
	w0 := weapons["data"].([]any)[0].(map[string]any)
	w0["displayName"] = "クラシック"
	s0 := skins["data"].([]any)[0].(map[string]any)
	s0["displayName"] = "スキン"
	write("ja-JP/weapons.json", weapons)
	write("ja-JP/skins.json", skins)
	write("ja-JP/notes.txt", "not a catalog")
	write("extra/weapons.json", weapons)
	// playertitles.json captured with language=all.
	titles := read("playertitles.json")
	for _, it := range titles["data"].([]any) {
		m := it.(map[string]any)
		all := map[string]any{}
		for _, l := range catalog.Locales {
			all[l] = m["displayName"]
		}
		all["de-DE"] = "Titel"
		m["displayName"] = all
	}
	write("playertitles.json", titles)

	st := openStore(t, t.TempDir())
	rep := mustImport(t, st, dir)
	if rep.Outcome != "published" {
		t.Fatalf("outcome %q", rep.Outcome)
	}
	for _, want := range []string{"ja-JP/notes.txt", "extra/"} {
		if !slices.Contains(rep.Ignored, want) {
			t.Errorf("%s is not named as ignored: %q", want, rep.Ignored)
		}
	}
	ed, _, err := loadEdition(st, rep.ManifestID)
	if err != nil {
		t.Fatal(err)
	}
	checkEdition(t, ed)
	name := func(c catalog.Category, uuid any, lang string) string {
		loc, _ := catalog.ParseLocale(lang)
		u, _ := catalog.ParseUUID(uuid.(string))
		var body struct{ Data struct{ DisplayName string } }
		if err := json.Unmarshal(apitest.JSON(t, ed.Item(c, u, loc)), &body); err != nil {
			t.Fatal(err)
		}
		return body.Data.DisplayName
	}
	for _, tc := range []struct {
		c          catalog.Category
		uuid       any
		lang, want string
	}{
		{catalog.Weapons, w0["uuid"], "ja-JP", "クラシック"},
		{catalog.WeaponSkins, s0["uuid"], "ja-JP", "スキン"},
		{catalog.Weapons, w0["uuid"], "en-US", read("weapons.json")["data"].([]any)[0].(map[string]any)["displayName"].(string)},
		{catalog.PlayerTitles, titles["data"].([]any)[0].(map[string]any)["uuid"], "de-DE", "Titel"},
	} {
		if got := name(tc.c, tc.uuid, tc.lang); got != tc.want {
			t.Errorf("%s %s in %s: %q, want %q", tc.c.Name(), tc.uuid, tc.lang, got, tc.want)
		}
	}
	// The stored version is in the snapshot layout: translations as overlays.
	_, files, err := st.ReadVersion(rep.ManifestID)
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{"ja-JP/weapons.json", "de-DE/playertitles.json", "en-US/playertitles.json"} {
		if files[f] == nil {
			t.Errorf("stored version lacks %s", f)
		}
	}
}
