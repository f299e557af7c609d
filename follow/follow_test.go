package follow_test

import (
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/refdata/refdata/fixtures"
	"github.com/refdata/refdata/handler"
	"github.com/refdata/refdata/pipeline"
	"github.com/refdata/refdata/replica"
	"github.com/refdata/refdata/router"
	"github.com/refdata/refdata/router/apitest"
	"github.com/refdata/refdata/store"
)

// origin is a refdata serving a store, every answer checked against
// openapi.yaml on its way out.
type origin struct {
	st   *store.Store
	repo *replica.Repository
	url  string
}

func newOrigin(t *testing.T, first string) *origin {
	t.Helper()
	o := &origin{st: openStore(t)}
	check := apitest.New(t)
	logger := slog.New(slog.DiscardHandler)
	var served http.Handler
	hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		res := check.Do(t, served, r)
		for k, vs := range res.Header {
			w.Header()[k] = vs
		}
		w.WriteHeader(res.StatusCode)
		_, _ = io.Copy(w, res.Body)
	}))
	t.Cleanup(hs.Close)
	o.url = hs.URL
	o.importDir(t, first)
	var err error
	if o.repo, err = replica.Open(o.st, logger, nil, nil); err != nil {
		t.Fatal(err)
	}
	if served, err = router.New(&handler.Server{Repo: o.repo}, logger, router.NewHTTPMetrics(prometheus.NewRegistry())); err != nil {
		t.Fatal(err)
	}
	return o
}

// importDir imports a snapshot into the origin and makes it serve it ("" does nothing).
func (o *origin) importDir(t *testing.T, dir string) {
	t.Helper()
	if dir == "" {
		return
	}
	if _, err := pipeline.Import(o.st, dir, importOptions()); err != nil {
		t.Fatal(err)
	}
	if o.repo != nil {
		if _, err := o.repo.Reload(); err != nil {
			t.Fatal(err)
		}
	}
}

// TestMirrorRefdata: an origin refdata imports versions one by one and a mirror
// syncs from it after each, through the generated client: the mirror serves the
// same bytes (stored files included). The first sync fetches a whole export;
// each later one asks the origin's diff from our version, then the export.
// The versions are the sample's (trimmed with -short), and real captures
// (14 and 15 with -short: a whole export, then a diff; all of them in the full tier) where ../shared/data has
// them; under the race detector only the sample's: it looks for races in the
// mirror's requests and imports, which the data's size does not change.
func TestMirrorRefdata(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		dirs func(t *testing.T) []string
	}{
		{"sample", func(t *testing.T) []string {
			var dirs []string
			for i := range fixtures.Versions() {
				dirs = append(dirs, sampleDir(t, i))
			}
			return dirs
		}},
		{"captures", func(t *testing.T) []string {
			if raceOn {
				t.Skip("the race detector runs the sample versions only")
			}
			captures, _ := filepath.Glob(filepath.Join(fixtures.SharedData(t, "upstream-en-US"), "[0-9][0-9]_*"))
			if len(captures) < 3 {
				t.Fatalf("%d captures, want at least 3", len(captures))
			}
			if !full() {
				captures = captures[len(captures)-2:]
			}
			return captures
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			dirs := tc.dirs(t)
			o := newOrigin(t, dirs[0])
			mirror := openStore(t)
			f := newFollower(t, o.url, mirror, tuning{})
			for i, dir := range dirs {
				if i > 0 {
					o.importDir(t, dir)
				}
				res := mustSync(t, f, "published")
				t.Logf("mirror sync of %s (%s): %d requests, %d bytes, %s; %v", res.ManifestID, filepath.Base(dir), res.Requests, res.Bytes, res.Duration, res.Notes)
				sameServed(t, mirror, o.st, true)
				if i > 0 && len(res.Notes) == 0 {
					t.Errorf("an incremental sync without the origin's diff")
				}
				for _, n := range res.Notes {
					if strings.HasPrefix(n, "our diff") {
						t.Errorf("%s", n)
					}
				}
			}
			mustSync(t, f, "unchanged")
		})
	}
}
