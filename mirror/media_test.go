package mirror_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"io"
	"net/http/httptest"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/refdata/refdata/api/apitest"
	"github.com/refdata/refdata/catalog"
	"github.com/refdata/refdata/media"
	"github.com/refdata/refdata/mirror"
	"github.com/refdata/refdata/representation"
	"github.com/refdata/refdata/store"
	"github.com/refdata/refdata/store/postgres"
	"github.com/refdata/refdata/store/storetest"
	"github.com/refdata/refdata/upstream"
	"github.com/refdata/refdata/upstream/upstreamtest"
)

// TestSyncMedia: sync --media against a stand-in that serves generated PNGs,
// among them a 404, a slow answer, an HTML page, an oversize file and two URLs
// with the same bytes. Every valid file is fetched once and stored once per
// hash, the bad ones are skipped with a reason and never fail the version, a
// later sync fetches only what is new, and with a public media URL the
// rendered bodies point to the mirror for the files it holds. On the file
// store and on PostgreSQL (the media directory beside it).
func TestSyncMedia(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		open func(t *testing.T) store.Backend
	}{
		{"file", func(t *testing.T) store.Backend { return openStore(t) }},
		{"postgres", func(t *testing.T) store.Backend {
			s, err := postgres.Open(context.Background(), storetest.PostgresSchema(t, "media"))
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(s.Close)
			return s
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			syncMedia(t, tc.open(t))
		})
	}
}

func syncMedia(t *testing.T, st store.Backend) {
	vs, err := sampleVersions()
	if err != nil {
		t.Fatal(err)
	}
	// The first version's media paths, and the faults among them.
	var paths []string
	for _, u := range media.URLs(enUS(vs[0]), "") {
		paths = append(paths, upstreamtest.MediaPath(u))
	}
	if len(paths) < 10 {
		t.Fatalf("only %d media URLs in the sample", len(paths))
	}
	bad := map[string]upstreamtest.MediaKind{
		paths[0]: upstreamtest.MediaMissing, paths[1]: upstreamtest.MediaSlow,
		paths[2]: upstreamtest.MediaHTML, paths[3]: upstreamtest.MediaOversize,
	}
	kinds := map[string]upstreamtest.MediaKind{paths[4]: upstreamtest.MediaTwin, paths[5]: upstreamtest.MediaTwin}
	for p, k := range bad {
		kinds[p] = k
	}
	up := upstreamtest.New(vs...)
	up.Media = &upstreamtest.Media{Kinds: kinds, Slow: time.Minute, OversizeBytes: 64 << 10}
	hs := httptest.NewServer(up)
	t.Cleanup(hs.Close)

	mediaRoot := t.TempDir()
	dir, err := media.OpenDir(mediaRoot)
	if err != nil {
		t.Fatal(err)
	}
	// Long enough that a machine busy with parallel tests times out no normal
	// file (a retry would count twice); the slow one waits out any timeout.
	polite := func(base string, maxBody int64) *upstream.Client {
		c, err := upstream.New(upstream.Config{
			BaseURL: base, UserAgent: upstream.UserAgent("test", "https://example.org/ops"),
			RequestTimeout: 2 * time.Second, Retries: 1, Backoff: time.Millisecond, MaxBackoff: 5 * time.Millisecond,
			MaxBodyBytes: maxBody,
		})
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	const public = "https://mirror.example"
	imp := importOptions()
	imp.MediaURL = func(u string) (string, bool) {
		f, ok := dir.Lookup(u)
		return public + f.Path(), ok
	}
	f, err := mirror.New(mirror.Options{
		Client: polite(hs.URL, 0), Store: st, Import: imp, Now: now,
		Media: &mirror.MediaOptions{Client: polite(hs.URL, 16<<10), Dir: dir, Concurrency: 4},
	})
	if err != nil {
		t.Fatal(err)
	}
	res, err := f.Sync(context.Background())
	if err != nil || res.Outcome != "published" {
		t.Fatalf("sync: %v, outcome %q", err, res.Outcome)
	}
	m := res.Media
	var skipped []string
	for _, s := range m.Skipped {
		skipped = append(skipped, strings.TrimPrefix(s.URL, hs.URL))
		if s.Reason == "" {
			t.Errorf("%s skipped with no reason", s.URL)
		}
	}
	slices.Sort(skipped)
	wantSkipped := []string{paths[0], paths[1], paths[2], paths[3]}
	slices.Sort(wantSkipped)
	if !slices.Equal(skipped, wantSkipped) {
		t.Errorf("skipped %v, want the four bad ones %v", skipped, wantSkipped)
	}
	if m.URLs != len(paths) || m.Known != 0 || m.Fetched != len(paths)-4 {
		t.Errorf("media pass: %d URLs, %d known, %d fetched; want %d, 0, %d", m.URLs, m.Known, m.Fetched, len(paths), len(paths)-4)
	}
	// Every valid file fetched once, stored under its hash, the twins once.
	hits := up.Media.Hits()
	for _, p := range paths {
		u := hs.URL + p
		file, ok := dir.Lookup(u)
		if _, isBad := bad[p]; isBad {
			if ok {
				t.Errorf("%s (%v) is in the mirror", p, bad[p])
			}
			continue
		}
		if hits[p] != 1 {
			t.Errorf("%s fetched %d times, want once", p, hits[p])
		}
		want := upstreamtest.PNG(p)
		if kinds[p] == upstreamtest.MediaTwin {
			want = upstreamtest.PNG("twin")
		}
		if !ok || file.ContentType != "image/png" || file.Size != int64(len(want)) {
			t.Fatalf("%s in the mirror: %v %+v", p, ok, file)
		}
		got := readMedia(t, dir, file.SHA256)
		if sum := sha256.Sum256(got); !bytes.Equal(got, want) || hex.EncodeToString(sum[:]) != file.SHA256 {
			t.Errorf("%s: the stored bytes are not the origin's, or not named by their sha256", p)
		}
	}
	if dir.Files() != len(paths)-4-1 {
		t.Errorf("%d files stored for %d valid URLs, two of them twins; want %d", dir.Files(), len(paths)-4, len(paths)-5)
	}
	// The active version is the synced one, its bodies pointing to the mirror
	// where it holds the file, to the origin where it does not.
	active, _, err := st.Active()
	if err != nil || active.ManifestID != vs[0].Name {
		t.Fatalf("active %s (%v), want %s", active.ManifestID, err, vs[0].Name)
	}
	ed, _ := loadEdition(t, st, vs[0].Name)
	var all []byte
	for _, c := range catalog.Categories() {
		if b := ed.List(c, catalog.DefaultLocale); b != nil {
			all = append(all, apitest.JSON(t, b)...)
		}
	}
	twin, _ := dir.Lookup(hs.URL + paths[4])
	if !bytes.Contains(all, []byte(`"`+public+twin.Path()+`"`)) || !bytes.Contains(all, []byte(`"`+hs.URL+paths[0]+`"`)) {
		t.Errorf("rendered bodies: want the mirror's URL for %s and the origin's for the missing %s", paths[4], paths[0])
	}

	// The next version: only its new URLs and the ones skipped are fetched.
	up.Publish(1)
	before := dir.Len()
	res, err = f.Sync(context.Background())
	if err != nil || res.Outcome != "published" {
		t.Fatalf("second sync: %v, outcome %q", err, res.Outcome)
	}
	if res.Media.Known != before {
		t.Errorf("second sync: %d URLs already mirrored, want all %d the first stored", res.Media.Known, before)
	}
	for p, n := range up.Media.Hits() {
		if _, isBad := bad[p]; !isBad && n != 1 {
			t.Errorf("after the second sync %s was fetched %d times, want once", p, n)
		}
	}
	// A reader in another process sees the second sync's files.
	other, err := media.OpenDir(mediaRoot)
	if err != nil {
		t.Fatal(err)
	}
	if other.Len() != dir.Len() || other.Files() != dir.Files() {
		t.Errorf("a second reader sees %d URLs, %d files; the writer %d, %d", other.Len(), other.Files(), dir.Len(), dir.Files())
	}
}

// enUS is a stand-in version's en-US catalog bodies, named as a snapshot's.
func enUS(v upstreamtest.Version) map[string][]byte {
	files := map[string][]byte{}
	for name, bodies := range v.Catalogs {
		if b, ok := bodies["en-US"]; ok {
			files["en-US/"+name+".json"] = b
		} else if b, ok := bodies["*"]; ok && !strings.HasPrefix(name, "locres/") {
			files["en-US/"+name+".json"] = b
		}
	}
	return files
}

func readMedia(t *testing.T, d media.Library, sum string) []byte {
	t.Helper()
	r, err := d.Open(context.Background(), sum)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	b, err := io.ReadAll(r)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// BenchmarkSyncMedia: the media pass of a sync of the first sample version
// (whole without -short) from a local stand-in whose every media URL is a
// generated PNG, into an empty mirror; media_s is the pass alone.
func BenchmarkSyncMedia(b *testing.B) {
	v, err := upstreamtest.FromSnapshot(os.DirFS(sampleDir(b, 0)), ".")
	if err != nil {
		b.Fatal(err)
	}
	up := upstreamtest.New(v)
	up.Media = &upstreamtest.Media{}
	hs := httptest.NewServer(up)
	b.Cleanup(hs.Close)
	var took time.Duration
	files := 0
	for b.Loop() {
		st, err := store.Open(b.TempDir())
		if err != nil {
			b.Fatal(err)
		}
		dir, err := media.OpenDir(b.TempDir())
		if err != nil {
			b.Fatal(err)
		}
		imp := importOptions()
		imp.Effort = representation.Fast
		f, err := mirror.New(mirror.Options{Client: newClient(b, hs.URL, 0), Store: st, Import: imp, Now: now,
			Media: &mirror.MediaOptions{Client: newClient(b, hs.URL, 1<<20), Dir: dir, Concurrency: upstream.DefaultConcurrency}})
		if err != nil {
			b.Fatal(err)
		}
		res, err := f.Sync(context.Background())
		if err != nil || res.Outcome != "published" || len(res.Media.Skipped) > 0 {
			b.Fatalf("sync: %v", err)
		}
		took += res.Media.Took
		files = dir.Files()
	}
	b.ReportMetric(took.Seconds()/float64(b.N), "media_s/op")
	b.ReportMetric(float64(files), "files")
}

func newClient(t testing.TB, base string, maxBody int64) *upstream.Client {
	c, err := upstream.New(upstream.Config{BaseURL: base, UserAgent: upstream.UserAgent("bench", ""), MaxBodyBytes: maxBody})
	if err != nil {
		t.Fatal(err)
	}
	return c
}
