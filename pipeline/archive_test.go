package pipeline_test

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/refdata/refdata/pipeline"
	"github.com/refdata/refdata/router/apitest"
)

// tarGz packs a snapshot directory (plus extra raw entries) as /v1/export would.
func tarGz(t *testing.T, dir string, extra ...*tar.Header) string {
	t.Helper()
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	tw := tar.NewWriter(zw)
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		if err := tw.WriteHeader(&tar.Header{Name: filepath.ToSlash(rel), Mode: 0o644, Size: int64(len(b)), Typeflag: tar.TypeReg}); err != nil {
			return err
		}
		_, err = tw.Write(b)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, h := range extra {
		if err := tw.WriteHeader(h); err != nil {
			t.Fatal(err)
		}
		if h.Size > 0 {
			_, _ = tw.Write(bytes.Repeat([]byte("x"), int(h.Size)))
		}
	}
	_ = tw.Close()
	_ = zw.Close()
	out := filepath.Join(t.TempDir(), "export.tar.gz")
	if err := os.WriteFile(out, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	return out
}

// TestImportArchive: a .tar.gz of a snapshot imports as the directory does;
// entries leaving the snapshot, links and oversize files are refused with the
// store untouched.
func TestImportArchive(t *testing.T) {
	t.Parallel()
	src := fixtureDir(t, "14")
	cases := []struct {
		name   string
		extra  []*tar.Header
		opt    pipeline.Options
		reason string
	}{
		{name: "clean"},
		{name: "path traversal", extra: []*tar.Header{{Name: "../../evil.json", Size: 2, Mode: 0o644, Typeflag: tar.TypeReg}}, reason: "not a clean relative path"},
		{name: "absolute path", extra: []*tar.Header{{Name: "/etc/evil.json", Size: 2, Mode: 0o644, Typeflag: tar.TypeReg}}, reason: "not a clean relative path"},
		{name: "symlink", extra: []*tar.Header{{Name: "en-US/maps2.json", Linkname: "/etc/passwd", Typeflag: tar.TypeSymlink}}, reason: "not a regular file"},
		{name: "oversize file", opt: pipeline.Options{Effort: apitest.Effort(), MaxFileBytes: 1 << 10}, reason: "per-file limit"},
		// A refused entry's data is inflated to skip it: a bomb under a refused
		// name is stopped by the snapshot's limit as a kept file is.
		{name: "refused entry over the snapshot limit", extra: []*tar.Header{{Name: "../bomb.json", Size: 24 << 20, Mode: 0o644, Typeflag: tar.TypeReg}},
			opt: pipeline.Options{Effort: apitest.Effort(), MaxSnapshotBytes: dirSize(t, src) + 1<<20}, reason: "exceeds its limit of bytes read"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			st := openStore(t, t.TempDir())
			before := treeHash(t, st.Dir())
			rep, err := pipeline.Import(st, tarGz(t, src, tc.extra...), tc.opt)
			if tc.reason == "" {
				if err != nil || rep.Outcome != "published" || rep.Layout != pipeline.ArchiveLayout {
					t.Fatalf("import: %v (%s, %s)", err, rep.Outcome, rep.Layout)
				}
				return
			}
			if !errors.Is(err, pipeline.ErrRejected) {
				t.Fatalf("want a rejection, got %v", err)
			}
			var b strings.Builder
			rep.Write(&b)
			if !strings.Contains(b.String(), tc.reason) {
				t.Fatalf("report lacks %q:\n%s", tc.reason, b.String())
			}
			if after := treeHash(t, st.Dir()); len(after) != len(before) {
				t.Fatalf("store changed: %d files, was %d", len(after), len(before))
			}
		})
	}
}

// TestImportArchiveNotGzip: a file that is not a gzip stream is rejected, the
// report says so, and the error keeps its cause (gzip.ErrHeader) for callers.
func TestImportArchiveNotGzip(t *testing.T) {
	t.Parallel()
	name := filepath.Join(t.TempDir(), "export.tar.gz")
	if err := os.WriteFile(name, []byte("not gzip at all"), 0o644); err != nil {
		t.Fatal(err)
	}
	rep, err := pipeline.Import(openStore(t, t.TempDir()), name, options())
	if !errors.Is(err, pipeline.ErrRejected) || !errors.Is(err, gzip.ErrHeader) {
		t.Fatalf("err = %v, want a rejection wrapping gzip.ErrHeader", err)
	}
	var b strings.Builder
	rep.Write(&b)
	if !strings.Contains(b.String(), "not a gzip stream") {
		t.Errorf("report lacks the cause:\n%s", b.String())
	}
}
