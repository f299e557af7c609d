package follow_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"testing/fstest"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/refdata/refdata/catalog"
	"github.com/refdata/refdata/follow"
	"github.com/refdata/refdata/media"
	"github.com/refdata/refdata/representation"
	"github.com/refdata/refdata/router/apitest"
	"github.com/refdata/refdata/store"
	"github.com/refdata/refdata/store/postgres"
	"github.com/refdata/refdata/store/storetest"
	"github.com/refdata/refdata/upstream"
	"github.com/refdata/refdata/upstream/upstreamtest"
)

// TestSyncMedia: sync --media against a stand-in that serves generated PNGs,
// among them a 404, a slow answer, an HTML page, an oversize file and two URLs
// with the same bytes, and the hostile URLs of issue 60 (another port of
// 127.0.0.1, [::1], user:pw@, 169.254.169.254, redirects to those two, an SVG
// with a script, HTML labelled PNG), over a mirror already holding what its
// checks now refuse. Every valid file is fetched once and stored once per
// hash; the bad and hostile ones are skipped with their class and reason,
// the internal server is never reached, and the version is published all the
// same; what the mirror held wrongly leaves its index and directory. A later
// sync fetches only what is new, and with a public media URL the rendered
// bodies point to the mirror for the files it holds. On the file store and on
// PostgreSQL (the media directory beside it).
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
	for _, u := range mediaURLs(t, vs[0]) {
		paths = append(paths, upstreamtest.MediaPath(u))
	}
	const nBad, nTwins, nSeeded = 4, 2, 2
	nHostile := len(upstreamtest.HostileKinds)
	if len(paths) < nBad+nTwins+nHostile+nSeeded+4 {
		t.Fatalf("only %d media URLs in the sample", len(paths))
	}
	bad := map[string]upstreamtest.MediaKind{
		paths[0]: upstreamtest.MediaMissing, paths[1]: upstreamtest.MediaSlow,
		paths[2]: upstreamtest.MediaHTML, paths[3]: upstreamtest.MediaOversize,
	}
	wantClass := map[string]string{paths[0]: follow.MediaStatus, paths[1]: follow.MediaUnreachable, paths[2]: follow.MediaType, paths[3]: follow.MediaTooBig}
	wantSays := map[string]string{paths[0]: "status 404", paths[1]: "request timeout", paths[2]: "content type text/html is not served", paths[3]: "larger than the limit"}
	for i, h := range upstreamtest.HostileKinds {
		p := paths[nBad+nTwins+i]
		bad[p], wantClass[p], wantSays[p] = h.Kind, h.Class, h.Says
	}
	kinds := map[string]upstreamtest.MediaKind{paths[4]: upstreamtest.MediaTwin, paths[5]: upstreamtest.MediaTwin}
	for p, k := range bad {
		kinds[p] = k
	}
	internal := upstreamtest.NewInternal()
	t.Cleanup(internal.Close)
	up := upstreamtest.New(vs...)
	up.Media = &upstreamtest.Media{Kinds: kinds, Slow: time.Minute, OversizeBytes: 64 << 10, Internal: internal.Addr}
	hs := httptest.NewServer(up)
	t.Cleanup(hs.Close)
	host := hs.Listener.Addr().String()
	urlOf := func(p string) string { return up.Media.URL(host, p) }

	// The mirror as an older refdata left it: an SVG and HTML labelled PNG
	// stored for two of the catalogs' URLs, and a PNG fetched from the
	// internal server.
	mediaRoot := t.TempDir()
	seeded := paths[nBad+nTwins+nHostile : nBad+nTwins+nHostile+nSeeded]
	var index strings.Builder
	var seededFiles []string
	seed := func(u, ct string, body []byte) {
		sum := sha256.Sum256(body)
		name := hex.EncodeToString(sum[:])
		seededFiles = append(seededFiles, name)
		if err := os.WriteFile(filepath.Join(mediaRoot, name), body, 0o644); err != nil {
			t.Fatal(err)
		}
		fmt.Fprintf(&index, `{"url":%q,"sha256":%q,"contentType":%q,"size":%d}`+"\n", u, name, ct, len(body))
	}
	seed(urlOf(seeded[0]), "image/svg+xml", []byte(`<svg xmlns="http://www.w3.org/2000/svg"><script>alert(1)</script></svg>`))
	seed(urlOf(seeded[1]), "image/png", []byte("<!DOCTYPE html><html><body>TOP-SECRET</body></html>"))
	seed("http://"+internal.Addr+"/secret.png", "image/png", upstreamtest.PNG("secret"))
	if err := os.WriteFile(filepath.Join(mediaRoot, media.IndexFile), []byte(index.String()), 0o644); err != nil {
		t.Fatal(err)
	}
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
	const public = "https://follow.example"
	imp := importOptions()
	imp.MediaURL = func(u string) (string, bool) {
		f, ok := dir.Lookup(u)
		return public + f.Path(), ok
	}
	reg := prometheus.NewRegistry()
	// The stand-in is on 127.0.0.1: --from naming it by address allows its
	// loopback address (upstream.HostPolicy), and nothing else on loopback.
	f, err := follow.New(follow.Options{
		Client: polite(hs.URL, 0), Store: st, Import: imp, Now: now, Metrics: follow.NewMetrics(reg),
		Media: &follow.MediaOptions{Client: polite(hs.URL, 16<<10), Dir: dir, Concurrency: 4},
	})
	if err != nil {
		t.Fatal(err)
	}
	res, err := f.Sync(context.Background())
	if err != nil || res.Outcome != "published" {
		t.Fatalf("sync: %v, outcome %q", err, res.Outcome)
	}
	m := res.Media
	skipped := map[string]follow.MediaSkip{}
	for _, s := range m.Skipped {
		skipped[s.URL] = s
	}
	for p := range bad {
		s, ok := skipped[urlOf(p)]
		switch {
		case !ok:
			t.Errorf("%s (%v, named %s) is not reported skipped", p, bad[p], urlOf(p))
		case s.Class != wantClass[p] || !strings.Contains(s.Reason, wantSays[p]):
			t.Errorf("%s skipped as %s: %q; want %s saying %q", urlOf(p), s.Class, s.Reason, wantClass[p], wantSays[p])
		}
	}
	if len(m.Skipped) != len(bad) {
		t.Errorf("%d skipped, want the %d bad ones: %v", len(m.Skipped), len(bad), m.Skipped)
	}
	if m.URLs != len(paths) || m.Known != 0 || m.Fetched != len(paths)-len(bad) {
		t.Errorf("media pass: %d URLs, %d known, %d fetched; want %d, 0, %d", m.URLs, m.Known, m.Fetched, len(paths), len(paths)-len(bad))
	}
	dropped := map[string]string{}
	for _, d := range m.Dropped {
		dropped[d.URL] = d.Class + ": " + d.Reason
	}
	for u, want := range map[string]string{
		urlOf(seeded[0]): "type: content type image/svg+xml is not served",
		urlOf(seeded[1]): "type: declared image/png but the bytes are HTML",
		"http://" + internal.Addr + "/secret.png": "refused: refused: port",
	} {
		if !strings.HasPrefix(dropped[u], want) {
			t.Errorf("the mirror's old %s: dropped as %q, want %q", u, dropped[u], want)
		}
	}
	if len(m.Dropped) != 3 {
		t.Errorf("dropped %v, want the three seeded", m.Dropped)
	}
	if n := internal.Hits(); n != 0 {
		t.Errorf("the internal server was reached %d times", n)
	}
	// Every valid file fetched once, stored under its hash, the twins once;
	// the hostile ones reached no further than the stand-in's own answer.
	hits := up.Media.Hits()
	for _, p := range paths {
		file, ok := dir.Lookup(urlOf(p))
		if _, isBad := bad[p]; isBad {
			if ok {
				t.Errorf("%s (%v) is in the mirror", p, bad[p])
			}
			switch bad[p] {
			case upstreamtest.MediaOtherPort, upstreamtest.MediaIPv6Loopback, upstreamtest.MediaUserinfo, upstreamtest.MediaMetadata:
				if hits[p] != 0 {
					t.Errorf("%s (%v) reached the stand-in %d times; it is refused before any request", p, bad[p], hits[p])
				}
			case upstreamtest.MediaRedirectOut, upstreamtest.MediaRedirectMetadata, upstreamtest.MediaSVG, upstreamtest.MediaHTMLAsPNG:
				if hits[p] != 1 {
					t.Errorf("%s (%v) fetched %d times, want once: a refusal is not retried", p, bad[p], hits[p])
				}
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
	if dir.Files() != len(paths)-len(bad)-1 {
		t.Errorf("%d files stored for %d valid URLs, two of them twins; want %d", dir.Files(), len(paths)-len(bad), len(paths)-len(bad)-1)
	}
	for _, name := range seededFiles {
		if _, err := os.Stat(filepath.Join(mediaRoot, name)); !errors.Is(err, fs.ErrNotExist) {
			t.Errorf("the dropped file %s is still in the directory (%v)", name, err)
		}
	}
	idx, _ := os.ReadFile(filepath.Join(mediaRoot, media.IndexFile))
	for _, u := range []string{urlOf(seeded[0]) + `","sha256":"` + seededFiles[0], urlOf(seeded[1]) + `","sha256":"` + seededFiles[1], internal.Addr} {
		if bytes.Contains(idx, []byte(u)) {
			t.Errorf("the index still names %s", u)
		}
	}
	for outcome, want := range map[string]int{
		"fetched": len(paths) - len(bad), "dropped": 3, follow.MediaRefused: 6, follow.MediaType: 3,
		follow.MediaStatus: 1, follow.MediaUnreachable: 1, follow.MediaTooBig: 1, follow.MediaDeadline: 0,
	} {
		if got := counter(t, reg, "refdata_sync_media_total", "outcome", outcome); got != float64(want) {
			t.Errorf("refdata_sync_media_total{outcome=%q} = %v, want %d", outcome, got, want)
		}
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
	twin, _ := dir.Lookup(urlOf(paths[4]))
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
	if res.Media.Known != before || len(res.Media.Dropped) != 0 {
		t.Errorf("second sync: %d URLs already mirrored, %d dropped; want all %d the first stored, none dropped", res.Media.Known, len(res.Media.Dropped), before)
	}
	for p, n := range up.Media.Hits() {
		if _, isBad := bad[p]; !isBad && n != 1 {
			t.Errorf("after the second sync %s was fetched %d times, want once", p, n)
		}
	}
	if n := internal.Hits(); n != 0 {
		t.Errorf("the internal server was reached %d times", n)
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

// counter is the value of a counter with the label name=value in reg.
func counter(t *testing.T, reg *prometheus.Registry, metric, name, value string) float64 {
	t.Helper()
	families, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range families {
		if f.GetName() != metric {
			continue
		}
		for _, m := range f.GetMetric() {
			for _, l := range m.GetLabel() {
				if l.GetName() == name && l.GetValue() == value {
					return m.GetCounter().GetValue()
				}
			}
		}
	}
	t.Fatalf("no %s{%s=%q}", metric, name, value)
	return 0
}

// enUS is a stand-in version's en-US catalog bodies, named as a snapshot's.
func enUS(v upstreamtest.Version) fstest.MapFS {
	files := fstest.MapFS{}
	for name, bodies := range v.Catalogs {
		if b, ok := bodies["en-US"]; ok {
			files["en-US/"+strings.ReplaceAll(name, "/", "-")+".json"] = &fstest.MapFile{Data: b}
		} else if b, ok := bodies["*"]; ok && !strings.HasPrefix(name, "locres/") {
			files["en-US/"+strings.ReplaceAll(name, "/", "-")+".json"] = &fstest.MapFile{Data: b}
		}
	}
	return files
}

// mediaURLs is media.URLs of a stand-in version's en-US bodies.
func mediaURLs(t *testing.T, v upstreamtest.Version) []string {
	t.Helper()
	urls, err := media.URLs(enUS(v), "")
	if err != nil {
		t.Fatal(err)
	}
	return urls
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
		f, err := follow.New(follow.Options{Client: newClient(b, hs.URL, 0), Store: st, Import: imp, Now: now,
			Media: &follow.MediaOptions{Client: newClient(b, hs.URL, 1<<20), Dir: dir, Concurrency: upstream.DefaultConcurrency}})
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

// logRecords is a slog.Handler that keeps every record, each as its message
// and its attributes' text, for a test to count; seen, when set, is told each.
type logRecords struct {
	mu    sync.Mutex
	lines []string
	seen  func(msg string)
}

func (l *logRecords) Enabled(context.Context, slog.Level) bool { return true }
func (l *logRecords) WithAttrs([]slog.Attr) slog.Handler       { return l }
func (l *logRecords) WithGroup(string) slog.Handler            { return l }
func (l *logRecords) Handle(_ context.Context, r slog.Record) error {
	line := r.Level.String() + " " + r.Message
	r.Attrs(func(a slog.Attr) bool {
		line += " " + a.Key + "=" + a.Value.String()
		return true
	})
	l.mu.Lock()
	l.lines = append(l.lines, line)
	seen := l.seen
	l.mu.Unlock()
	if seen != nil {
		seen(r.Message)
	}
	return nil
}

func (l *logRecords) all() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return slices.Clone(l.lines)
}

// mediaStandIn serves the first sample version with the given media kinds
// and returns it, its URL and its media paths (sorted).
func mediaStandIn(t *testing.T, m *upstreamtest.Media, kinds func(paths []string) map[string]upstreamtest.MediaKind) (*upstreamtest.Server, *httptest.Server, []string) {
	t.Helper()
	vs, err := sampleVersions()
	if err != nil {
		t.Fatal(err)
	}
	var paths []string
	for _, u := range mediaURLs(t, vs[0]) {
		paths = append(paths, upstreamtest.MediaPath(u))
	}
	m.Kinds = kinds(paths)
	up := upstreamtest.New(vs...)
	up.Media = m
	hs := httptest.NewServer(up)
	t.Cleanup(hs.Close)
	return up, hs, paths
}

// mediaClient is a media client of base allowing hosts, counting its
// attempts that got no answer (status "0").
func mediaClient(t *testing.T, base string, maxBody int64, hosts []string, noAnswer *atomic.Int64) *upstream.Client {
	t.Helper()
	c, err := upstream.New(upstream.Config{
		BaseURL: base, UserAgent: upstream.UserAgent("test", "https://example.org/ops"),
		RequestTimeout: 10 * time.Second, Retries: 4, Backoff: time.Millisecond, MaxBackoff: 5 * time.Millisecond,
		MaxBodyBytes: maxBody, MediaHosts: hosts,
		Observe: func(status string, _ int64) {
			if status == "0" && noAnswer != nil {
				noAnswer.Add(1)
			}
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// TestSyncMediaUnreachable (issue 62): most of a version's media on a host
// that does not resolve and on an address where nothing listens, both
// allowed by --media-host. Each host is down after three failed connections:
// its other URLs are skipped as unreachable without a request, so the pass
// makes at most 3 + concurrency − 1 attempts per host (the count is the
// test, not the time: by hand the real binary takes seconds, BENCHMARKS.md);
// the log says at most five lines per host however many URLs it has; the
// rest is fetched and the version published.
func TestSyncMediaUnreachable(t *testing.T) {
	t.Parallel()
	closed := httptest.NewServer(http.NotFoundHandler())
	closedAddr := closed.Listener.Addr().String()
	closed.Close()
	const fine = 5
	m := &upstreamtest.Media{Closed: closedAddr}
	_, hs, paths := mediaStandIn(t, m, func(paths []string) map[string]upstreamtest.MediaKind {
		kinds := map[string]upstreamtest.MediaKind{}
		for i, p := range paths[:len(paths)-fine] {
			kinds[p] = upstreamtest.MediaNoSuchHost
			if i%2 == 1 {
				kinds[p] = upstreamtest.MediaClosedPort
			}
		}
		return kinds
	})
	unreachable := len(paths) - fine
	if unreachable < 20 {
		t.Fatalf("only %d media URLs in the sample", len(paths))
	}
	var noAnswer atomic.Int64
	const concurrency = 4
	logs := &logRecords{}
	dir, err := media.OpenDir(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	reg := prometheus.NewRegistry()
	st := openStore(t)
	f, err := follow.New(follow.Options{
		Client: newClient(t, hs.URL, 0), Store: st, Import: importOptions(), Now: now, Logger: slog.New(logs), Metrics: follow.NewMetrics(reg),
		Media: &follow.MediaOptions{Client: mediaClient(t, hs.URL, 1<<20, []string{upstreamtest.DefaultNoSuchHost, closedAddr}, &noAnswer), Dir: dir, Concurrency: concurrency},
	})
	if err != nil {
		t.Fatal(err)
	}
	res, err := f.Sync(context.Background())
	if err != nil || res.Outcome != "published" {
		t.Fatalf("sync: %v, outcome %q", err, res.Outcome)
	}
	r := res.Media
	if r.Fetched != fine || len(r.Skipped) != unreachable {
		t.Errorf("%d fetched, %d skipped; want %d and %d", r.Fetched, len(r.Skipped), fine, unreachable)
	}
	for _, s := range r.Skipped {
		if s.Class != follow.MediaUnreachable || !s.Retry.IsZero() {
			t.Errorf("%s: %s, %q, retry %v; want unreachable, tried at the next pass", s.URL, s.Class, s.Reason, s.Retry)
			break
		}
	}
	hosts := []string{closedAddr, upstreamtest.DefaultNoSuchHost}
	var down []string
	for _, d := range r.Down {
		down = append(down, d.Host)
	}
	if slices.Sort(down); !slices.Equal(down, hosts) {
		t.Errorf("hosts down %v, want %v", down, hosts)
	}
	if n, most := noAnswer.Load(), int64(len(hosts)*(follow.DefaultMediaHostFailures+concurrency-1)); n > most {
		t.Errorf("%d attempts without an answer for %d unreachable URLs on %d hosts; want at most %d", n, unreachable, len(hosts), most)
	}
	lines := logs.all()
	for _, host := range []string{upstreamtest.DefaultNoSuchHost, closedAddr} {
		var of []string
		for _, l := range lines {
			if strings.Contains(l, host) {
				of = append(of, l)
			}
		}
		if len(of) == 0 || len(of) > 5 {
			t.Errorf("%d log lines name %s, want 1 to 5:\n%s", len(of), host, strings.Join(of, "\n"))
		}
	}
	if got := counter(t, reg, "refdata_sync_media_total", "outcome", follow.MediaUnreachable); got != float64(unreachable) {
		t.Errorf("refdata_sync_media_total{outcome=unreachable} = %v, want %d", got, unreachable)
	}
	state, err := follow.ReadState(st)
	if err != nil || state.Media == nil || state.Media.Files[follow.MediaUnreachable] != unreachable || state.Media.Files["fetched"] != fine {
		t.Errorf("sync state's media: %+v (%v); want %d unreachable, %d fetched", state.Media, err, unreachable, fine)
	}
}

// TestSyncMediaBackoff: a 404 is remembered in the mirror's failed.jsonl and
// not fetched again before its backoff (1 h, then 2 h, …); a pass meanwhile
// counts it deferred. A change of the settings that decided it (here the
// size cap) has it tried at once. The clock is the follower's.
func TestSyncMediaBackoff(t *testing.T) {
	t.Parallel()
	m := &upstreamtest.Media{}
	var missing string
	_, hs, _ := mediaStandIn(t, m, func(paths []string) map[string]upstreamtest.MediaKind {
		missing = paths[0]
		return map[string]upstreamtest.MediaKind{missing: upstreamtest.MediaMissing}
	})
	st := openStore(t)
	root := t.TempDir()
	dir, err := media.OpenDir(root)
	if err != nil {
		t.Fatal(err)
	}
	var clock time.Time
	follower := func(maxBody int64) *follow.Follower {
		f, err := follow.New(follow.Options{
			Client: newClient(t, hs.URL, 0), Store: st, Import: importOptions(), Now: func() time.Time { return clock },
			ContentCheck: time.Minute, // every sync here fetches whole, so its media pass runs
			Media:        &follow.MediaOptions{Client: mediaClient(t, hs.URL, maxBody, nil, nil), Dir: dir, Concurrency: 4},
		})
		if err != nil {
			t.Fatal(err)
		}
		return f
	}
	f := follower(1 << 20)
	for _, step := range []struct {
		after     time.Duration // since the first sync
		other     bool          // a follower with another size cap
		wantHits  int
		wantRetry time.Duration // since the first sync
		deferred  bool
	}{
		{0, false, 1, time.Hour, false},
		{30 * time.Minute, false, 1, time.Hour, true},
		{59 * time.Minute, false, 1, time.Hour, true},
		{61 * time.Minute, false, 2, 61*time.Minute + 2*time.Hour, false},
		{3 * time.Hour, false, 2, 61*time.Minute + 2*time.Hour, true},
		{3*time.Hour + 2*time.Minute, false, 3, 3*time.Hour + 2*time.Minute + 4*time.Hour, false},
		{3*time.Hour + 3*time.Minute, true, 4, 3*time.Hour + 3*time.Minute + time.Hour, false},
	} {
		clock = fixed.Add(step.after)
		if step.other {
			f = follower(2 << 20)
		}
		res, err := f.Sync(context.Background())
		if err != nil || res.Media == nil {
			t.Fatalf("at +%s: %v, media %v", step.after, err, res.Media)
		}
		r := res.Media
		var s follow.MediaSkip
		switch {
		case step.deferred && len(r.Deferred) == 1 && len(r.Skipped) == 0:
			s = r.Deferred[0]
		case !step.deferred && len(r.Skipped) == 1 && len(r.Deferred) == 0:
			s = r.Skipped[0]
		default:
			t.Fatalf("at +%s: skipped %v, deferred %v; want the 404 only, deferred %v", step.after, r.Skipped, r.Deferred, step.deferred)
		}
		if hits := m.Hits()[missing]; hits != step.wantHits || s.Class != follow.MediaStatus || !s.Retry.Equal(fixed.Add(step.wantRetry)) {
			t.Errorf("at +%s: %d requests for the 404, %s retried at +%s; want %d, status, +%s",
				step.after, hits, s.Class, s.Retry.Sub(fixed), step.wantHits, step.wantRetry)
		}
		state, err := follow.ReadState(st)
		wantDeferred := map[bool]int{true: 1}[step.deferred]
		if err != nil || state.Media.Files[follow.MediaDeferred] != wantDeferred || state.Media.Files[follow.MediaStatus] != 1-wantDeferred {
			t.Errorf("at +%s: the state's media files %v (%v); want deferred %d, status %d", step.after, state.Media.Files, err, wantDeferred, 1-wantDeferred)
		}
	}
	if _, err := os.Stat(filepath.Join(root, media.FailedFile)); err != nil {
		t.Errorf("no %s in the mirror: %v", media.FailedFile, err)
	}
}

// TestSyncMediaProgress: off a terminal (no Progress) a running media pass
// logs its counts every LogEvery; here a file is held until that line is
// logged, so it is. With Progress, it is told each file done up to the last.
func TestSyncMediaProgress(t *testing.T) {
	t.Parallel()
	for _, withProgress := range []bool{false, true} {
		t.Run(fmt.Sprintf("progress=%v", withProgress), func(t *testing.T) {
			t.Parallel()
			release := make(chan struct{})
			var once sync.Once
			free := func() { once.Do(func() { close(release) }) }
			t.Cleanup(free)
			m := &upstreamtest.Media{Release: release}
			_, hs, paths := mediaStandIn(t, m, func(paths []string) map[string]upstreamtest.MediaKind {
				return map[string]upstreamtest.MediaKind{paths[0]: upstreamtest.MediaSlow}
			})
			logs := &logRecords{seen: func(msg string) {
				if msg == "media pass" {
					free()
				}
			}}
			var mu sync.Mutex
			var last [2]int
			var progress func(string, int, int)
			if withProgress {
				progress = func(step string, done, total int) {
					if step != "media" {
						return
					}
					free()
					mu.Lock()
					last = [2]int{done, total}
					mu.Unlock()
				}
			}
			dir, err := media.OpenDir(t.TempDir())
			if err != nil {
				t.Fatal(err)
			}
			f, err := follow.New(follow.Options{
				Client: newClient(t, hs.URL, 0), Store: openStore(t), Import: importOptions(), Now: now, Logger: slog.New(logs), Progress: progress,
				Media: &follow.MediaOptions{Client: mediaClient(t, hs.URL, 1<<20, nil, nil), Dir: dir, Concurrency: 4, LogEvery: time.Millisecond},
			})
			if err != nil {
				t.Fatal(err)
			}
			res, err := f.Sync(context.Background())
			if err != nil || res.Media.Fetched != len(paths) {
				t.Fatalf("sync: %v, %d of %d fetched", err, res.Media.Fetched, len(paths))
			}
			var passLines []string
			for _, l := range logs.all() {
				if strings.HasPrefix(l, "INFO media pass ") {
					passLines = append(passLines, l)
				}
			}
			switch {
			case withProgress && last != [2]int{len(paths), len(paths)}:
				t.Errorf("progress last told %d/%d, want %d/%d", last[0], last[1], len(paths), len(paths))
			case !withProgress && (len(passLines) == 0 || !strings.Contains(passLines[0], fmt.Sprintf(" of=%d ", len(paths)))):
				t.Errorf("no media pass line with the count to do (%d): %q", len(paths), passLines)
			}
		})
	}
}
