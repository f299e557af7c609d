package apitest

import (
	"bytes"
	"reflect"
	"testing"

	"github.com/refdata/refdata/catalog"
	"github.com/refdata/refdata/representation"
)

// SameEdition fails t unless got serves what want does: route by route and
// locale by locale the same bytes, languages, ETags and gzip bytes, and the
// same version record and fills (an edition built elsewhere, package builder).
func SameEdition(t testing.TB, want, got *catalog.Edition) {
	t.Helper()
	if want.ManifestID != got.ManifestID || !reflect.DeepEqual(want.Version, got.Version) {
		t.Fatalf("version record: %+v, want %+v", got.Version, want.Version)
	}
	if !reflect.DeepEqual(want.Fills, got.Fills) {
		t.Errorf("fills %v, want %v", got.Fills, want.Fills)
	}
	n := 0
	same := func(where string, w, g *representation.Body) {
		t.Helper()
		n++
		if w == nil || g == nil {
			if w != g {
				t.Fatalf("%s: body %v, want %v", where, g, w)
			}
			return
		}
		wz, wm := w.Gzipped()
		gz, gm := g.Gzipped()
		if !bytes.Equal(w.JSON, g.JSON) || w.Lang != g.Lang || w.ETag() != g.ETag() || w.GzipETag() != g.GzipETag() || wm != gm || !bytes.Equal(wz, gz) {
			t.Fatalf("%s: body differs (lang %q/%q, %d/%d bytes, gzip %d/%d bytes)", where, g.Lang, w.Lang, len(g.JSON), len(w.JSON), len(gz), len(wz))
		}
	}
	same("version", want.VersionBody(), got.VersionBody())
	same("locres", want.LocresList(), got.LocresList())
	for loc := range catalog.NumLocales {
		same("locres "+catalog.Locales[loc], want.Locres(loc), got.Locres(loc))
	}
	for _, c := range catalog.Categories() {
		if !reflect.DeepEqual(want.UUIDs(c), got.UUIDs(c)) {
			t.Fatalf("%s: items differ", c.Name())
		}
		for loc := range catalog.NumLocales + 1 {
			same(c.Name(), want.List(c, loc), got.List(c, loc))
			for _, u := range want.UUIDs(c) {
				same(c.Name()+"/"+u.String(), want.Item(c, u, loc), got.Item(c, u, loc))
			}
		}
	}
	if n < 1000 {
		t.Errorf("only %d bodies compared", n)
	}
}

// Complete fails t unless every route of ed has its body.
func Complete(t testing.TB, ed *catalog.Edition) {
	t.Helper()
	if ed.VersionBody() == nil || ed.LocresList() == nil {
		t.Fatal("version or locres body missing")
	}
	for loc := range catalog.NumLocales {
		if ed.Locres(loc) == nil {
			t.Fatal("locres body missing")
		}
	}
	for _, c := range catalog.Categories() {
		for loc := range catalog.NumLocales + 1 {
			if ed.List(c, loc) == nil {
				t.Fatalf("%s list missing", c.Name())
			}
			for _, u := range ed.UUIDs(c) {
				if ed.Item(c, u, loc) == nil {
					t.Fatalf("%s/%s missing", c.Name(), u)
				}
			}
		}
	}
}
