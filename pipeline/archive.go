package pipeline

import (
	"archive/tar"
	"compress/gzip"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"strings"

	"github.com/refdata/refdata/catalog"
)

// ArchiveLayout is a .tar.gz of a snapshot-layout directory, as /v1/export
// serves it.
const ArchiveLayout Layout = "archive"

// maxArchiveEntries bounds the entries read from an archive: a snapshot has
// at most one file per catalog and locale, and the string tables.
const maxArchiveEntries = 4096

// archiveOverhead is what an archive may inflate to beyond its files' bytes:
// each entry's headers (a PAX one included) and padding, at most 4 KiB.
const archiveOverhead = maxArchiveEntries * 4 << 10

// errArchiveLimit ends the read of an archive that inflates past its limit.
var errArchiveLimit = errors.New("the archive exceeds its limit of bytes read (raise it with --max-snapshot-bytes)")

// inflated counts what the gzip stream inflates to, and ends it at a limit:
// a refused entry's data is read through too, to reach the next header, so
// it counts as a kept file's does.
type inflated struct {
	r    io.Reader
	left int64
}

func (c *inflated) Read(p []byte) (int, error) {
	if c.left <= 0 {
		return 0, errArchiveLimit
	}
	n, err := c.r.Read(p[:min(int64(len(p)), c.left)])
	c.left -= int64(n)
	return n, err
}

// runArchive imports a .tar.gz file (a /v1/export answer, as it is).
func (im *importer) runArchive(name string) error {
	im.r.Layout = ArchiveLayout
	f, err := os.Open(name)
	if err != nil {
		return fmt.Errorf("load %s: %w", name, err)
	}
	defer f.Close()
	files, ps, err := ReadArchive(f, im.opt.MaxFileBytes, im.opt.MaxSnapshotBytes)
	if err != nil {
		return im.reject([]catalog.Problem{{File: name, Reason: err.Error()}}, "%s: %w", name, err)
	}
	if len(ps) > 0 {
		return im.reject(ps, "%d archive entries refused", len(ps))
	}
	kept, lps := im.limitFiles(files)
	return im.process(kept, lps)
}

// ReadArchive reads a snapshot from a .tar.gz stream: regular files with clean
// relative names only, within the byte limits counted decompressed (a gzip
// bomb stops there, the data of an entry it refuses counted too). Entries it
// refuses are problems; err is for a stream that is not a gzip'd tar or breaks
// off.
func ReadArchive(r io.Reader, maxFile, maxTotal int64) (map[string][]byte, []catalog.Problem, error) {
	maxFile, maxTotal = limits(maxFile, maxTotal)
	zr, err := gzip.NewReader(r)
	if err != nil {
		return nil, nil, fmt.Errorf("not a gzip stream: %w", err)
	}
	defer zr.Close()
	tr := tar.NewReader(&inflated{r: zr, left: maxTotal + archiveOverhead})
	files := map[string][]byte{}
	var ps []catalog.Problem
	for n := 0; ; n++ {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if errors.Is(err, errArchiveLimit) {
			return nil, nil, errArchiveLimit
		}
		if err != nil {
			return nil, nil, fmt.Errorf("not a complete tar archive: %w", err)
		}
		if n >= maxArchiveEntries {
			return nil, nil, fmt.Errorf("more than %d entries", maxArchiveEntries)
		}
		name := strings.TrimPrefix(h.Name, "./")
		switch {
		case h.Typeflag == tar.TypeDir:
			continue
		case h.Typeflag != tar.TypeReg:
			ps = append(ps, catalog.Problem{File: h.Name, Reason: "refused: not a regular file"})
			continue
		case !fs.ValidPath(name) || name == ".":
			ps = append(ps, catalog.Problem{File: h.Name, Reason: "refused: not a clean relative path inside the snapshot"})
			continue
		case files[name] != nil:
			ps = append(ps, catalog.Problem{File: h.Name, Reason: "refused: listed twice"})
			continue
		}
		limit := min(maxFile, maxTotal)
		b, err := io.ReadAll(io.LimitReader(tr, limit+1))
		if errors.Is(err, errArchiveLimit) {
			return nil, nil, errArchiveLimit
		}
		if err != nil {
			return nil, nil, fmt.Errorf("%s: %w", name, err)
		}
		if int64(len(b)) > limit {
			if limit == maxFile {
				ps = append(ps, catalog.Problem{File: name, Reason: fmt.Sprintf("larger than the per-file limit of %d bytes (raise it with --max-file-bytes)", maxFile)})
				return files, ps, nil
			}
			return nil, nil, errArchiveLimit
		}
		maxTotal -= int64(len(b))
		files[name] = b
	}
	return files, ps, nil
}
