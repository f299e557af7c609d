package media_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"testing/fstest"
	"time"

	"github.com/refdata/refdata/media"
)

// Sample bodies of each kind: the signatures Sniff knows, then any bytes.
var (
	pngA = []byte("\x89PNG\r\n\x1a\nsame")
	webm = []byte("\x1a\x45\xdf\xa3\x9f\x42\x86\x81\x01\x42\x82\x84webm\x42\x87\x81\x04other")
)

// TestDir: files by hash, stored once; the index read back by another reader,
// a half-written last line left for later; hashes checked before they name a
// file.
func TestDir(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	d, err := media.OpenDir(root)
	if err != nil {
		t.Fatal(err)
	}
	a, err := d.Put("https://m.example/a.png", "image/png", pngA)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := d.Put("https://m.example/b.png", "image/png; charset=binary", pngA)
	c, _ := d.Put("https://m.example/c.webm", "video/webm", webm)
	if a != b || a.SHA256 == c.SHA256 || d.Files() != 2 || d.Len() != 3 {
		t.Fatalf("a %+v b %+v c %+v; %d files, %d URLs; want a = b, 2 files, 3 URLs", a, b, c, d.Files(), d.Len())
	}
	if sum := sha256.Sum256(pngA); a.SHA256 != hex.EncodeToString(sum[:]) || a.Size != int64(len(pngA)) || c.ContentType != "video/webm" {
		t.Fatalf("a %+v c %+v: want a named by the sha256 of its bytes", a, c)
	}
	entries, _ := os.ReadDir(root)
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	want := []string{a.SHA256, c.SHA256, media.IndexFile}
	slices.Sort(want)
	if !slices.Equal(names, want) {
		t.Fatalf("directory holds %v, want %v (no temporary files)", names, want)
	}
	// The index's keys are the ones docs/sync.md names.
	idxBytes, _ := os.ReadFile(filepath.Join(root, media.IndexFile))
	first, _, _ := strings.Cut(string(idxBytes), "\n")
	if wantLine := `{"url":"https://m.example/a.png","sha256":"` + a.SHA256 + `","contentType":"image/png","size":12}`; first != wantLine {
		t.Fatalf("index line %s, want %s", first, wantLine)
	}

	// Another process's reader; a write in progress is not read until whole.
	r, err := media.OpenDir(root)
	if err != nil || r.Len() != 3 || r.Files() != 2 {
		t.Fatalf("second reader: %v, %d URLs, %d files", err, r.Len(), r.Files())
	}
	idx, _ := os.OpenFile(filepath.Join(root, media.IndexFile), os.O_WRONLY|os.O_APPEND, 0)
	_, _ = idx.WriteString(`{"url":"https://m.example/d.png","sha256":"` + a.SHA256 + `","contentType":"image/png"`)
	if err := r.Reload(); err != nil || r.Len() != 3 {
		t.Fatalf("a half-written line was read: %v, %d URLs", err, r.Len())
	}
	_, _ = idx.WriteString(",\"size\":12}\n")
	_ = idx.Close()
	if err := r.Reload(); err != nil || r.Len() != 4 {
		t.Fatalf("the completed line was not read: %v, %d URLs", err, r.Len())
	}
	if f, ok := r.Lookup("https://m.example/c.webm"); !ok || f != c {
		t.Fatalf("Lookup c: %+v %v", f, ok)
	}

	for _, tc := range []struct {
		sum  string
		want []byte
	}{
		{a.SHA256, pngA},
		{c.SHA256, webm},
	} {
		f, err := r.Open(context.Background(), tc.sum)
		if err != nil {
			t.Fatal(err)
		}
		got, _ := io.ReadAll(f)
		_ = f.Close()
		if !bytes.Equal(got, tc.want) {
			t.Errorf("Open %s: %q, want %q", tc.sum, got, tc.want)
		}
	}
	for _, bad := range []string{"", "../index.jsonl", media.IndexFile, "A" + a.SHA256[1:], a.SHA256[:63], "0000000000000000000000000000000000000000000000000000000000000000"} {
		if _, err := r.Open(context.Background(), bad); !errors.Is(err, fs.ErrNotExist) {
			t.Errorf("Open %q: %v, want fs.ErrNotExist", bad, err)
		}
	}
	// What Check refuses is not stored.
	for _, tc := range []struct{ ct, body string }{
		{"image/svg+xml", `<svg xmlns="http://www.w3.org/2000/svg"><script>alert(1)</script></svg>`},
		{"image/png", "<html><body>TOP-SECRET</body></html>"},
	} {
		var te *media.TypeError
		if _, err := d.Put("https://m.example/bad", tc.ct, []byte(tc.body)); !errors.As(err, &te) {
			t.Errorf("Put %s %q: %v, want a *TypeError", tc.ct, tc.body, err)
		}
	}
	if _, ok := d.Lookup("https://m.example/bad"); ok || d.Files() != 2 {
		t.Errorf("a refused body is in the mirror (%d files)", d.Files())
	}
}

// TestDirChecksWhatItServes: a mirror written before the checks (or changed
// on disk) holds an SVG, HTML labelled PNG, a file cut short, a missing one.
// A reader takes none of them and opens none of their files; Prune writes the
// index anew without them (and without the URLs keep refuses), removes the
// files only they named, and a reader in another process reads the new index
// whole.
func TestDirChecksWhatItServes(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	hash := func(b []byte) string {
		sum := sha256.Sum256(b)
		return hex.EncodeToString(sum[:])
	}
	var index strings.Builder
	file := func(url, ct string, body []byte, size int) string {
		sum := hash(body)
		if body != nil {
			if err := os.WriteFile(filepath.Join(root, sum), body, 0o644); err != nil {
				t.Fatal(err)
			}
		}
		// The keys as an older refdata wrote them (no tags): JSON reads either.
		fmt.Fprintf(&index, `{"url":%q,"SHA256":%q,"ContentType":%q,"Size":%d}`+"\n", url, sum, ct, size)
		return sum
	}
	svg := []byte(`<svg xmlns="http://www.w3.org/2000/svg"><script>alert(1)</script></svg>`)
	html := []byte("<!DOCTYPE html><html><body>TOP-SECRET</body></html>")
	good := file("https://m.example/good.png", "image/png", pngA, len(pngA))
	file("https://m.example/twin.png", "image/png", pngA, len(pngA))
	evil := file("https://m.example/evil.svg", "image/svg+xml", svg, len(svg))
	page := file("https://m.example/page.png", "image/png", html, len(html))
	short := file("https://m.example/short.webm", "video/webm", webm, len(webm)+10)
	file("https://m.example/gone.png", "image/png", nil, 40)
	other := file("http://127.0.0.1:9/internal.webm", "video/webm", webm[:len(webm)-1], len(webm)-1)
	index.WriteString("not json\n")
	if err := os.WriteFile(filepath.Join(root, media.IndexFile), []byte(index.String()), 0o644); err != nil {
		t.Fatal(err)
	}

	d, err := media.OpenDir(root)
	if err != nil {
		t.Fatal(err)
	}
	server, _ := media.OpenDir(root) // another process's, reading the same directory
	for _, lib := range []*media.Dir{d, server} {
		if lib.Len() != 3 || lib.Files() != 2 {
			t.Fatalf("%d URLs, %d files taken; want good.png, twin.png and internal.webm, 2 files", lib.Len(), lib.Files())
		}
		for _, sum := range []string{evil, page, short} {
			if _, err := lib.Open(context.Background(), sum); !errors.Is(err, fs.ErrNotExist) {
				t.Errorf("Open %s (not taken): %v, want fs.ErrNotExist", sum, err)
			}
		}
	}

	internal := errors.New("host 127.0.0.1:9 is not a media host")
	dropped, err := d.Prune(func(u string) error {
		if strings.HasPrefix(u, "http://127.0.0.1:9/") {
			return internal
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{
		"https://m.example/evil.svg":       "content type image/svg+xml is not served (raster images and video only)",
		"https://m.example/page.png":       "declared image/png but the bytes are HTML",
		"https://m.example/short.webm":     fmt.Sprintf("is not the %d bytes the index says", len(webm)+10),
		"https://m.example/gone.png":       "its file cannot be read",
		"http://127.0.0.1:9/internal.webm": internal.Error(),
		"":                                 "not an index line",
	}
	if len(dropped) != len(want) {
		t.Errorf("dropped %+v, want %d lines", dropped, len(want))
	}
	for _, x := range dropped {
		if w, ok := want[x.URL]; !ok || !strings.Contains(x.Reason, w) {
			t.Errorf("dropped %s: %q, want a reason saying %q", x.URL, x.Reason, w)
		}
	}
	entries, _ := os.ReadDir(root)
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	if !slices.Equal(names, []string{good, media.IndexFile}) && !slices.Equal(names, []string{media.IndexFile, good}) {
		t.Errorf("after Prune the directory holds %v, want only %s and the index (%s, %s, %s and %s removed)", names, good, evil, page, short, other)
	}
	idx, _ := os.ReadFile(filepath.Join(root, media.IndexFile))
	if n := strings.Count(string(idx), "\n"); n != 2 || !strings.Contains(string(idx), `"sha256":"`+good+`"`) {
		t.Errorf("index after Prune:\n%s\nwant good.png and twin.png, in the documented keys", idx)
	}
	if again, err := d.Prune(nil); err != nil || len(again) != 0 {
		t.Errorf("a second Prune dropped %v (%v), want nothing", again, err)
	}

	// The other process's reader sees the index was replaced, and reads it whole.
	if err := server.Reload(); err != nil || server.Len() != 2 || server.Files() != 1 {
		t.Fatalf("after Prune, the server's reader: %v, %d URLs, %d files; want 2, 1", err, server.Len(), server.Files())
	}
	if _, ok := server.Lookup("http://127.0.0.1:9/internal.webm"); ok {
		t.Errorf("the server's reader still names the pruned URL")
	}
	// Put after Prune appends to the new index, and the server reads the line.
	if _, err := d.Put("https://m.example/c.webm", "video/webm", webm); err != nil {
		t.Fatal(err)
	}
	if err := server.Reload(); err != nil || server.Len() != 3 {
		t.Fatalf("after a Put: %v, %d URLs, want 3", err, server.Len())
	}
}

// TestCheck: the declared type must be one served, and the bytes of it.
func TestCheck(t *testing.T) {
	t.Parallel()
	mp4 := func(major string, compat ...string) []byte {
		b := []byte{0, 0, 0, byte(16 + 4*len(compat))}
		b = append(b, "ftyp"+major+"\x00\x00\x02\x00"...)
		for _, c := range compat {
			b = append(b, c...)
		}
		return append(b, "\x00\x00\x00\x08free"...)
	}
	for _, tc := range []struct {
		declared, body string
		want           string // the stored type, or the error's text
	}{
		{"image/png", "\x89PNG\r\n\x1a\n\x00\x00", "image/png"},
		{"IMAGE/PNG; charset=binary", "\x89PNG\r\n\x1a\n", "image/png"},
		{"image/jpeg", "\xff\xd8\xff\xe0\x00\x10JFIF", "image/jpeg"},
		{"image/jpg", "\xff\xd8\xff\xdb", "image/jpeg"},
		{"image/gif", "GIF87a\x01\x00", "image/gif"},
		{"image/gif", "GIF89a\x01\x00", "image/gif"},
		{"image/webp", "RIFF\x24\x00\x00\x00WEBPVP8 ", "image/webp"},
		{"image/webp", "RIFF\x24\x00\x00\x00WEBPVP8L", "image/webp"},
		{"video/mp4", string(mp4("isom", "isom", "iso2", "avc1", "mp41")), "video/mp4"},
		{"video/mp4", string(mp4("mp42", "mp42", "isom")), "video/mp4"},
		{"video/mp4", string(mp4("XAVC", "mp42")), "video/mp4"},
		{"video/webm", string(webm), "video/webm"},

		{"image/svg+xml", `<svg xmlns="http://www.w3.org/2000/svg"><script>alert(1)</script></svg>`, "content type image/svg+xml is not served (raster images and video only)"},
		{"image/png", `<svg xmlns="http://www.w3.org/2000/svg"><script>alert(1)</script></svg>`, "declared image/png but the bytes are SVG"},
		{"image/png", "<html><body>a login page</body></html>", "declared image/png but the bytes are HTML"},
		{"image/png", "TOP-SECRET", "declared image/png but the bytes are text"},
		{"image/png", "\xff\xd8\xff\xe0", "declared image/png but the bytes are image/jpeg"},
		{"image/gif", "GIF90a", "declared image/gif but the bytes are"},
		{"image/webp", "RIFF\x24\x00\x00\x00WAVEfmt ", "declared image/webp but the bytes are"},
		{"video/mp4", string(mp4("qt  ", "qt  ")), "declared video/mp4 but the bytes are"},
		{"video/mp4", string(mp4("avif", "avif", "mif1", "miaf", "iso8")), "declared video/mp4 but the bytes are"},
		{"video/mp4", string(mp4("heic", "mif1", "heic", "isom")), "declared video/mp4 but the bytes are"},
		{"video/webm", "\x1a\x45\xdf\xa3\x9f\x42\x86\x81\x01\x42\x82\x88matroska", "declared video/webm but the bytes are"},
		{"text/html", "<html></html>", "content type text/html is not served"},
		{"image/x-icon", "\x00\x00\x01\x00", "content type image/x-icon is not served"},
		{"video/quicktime", string(mp4("qt  ")), "content type video/quicktime is not served"},
		{"application/octet-stream", "\x89PNG\r\n\x1a\n", "content type application/octet-stream is not served"},
		{"", "\x89PNG\r\n\x1a\n", "content type (none) is not a media type"},
		{"image/png", "", "declared image/png but the bytes are text"},
	} {
		got, err := media.Check(tc.declared, []byte(tc.body))
		var te *media.TypeError
		switch {
		case err != nil && !errors.As(err, &te):
			t.Errorf("Check(%q, %q): %v is not a *TypeError", tc.declared, tc.body, err)
		case err != nil && !strings.Contains(err.Error(), tc.want):
			t.Errorf("Check(%q, %q): %v, want %q", tc.declared, tc.body, err, tc.want)
		case err == nil && got != tc.want:
			t.Errorf("Check(%q, %q) = %q, want %q", tc.declared, tc.body, got, tc.want)
		}
	}
}

// TestURLs: every absolute http(s) string of the catalog files, once, but
// links into the API and the files that are not catalogs (version.json,
// locres/, not .json).
func TestURLs(t *testing.T) {
	t.Parallel()
	files := fstest.MapFS{
		"version.json":       {Data: []byte(`{"data":{"icon":"https://m.example/version.png"}}`)},
		"locres/en-US.json":  {Data: []byte(`{"x":"https://m.example/locres.png"}`)},
		"en-US/agents.json":  {Data: []byte(`{"status":200,"data":[{"displayIcon":"https://m.example/a.png","portrait":null,"x":["http://m.example/b.png","https://api.example/v1/agents"],"n":"not a url"}]}`)},
		"de-DE/agents.json":  {Data: []byte(`[{"displayIcon":"https://m.example/a.png","video":"https://v.example/c.mp4"}]`)},
		"en-US/weapons.json": {Data: []byte(`not json`)},
		"en-US/notes.txt":    {Data: []byte(`"https://m.example/notes.png"`)},
	}
	got, err := media.URLs(files, "https://api.example/v1/")
	want := []string{"http://m.example/b.png", "https://m.example/a.png", "https://v.example/c.mp4"}
	if err != nil || !slices.Equal(got, want) {
		t.Errorf("URLs = %v (%v), want %v", got, err, want)
	}
}

// TestFailures: the record of failures read back as written, a line that is
// not one left out, and no file once nothing is recorded.
func TestFailures(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	d, err := media.OpenDir(root)
	if err != nil {
		t.Fatal(err)
	}
	if got, err := d.Failures(); err != nil || len(got) != 0 {
		t.Fatalf("a new mirror's failures: %v, %v; want none", got, err)
	}
	at := time.Date(2026, 11, 22, 12, 0, 0, 0, time.UTC)
	want := []media.Failure{
		{URL: "https://m.example/b.png", Class: "status", Reason: "status 404", Since: at, At: at, Tries: 1, Next: at.Add(time.Hour)},
		{URL: "https://m.example/a.svg", Class: "type", Reason: "content type image/svg+xml is not served", Since: at, At: at.Add(time.Hour), Tries: 2, Next: at.Add(3 * time.Hour)},
	}
	if err := d.WriteFailures(want); err != nil {
		t.Fatal(err)
	}
	name := filepath.Join(root, media.FailedFile)
	f, err := os.OpenFile(name, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	_, _ = f.WriteString("{\"url\":\n")
	_ = f.Close()
	got, err := d.Failures()
	if err != nil || len(got) != 2 || !reflect.DeepEqual(got[want[0].URL], want[0]) || !reflect.DeepEqual(got[want[1].URL], want[1]) {
		t.Fatalf("read back %v (%v), want %v", got, err, want)
	}
	b, _ := os.ReadFile(name)
	if !bytes.HasPrefix(b, []byte(`{"url":"https://m.example/a.svg"`)) {
		t.Errorf("the record is not sorted by URL:\n%s", b)
	}
	if err := d.WriteFailures(nil); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(name); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("an empty record leaves its file (%v)", err)
	}
}

// BenchmarkOpenDir: a server opening a mirror of 6000 PNGs (about the
// sample versions' media), every file's size and first bytes checked.
func BenchmarkOpenDir(b *testing.B) {
	root := b.TempDir()
	d, err := media.OpenDir(root)
	if err != nil {
		b.Fatal(err)
	}
	for i := range 6000 {
		body := fmt.Appendf([]byte("\x89PNG\r\n\x1a\n"), "file %d", i)
		if _, err := d.Put(fmt.Sprintf("https://m.example/%d.png", i), "image/png", body); err != nil {
			b.Fatal(err)
		}
	}
	for b.Loop() {
		r, err := media.OpenDir(root)
		if err != nil || r.Files() != 6000 {
			b.Fatalf("%v, %d files", err, r.Files())
		}
	}
}
