package edition_test

import (
	"bytes"
	"fmt"
	"reflect"
	"testing"
	"time"

	"github.com/refdata/refdata/api/apitest"
	"github.com/refdata/refdata/catalog"
	"github.com/refdata/refdata/edition"
	"github.com/refdata/refdata/fixtures"
	"github.com/refdata/refdata/representation"
)

// small renders embedded version nn trimmed (fixtures.Small): a new
// Rendered each call, which the test may change.
func small(t testing.TB, nn string) *catalog.Rendered {
	t.Helper()
	r, err := fixtures.Small(nn)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func newest(t testing.TB) *catalog.Rendered {
	t.Helper()
	r, err := fixtures.Newest()
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func encode(t testing.TB, r *catalog.Rendered, opt edition.Options) []byte {
	t.Helper()
	b, err := edition.Encode(r, opt)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func decode(t testing.TB, b []byte) *edition.Edition {
	t.Helper()
	ed, err := edition.Decode(b)
	if err != nil {
		t.Fatal(err)
	}
	return ed
}

// route is one route of an edition in one locale (catalog.AllLocales:
// language=all) and its body.
type route struct {
	path string // "/v1/version", "/v1/locres", or the category's name
	c    catalog.Category
	u    *catalog.UUID // nil for a list
	loc  int           // -1 where there is no locale
	body *representation.Body
}

func (r route) String() string {
	switch {
	case r.loc < 0:
		return r.path
	case r.path != "":
		return r.path + "/" + catalog.Locales[r.loc]
	}
	s := "/v1/" + r.c.Name()
	if r.u != nil {
		s += "/" + r.u.String()
	}
	if r.loc == catalog.AllLocales {
		return s + "?language=all"
	}
	return s + "?language=" + catalog.Locales[r.loc]
}

// routes lists every route of ed in every locale, language=all included,
// in one order for editions of the same version.
func routes(ed *edition.Edition) []route {
	out := []route{{path: "/v1/version", loc: -1, body: ed.VersionBody()}, {path: "/v1/locres", loc: -1, body: ed.LocresList()}}
	for loc := range catalog.NumLocales {
		out = append(out, route{path: "/v1/locres", loc: loc, body: ed.Locres(loc)})
	}
	for _, c := range catalog.Categories() {
		uuids := ed.UUIDs(c)
		for loc := range catalog.NumLocales + 1 {
			out = append(out, route{c: c, loc: loc, body: ed.List(c, loc)})
			for i := range uuids {
				out = append(out, route{c: c, u: &uuids[i], loc: loc, body: ed.Item(c, uuids[i], loc)})
			}
		}
	}
	return out
}

// efforts is the effort tests compress at and the other one.
func efforts() (this, other representation.Effort) {
	this, other = apitest.Effort(), representation.Best
	if this == other {
		other = representation.Fast
	}
	return this, other
}

// TestDecodeServesWhatNewServes: the edition read back from a pack serves
// on every route, in every locale, what the edition made straight from the
// rendered version serves — the same identity bytes, Content-Language and
// ETag — and each of its gzip and brotli encodings decodes to those bytes
// and has the ETag of its own. The full newest version too, without -short.
func TestDecodeServesWhatNewServes(t *testing.T) {
	t.Parallel()
	type version struct {
		name  string
		load  func(testing.TB) *catalog.Rendered
		again bool // encode it twice
	}
	vs := []version{
		{"small 14", func(t testing.TB) *catalog.Rendered { return small(t, "14") }, true},
		{"small 15", func(t testing.TB) *catalog.Rendered { return small(t, "15") }, true},
	}
	if !testing.Short() {
		vs = append(vs, version{"newest", newest, false})
	}
	for _, v := range vs {
		t.Run(v.name, func(t *testing.T) {
			t.Parallel()
			r := v.load(t)
			opt := edition.Options{Effort: apitest.Effort()}
			pack := encode(t, r, opt)
			want, got := edition.New(r), decode(t, pack)
			apitest.Complete(t, want)
			apitest.Complete(t, got)
			if got.ManifestID != r.ManifestID || got.ID() != r.ManifestID || !reflect.DeepEqual(got.Version, r.Version) ||
				got.ContentHash != r.ContentHash || got.ContentHash == "" || got.Effort != opt.Effort {
				t.Errorf("record %s %+v %s %v, want %s %+v %s %v", got.ManifestID, got.Version, got.ContentHash, got.Effort, r.ManifestID, r.Version, r.ContentHash, opt.Effort)
			}
			if got.VersionField.Name != "X-Data-Version" || !reflect.DeepEqual(got.VersionField, want.VersionField) || got.VersionField.Value[0] != r.ManifestID {
				t.Errorf("X-Data-Version field %+v, want %+v", got.VersionField, want.VersionField)
			}
			if want.Effort != (representation.Effort{}) {
				t.Errorf("New's effort %v, want none", want.Effort)
			}
			wr, gr := routes(want), routes(got)
			if len(wr) != len(gr) {
				t.Fatalf("%d routes, want %d", len(gr), len(wr))
			}
			wantBodies, gotBodies := set(want.Bodies()), set(got.Bodies())
			compressed := 0
			for i, w := range wr {
				g := gr[i].body
				if g == nil || w.body == nil || gr[i].String() != w.String() {
					t.Fatalf("%s: body %v, want %v", gr[i], g, w.body)
				}
				if !bytes.Equal(g.JSON, w.body.JSON) || !bytes.Equal(g.Bytes, w.body.JSON) || g.Lang != w.body.Lang ||
					g.Language.Name != w.body.Language.Name || !reflect.DeepEqual(g.Language.Value, w.body.Language.Value) ||
					g.ETag() != w.body.ETag() || g.ETag() != representation.ETag(w.body.JSON) {
					t.Fatalf("%s: %d bytes in %q, ETag %s; want %d in %q, ETag %s", w, len(g.JSON), g.Lang, g.ETag(), len(w.body.JSON), w.body.Lang, w.body.ETag())
				}
				if len(w.body.Representations()) != 1 {
					t.Fatalf("%s: New made %d encodings", w, len(w.body.Representations()))
				}
				if !wantBodies[w.body] || !gotBodies[g] {
					t.Fatalf("%s: body not among Bodies()", w)
				}
				for _, rep := range g.Representations() {
					b, err := representation.Decode(rep)
					if err != nil || !bytes.Equal(b, w.body.JSON) {
						t.Fatalf("%s: %s decodes to %d bytes (%v), want %d", w, rep.Encoding.Value, len(b), err, len(w.body.JSON))
					}
					if rep.ETag() != representation.ETag(rep.Bytes) || rep.LengthHeader[0] != fmt.Sprint(len(rep.Bytes)) {
						t.Fatalf("%s: %s has ETag %s and Content-Length %s for %d bytes", w, rep.Encoding.Value, rep.ETag(), rep.LengthHeader[0], len(rep.Bytes))
					}
				}
				if g.Gzip() != nil && g.Brotli() != nil {
					compressed++
				}
				if (g.Gzip() == nil || g.Brotli() == nil) && len(g.JSON) > 4<<10 {
					t.Errorf("%s: %d bytes without gzip (%v) or brotli (%v)", w, len(g.JSON), g.Gzip() != nil, g.Brotli() != nil)
				}
			}
			if compressed < len(gr)/2 {
				t.Errorf("only %d of %d routes have gzip and brotli", compressed, len(gr))
			}
			if len(wantBodies) != len(r.Docs()) {
				t.Errorf("New made %d bodies of %d docs", len(wantBodies), len(r.Docs()))
			}
			for _, u := range []catalog.UUID{{}, {1, 2, 3}} {
				if got.Item(catalog.Category(0), u, catalog.DefaultLocale) != nil || want.Item(catalog.Category(0), u, catalog.DefaultLocale) != nil {
					t.Errorf("an item %s that is not there has a body", u)
				}
			}
			// Encoding is deterministic, whatever the cores made first.
			if v.again {
				apitest.SameEdition(t, got, decode(t, encode(t, r, opt)))
			}
		})
	}
}

// TestEncodeAtNoEffort: a pack encoded at the zero Effort holds no
// compressed encodings: its edition serves what New's does, encodings and
// all.
func TestEncodeAtNoEffort(t *testing.T) {
	t.Parallel()
	r := small(t, "15")
	ed := decode(t, encode(t, r, edition.Options{}))
	apitest.SameEdition(t, edition.New(r), ed)
	if ed.Effort != (representation.Effort{}) {
		t.Errorf("effort %v", ed.Effort)
	}
}

// TestEncodeRefusesALanguage: a body whose Content-Language the pack cannot
// store is refused, not stored as another language.
func TestEncodeRefusesALanguage(t *testing.T) {
	t.Parallel()
	for _, lang := range []string{"xx-XX", "de-de", "en-US, de-DE"} {
		r := small(t, "15")
		r.Locres[1] = &catalog.Doc{JSON: r.Locres[1].JSON, Lang: lang}
		if b, err := edition.Encode(r, edition.Options{}); err == nil {
			t.Errorf("a body in %q: encoded (%d bytes)", lang, len(b))
		}
	}
}

func set(bodies []*representation.Body) map[*representation.Body]bool {
	out := make(map[*representation.Body]bool, len(bodies))
	for _, b := range bodies {
		out[b] = true
	}
	return out
}

// TestPackStoresEqualBodiesOnce: bodies with the same bytes and language are
// one body of the pack, stored once, whichever routes name them; the same
// bytes in another language are another body.
func TestPackStoresEqualBodiesOnce(t *testing.T) {
	t.Parallel()
	e := apitest.Effort()
	r := small(t, "15")
	type key struct{ lang, json string }
	distinct := map[key]bool{}
	identity := 0
	for _, d := range r.Docs() {
		if k := (key{d.Lang, string(d.JSON)}); !distinct[k] {
			distinct[k] = true
			identity += len(d.JSON)
		}
	}
	pack := encode(t, r, edition.Options{Effort: e})
	ed := decode(t, pack)
	if len(ed.Bodies()) != len(distinct) || len(set(ed.Bodies())) != len(distinct) {
		t.Errorf("%d bodies (%d distinct), want %d", len(ed.Bodies()), len(set(ed.Bodies())), len(distinct))
	}
	seen := map[key]*representation.Body{}
	for _, rt := range routes(ed) {
		k := key{rt.body.Lang, string(rt.body.JSON)}
		if b := seen[k]; b != nil && b != rt.body {
			t.Fatalf("%s: a second body of the same bytes and language", rt)
		}
		seen[k] = rt.body
	}
	// The pack holds each body's encodings once: its bodies are as long as
	// the bodies of the edition.
	id, gz, br := representation.Sizes(ed.Bodies())
	if id != identity {
		t.Errorf("%d identity bytes, want %d", id, identity)
	}
	if l := layoutOf(t, pack); l.blobLen != id+gz+br {
		t.Errorf("%d bytes of bodies in the pack, want %d", l.blobLen, id+gz+br)
	}

	// A locale sharing en-US's body is the body's second route; a Doc of
	// its own with the same bytes and language changes nothing in the pack.
	c, u, loc := sharedItem(t, r)
	shared := r.Tables[c].Items[u][loc]
	dup := small(t, "15")
	dup.Tables[c].Items[u][loc] = &catalog.Doc{JSON: bytes.Clone(shared.JSON), Lang: shared.Lang}
	if len(dup.Docs()) != len(r.Docs())+1 {
		t.Fatalf("the copy is not a Doc of its own")
	}
	if !bytes.Equal(encode(t, dup, edition.Options{Effort: e}), pack) {
		t.Error("a second Doc of the same bytes and language changed the pack")
	}
	// The same bytes in another language are a body of their own.
	other := small(t, "15")
	other.Tables[c].Items[u][loc] = &catalog.Doc{JSON: bytes.Clone(shared.JSON), Lang: catalog.Locales[loc]}
	oed := decode(t, encode(t, other, edition.Options{Effort: e}))
	if len(oed.Bodies()) != len(ed.Bodies())+1 {
		t.Errorf("%d bodies, want %d", len(oed.Bodies()), len(ed.Bodies())+1)
	}
	if b := oed.Item(c, u, loc); b.Lang != catalog.Locales[loc] || b == oed.Item(c, u, catalog.DefaultLocale) || !bytes.Equal(b.JSON, shared.JSON) {
		t.Errorf("%s/%s in %s: %q, shared with en-US: %v", c.Name(), u, catalog.Locales[loc], b.Lang, b == oed.Item(c, u, catalog.DefaultLocale))
	}
}

// sharedItem finds an item whose body in a locale other than en-US is
// en-US's.
func sharedItem(t testing.TB, r *catalog.Rendered) (catalog.Category, catalog.UUID, int) {
	t.Helper()
	for _, c := range catalog.Categories() {
		for _, u := range r.UUIDs(c) {
			ds := r.Tables[c].Items[u]
			for loc := catalog.DefaultLocale + 1; loc < catalog.NumLocales; loc++ {
				if ds[loc] == ds[catalog.DefaultLocale] {
					return c, u, loc
				}
			}
		}
	}
	t.Fatal("no locale shares en-US's body in the fixture")
	return 0, catalog.UUID{}, 0
}

// TestItems: an edition is the catalog.Items of its version, as the rendered
// version is: the same bodies, and ItemJSON says english exactly when the
// locale's body is en-US's; diffs of editions are diffs of the rendered
// versions.
func TestItems(t *testing.T) {
	t.Parallel()
	e := apitest.Effort()
	r14, r15 := small(t, "14"), small(t, "15")
	eds := map[string][2]*edition.Edition{}
	for nn, r := range map[string]*catalog.Rendered{"14": r14, "15": r15} {
		eds[nn] = [2]*edition.Edition{edition.New(r), decode(t, encode(t, r, edition.Options{Effort: e}))}
		for _, ed := range eds[nn] {
			var items catalog.Items = ed
			english, own := 0, 0
			for _, c := range catalog.Categories() {
				if !reflect.DeepEqual(items.UUIDs(c), r.UUIDs(c)) || len(r.UUIDs(c)) == 0 {
					t.Fatalf("%s: %d items, want %d", c.Name(), len(items.UUIDs(c)), len(r.UUIDs(c)))
				}
				for _, u := range r.UUIDs(c) {
					for loc := range catalog.NumLocales + 1 {
						b, en, _ := items.ItemJSON(c, u, loc)
						wb, wen, _ := r.ItemJSON(c, u, loc)
						shares := loc != catalog.DefaultLocale && ed.Item(c, u, loc) == ed.Item(c, u, catalog.DefaultLocale)
						if !bytes.Equal(b, wb) || !bytes.Equal(b, ed.Item(c, u, loc).JSON) || en != wen || en != shares {
							t.Fatalf("%s/%s locale %d: %d bytes english %v (shares en-US's body: %v), want %d bytes english %v", c.Name(), u, loc, len(b), en, shares, len(wb), wen)
						}
						if en && ed.Item(c, u, loc).Lang != "en-US" {
							t.Fatalf("%s/%s locale %d: english in %q", c.Name(), u, loc, ed.Item(c, u, loc).Lang)
						}
						switch {
						case en:
							english++
						case loc != catalog.DefaultLocale && loc != catalog.AllLocales:
							own++
						}
					}
				}
				if b, en, _ := items.ItemJSON(c, catalog.UUID{0xff}, catalog.DefaultLocale); b != nil || en {
					t.Errorf("%s: an item that is not there: %d bytes, english %v", c.Name(), len(b), en)
				}
			}
			if english == 0 || own == 0 {
				t.Errorf("%s: %d bodies shared with en-US, %d of their own: the fixture does not test both", r.ManifestID, english, own)
			}
		}
	}
	at := time.Date(2026, 3, 4, 5, 6, 7, 0, time.UTC)
	want, err := catalog.Diff(r14, r15, at)
	if err != nil {
		t.Fatal(err)
	}
	if want.Summary.TotalAdded+want.Summary.TotalRemoved+want.Summary.TotalChanged == 0 {
		t.Fatal("the fixture versions do not differ")
	}
	for i := range 2 {
		for _, pair := range [][2]catalog.Items{{eds["14"][i], eds["15"][i]}, {r14, eds["15"][i]}, {eds["14"][i], r15}} {
			got, err := catalog.Diff(pair[0], pair[1], at)
			if err != nil || !reflect.DeepEqual(got, want) {
				t.Errorf("diff of %T and %T: %+v, %v; want %+v", pair[0], pair[1], got.Summary, err, want.Summary)
			}
		}
	}
}

// BenchmarkDecode reads the pack of the newest embedded version, as a server
// does when it swaps one in.
func BenchmarkDecode(b *testing.B) {
	pack := encode(b, newest(b), edition.Options{Effort: apitest.Effort()})
	b.SetBytes(int64(len(pack)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := edition.Decode(pack); err != nil {
			b.Fatal(err)
		}
	}
}
