package apitest

import (
	"bytes"
	"fmt"
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
	for _, c := range catalog.Categories() {
		if !reflect.DeepEqual(want.UUIDs(c), got.UUIDs(c)) {
			t.Fatalf("%s: items differ", c.Name())
		}
	}
	n := 0
	eachRoute(want, func(where string, body func(*edition.Edition) *representation.Body) {
		t.Helper()
		n++
		w, g := body(want), body(got)
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
			read := (*representation.Encoded).Read
			if wr[i].InflatedFrom() != nil && gr[i].InflatedFrom() != nil {
				// Both identities are their gzips decompressed: the gzips'
				// bytes decide (inflating equal bytes twice proves nothing).
				read = func(e *representation.Encoded) ([]byte, error) { return e.InflatedFrom().Read() }
			}
			wb, werr := read(wr[i])
			gb, gerr := read(gr[i])
			if werr != nil || gerr != nil || !bytes.Equal(wb, gb) || wr[i].ETag() != gr[i].ETag() || wr[i].Encoding != gr[i].Encoding {
				t.Fatalf("%s: encoding %d differs (%d/%d bytes; %v, %v)", where, i, len(gb), len(wb), gerr, werr)
			}
		}
	})
	if n < 1000 {
		t.Errorf("only %d bodies compared", n)
	}
}

// Complete fails t unless every route of ed has its body.
func Complete(t testing.TB, ed *edition.Edition) {
	t.Helper()
	eachRoute(ed, func(where string, body func(*edition.Edition) *representation.Body) {
		t.Helper()
		if body(ed) == nil {
			t.Fatalf("%s: body missing", where)
		}
	})
}

// Bodies lists the bodies of every route of ed, each once: every locale's
// lists, filtered lists and items, the string tables and the version record.
// Holding them, a caller makes every body of a lazily read edition.
func Bodies(ed *edition.Edition) []*representation.Body {
	seen := map[*representation.Body]bool{}
	var out []*representation.Body
	add := func(b *representation.Body) {
		if b != nil && !seen[b] {
			seen[b] = true
			out = append(out, b)
		}
	}
	eachRoute(ed, func(_ string, body func(*edition.Edition) *representation.Body) { add(body(ed)) })
	for _, c := range catalog.Categories() {
		for _, f := range c.Filters() {
			for loc := range catalog.NumLocales + 1 {
				add(ed.Filtered(c, f, false, loc))
				add(ed.Filtered(c, f, true, loc))
			}
		}
	}
	return out
}

// eachRoute calls f for every route of ed's version, locale and item, and
// each bulk file: body
// gives that route's body in an edition.
func eachRoute(ed *edition.Edition, f func(where string, body func(*edition.Edition) *representation.Body)) {
	f("version", (*edition.Edition).VersionBody)
	f("locres", (*edition.Edition).LocresList)
	for loc := range catalog.NumLocales {
		f("locres "+catalog.Locales[loc], func(e *edition.Edition) *representation.Body { return e.Locres(loc) })
	}
	for _, c := range catalog.Categories() {
		for loc := range catalog.NumLocales + 1 {
			f(c.Name(), func(e *edition.Edition) *representation.Body { return e.List(c, loc) })
			for _, u := range ed.UUIDs(c) {
				f(c.Name()+"/"+u.String(), func(e *edition.Edition) *representation.Body { return e.Item(c, u, loc) })
			}
		}
	}
	for loc := range catalog.NumLocales + 1 {
		f(fmt.Sprintf("bulk %d", loc), func(e *edition.Edition) *representation.Body { return e.Bulk(loc) })
	}
}

// JSON is a body's identity bytes; t fails when they cannot be read.
func JSON(t testing.TB, b *representation.Body) []byte {
	t.Helper()
	data, err := b.JSON()
	if err != nil {
		t.Fatal(err)
	}
	return data
}
