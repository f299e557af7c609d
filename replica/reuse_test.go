package replica_test

import (
	"bytes"
	"encoding/json"
	"net/http"
	"path/filepath"
	"slices"
	"testing"

	"github.com/refdata/refdata/catalog"
	"github.com/refdata/refdata/fixtures"
	"github.com/refdata/refdata/gen"
	"github.com/refdata/refdata/pipeline"
	"github.com/refdata/refdata/representation"
	"github.com/refdata/refdata/router/apitest"
	"github.com/refdata/refdata/store"
)

// TestSwapKeepsUnchangedBodies: after a swap, every catalog the stored diff
// reports unchanged (no item added, removed or changed in any locale) is
// served with the bytes and ETags it had before the swap, in every encoding
// (the import names the compressed ones where the previous version stored them), so a
// client's cached copy stays valid: If-None-Match with the ETag it got before
// the swap answers 304. A changed catalog gets a new ETag. Versions in
// sequence: the sample's two, then the real en-US captures (the four newest
// under -short; none under the race detector), each swapped to by a replica
// serving the one before, as a long-running replica would.
func TestSwapKeepsUnchangedBodies(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		dirs func(t *testing.T) []string
	}{
		{"sample", func(t *testing.T) []string { return []string{fixtureDir(t, "14"), fixtureDir(t, "15")} }},
		{"upstream-en-US", func(t *testing.T) []string {
			if raceOn {
				t.Skip("the real captures are too slow to import under the race detector; the sample covers the protocol")
			}
			captures, err := filepath.Glob(filepath.Join(fixtures.SharedData(t, "upstream-en-US"), "[0-9][0-9]_*"))
			if err != nil || len(captures) < 2 {
				t.Fatalf("upstream-en-US holds %d captures (%v)", len(captures), err)
			}
			if testing.Short() && len(captures) > 4 {
				captures = captures[len(captures)-4:]
			}
			return captures
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			dirs := tc.dirs(t)
			e := &env{logs: new(syncBuffer)}
			e.dir, e.st = copyStore(t, 0)
			if _, err := importCapture(e.st, dirs[0]); err != nil {
				t.Fatalf("import %s: %v", dirs[0], err)
			}
			e.open(t, nil)
			unchanged, changed := 0, 0
			for _, dir := range dirs[1:] {
				name := filepath.Base(dir)
				prev := e.repo.Active()
				if _, err := importCapture(e.st, dir); err != nil {
					t.Fatalf("import %s: %v", name, err)
				}
				if swapped, err := e.repo.Reload(); !swapped || err != nil {
					t.Fatalf("%s: Reload = %v, %v", name, swapped, err)
				}
				cur := e.repo.Active()
				res, b := e.get(t, "/v1/diff/latest")
				if res.StatusCode != http.StatusOK {
					t.Fatalf("%s: /v1/diff/latest = %d", name, res.StatusCode)
				}
				cats := diffCategories(t, b)
				for _, c := range catalog.Categories() {
					cd, ok := cats[c.Name()]
					if !ok {
						t.Fatalf("%s: the diff has no %s", name, c.Name())
					}
					target := "/v1/" + c.Name()
					if len(cd.Added)+len(cd.Removed)+len(cd.Changed) > 0 {
						changed++
						// Its list in every language changed (the diff compares
						// every locale): a client's copy is stale.
						etag := prev.List(c, catalog.AllLocales).Pick([]string{"br"}).ETag()
						res, _ := e.get(t, target+"?language=all", "Accept-Encoding", "br", "If-None-Match", etag)
						if res.StatusCode != http.StatusOK || res.Header.Get("ETag") == etag {
							t.Errorf("%s: %s changed, but answers %d with ETag %s, as before the swap", name, target, res.StatusCode, res.Header.Get("ETag"))
						}
						continue
					}
					oldList := prev.List(c, catalog.DefaultLocale)
					unchanged++
					for loc := range catalog.NumLocales + 1 {
						where := c.Name() + " " + localeName(loc)
						for _, u := range cur.UUIDs(c) {
							sameBody(t, name+": "+where+" "+u.String(), prev.Item(c, u, loc), cur.Item(c, u, loc))
						}
						if slices.Equal(prev.UUIDs(c), cur.UUIDs(c)) {
							sameBody(t, name+": "+where+" list", prev.List(c, loc), cur.List(c, loc))
						}
					}
					if !slices.Equal(prev.UUIDs(c), cur.UUIDs(c)) {
						continue // the same items in another order: another list
					}
					for _, enc := range []string{"br", "gzip", ""} {
						etag := oldList.Pick([]string{enc}).ETag()
						res, _ := e.get(t, target, "Accept-Encoding", enc, "If-None-Match", etag)
						if res.StatusCode != http.StatusNotModified || res.Header.Get("X-Data-Version") != cur.ManifestID {
							t.Errorf("%s: %s is unchanged, but If-None-Match %s (Accept-Encoding %q) from before the swap answers %d from %s", name, target, etag, enc, res.StatusCode, res.Header.Get("X-Data-Version"))
						}
					}
				}
			}
			if unchanged == 0 || changed == 0 {
				t.Errorf("%d unchanged and %d changed catalogs over the swaps: the test compared nothing of one kind", unchanged, changed)
			}
			t.Logf("%d swaps: %d unchanged catalogs kept their bodies, %d changed", len(dirs)-1, unchanged, changed)
		})
	}
}

// importCapture imports one of a sequence of versions: real captures may
// empty a catalog from one to the next, which the shrink guard would refuse.
func importCapture(st store.Backend, dir string) (*pipeline.Report, error) {
	return pipeline.Import(st, dir, pipeline.Options{Effort: apitest.Effort(), AllowShrink: true})
}

func localeName(loc int) string {
	if loc == catalog.AllLocales {
		return "all"
	}
	return catalog.Locales[loc]
}

// sameBody fails t unless got is want in every encoding: bytes, ETags and
// language.
func sameBody(t *testing.T, where string, want, got *representation.Body) {
	t.Helper()
	if want == nil || got == nil {
		if want != got {
			t.Fatalf("%s: body %v after the swap, %v before", where, got != nil, want != nil)
		}
		return
	}
	wr, gr := want.Representations(), got.Representations()
	if want.Lang != got.Lang || len(wr) != len(gr) {
		t.Fatalf("%s: lang %q, %d encodings after the swap; %q, %d before", where, got.Lang, len(gr), want.Lang, len(wr))
	}
	for i := range wr {
		wb, werr := wr[i].Read()
		gb, gerr := gr[i].Read()
		if werr != nil || gerr != nil {
			t.Fatalf("%s: encoding %q cannot be read: %v after the swap, %v before", where, gr[i].Encoding.Value, gerr, werr)
		}
		if !bytes.Equal(wb, gb) || wr[i].ETag() != gr[i].ETag() || !slices.Equal(wr[i].Encoding.Value, gr[i].Encoding.Value) {
			t.Fatalf("%s: encoding %q differs after the swap (%d bytes, ETag %s; before %d bytes, ETag %s)", where, gr[i].Encoding.Value, len(gb), gr[i].ETag(), len(wb), wr[i].ETag())
		}
	}
}

// diffCategories is a /v1/diff body's categories by name.
func diffCategories(t *testing.T, b []byte) map[string]gen.CategoryDiff {
	t.Helper()
	var body struct {
		Data struct {
			Categories map[string]gen.CategoryDiff `json:"categories"`
		} `json:"data"`
	}
	if err := json.Unmarshal(b, &body); err != nil {
		t.Fatalf("diff body: %v", err)
	}
	return body.Data.Categories
}
