package media_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/refdata/refdata/media"
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
	a, err := d.Put("https://m.example/a.png", "image/png", []byte("same"))
	if err != nil {
		t.Fatal(err)
	}
	b, _ := d.Put("https://m.example/b.png", "image/png", []byte("same"))
	c, _ := d.Put("https://m.example/c.webm", "video/webm", []byte("other"))
	if a != b || a.SHA256 == c.SHA256 || d.Files() != 2 || d.Len() != 3 {
		t.Fatalf("a %+v b %+v c %+v; %d files, %d URLs; want a = b, 2 files, 3 URLs", a, b, c, d.Files(), d.Len())
	}
	if sum := sha256.Sum256([]byte("same")); a.SHA256 != hex.EncodeToString(sum[:]) || a.Size != 4 || c.ContentType != "video/webm" {
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

	// Another process's reader; a write in progress is not read until whole.
	r, err := media.OpenDir(root)
	if err != nil || r.Len() != 3 || r.Files() != 2 {
		t.Fatalf("second reader: %v, %d URLs, %d files", err, r.Len(), r.Files())
	}
	idx, _ := os.OpenFile(filepath.Join(root, media.IndexFile), os.O_WRONLY|os.O_APPEND, 0)
	_, _ = idx.WriteString(`{"url":"https://m.example/d.png","sha256":"` + c.SHA256 + `","contentType":"image/png"`)
	if err := r.Reload(); err != nil || r.Len() != 3 {
		t.Fatalf("a half-written line was read: %v, %d URLs", err, r.Len())
	}
	_, _ = idx.WriteString(",\"size\":5}\n")
	_ = idx.Close()
	if err := r.Reload(); err != nil || r.Len() != 4 {
		t.Fatalf("the completed line was not read: %v, %d URLs", err, r.Len())
	}
	if f, ok := r.Lookup("https://m.example/c.webm"); !ok || f != c {
		t.Fatalf("Lookup c: %+v %v", f, ok)
	}

	for _, tc := range []struct {
		sum  string
		want string
	}{
		{a.SHA256, "same"},
		{c.SHA256, "other"},
	} {
		f, err := r.Open(context.Background(), tc.sum)
		if err != nil {
			t.Fatal(err)
		}
		got, _ := io.ReadAll(f)
		_ = f.Close()
		if string(got) != tc.want {
			t.Errorf("Open %s: %q, want %q", tc.sum, got, tc.want)
		}
	}
	for _, bad := range []string{"", "../index.jsonl", media.IndexFile, "A" + a.SHA256[1:], a.SHA256[:63], "0000000000000000000000000000000000000000000000000000000000000000"} {
		if _, err := r.Open(context.Background(), bad); !errors.Is(err, fs.ErrNotExist) {
			t.Errorf("Open %q: %v, want fs.ErrNotExist", bad, err)
		}
	}
}

// TestURLs: every absolute http(s) string of the catalog files, once, but
// links into the API and the files that are not catalogs.
func TestURLs(t *testing.T) {
	t.Parallel()
	files := map[string][]byte{
		"version.json":       []byte(`{"data":{"icon":"https://m.example/version.png"}}`),
		"locres/en-US.json":  []byte(`{"x":"https://m.example/locres.png"}`),
		"en-US/agents.json":  []byte(`{"status":200,"data":[{"displayIcon":"https://m.example/a.png","portrait":null,"x":["http://m.example/b.png","https://api.example/v1/agents"],"n":"not a url"}]}`),
		"de-DE/agents.json":  []byte(`[{"displayIcon":"https://m.example/a.png","video":"https://v.example/c.mp4"}]`),
		"en-US/weapons.json": []byte(`not json`),
	}
	got := media.URLs(files, "https://api.example/v1/")
	want := []string{"http://m.example/b.png", "https://m.example/a.png", "https://v.example/c.mp4"}
	if !slices.Equal(got, want) {
		t.Errorf("URLs = %v, want %v", got, want)
	}
}
