package apitest

import (
	"bytes"
	"reflect"
	"testing"

	"github.com/refdata/refdata/catalog"
	"github.com/refdata/refdata/edition"
	"github.com/refdata/refdata/representation"
)

// SameEdition fails t unless got serves what want does: route by route and
// locale by locale the same bytes, languages and ETags in every encoding, and
// the same version record (an edition read back from its pack, say).
func SameEdition(t testing.TB, want, got *edition.Edition) {
	t.Helper()
	if want.ManifestID != got.ManifestID || !reflect.DeepEqual(want.Version, got.Version) {
		t.Fatalf("version record: %+v, want %+v", got.Version, want.Version)
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
		wr, gr := w.Representations(), g.Representations()
		if w.Lang != g.Lang || len(wr) != len(gr) {
			t.Fatalf("%s: body differs (lang %q/%q, %d/%d encodings)", where, g.Lang, w.Lang, len(gr), len(wr))
		}
		for i := range wr {
			if !bytes.Equal(wr[i].Bytes, gr[i].Bytes) || wr[i].ETag() != gr[i].ETag() || wr[i].Encoding != gr[i].Encoding {
				t.Fatalf("%s: encoding %d differs (%d/%d bytes)", where, i, len(gr[i].Bytes), len(wr[i].Bytes))
			}
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
func Complete(t testing.TB, ed *edition.Edition) {
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
