package catalog

import (
	"archive/tar"
	"compress/gzip"
	"fmt"
	"io"
	"maps"
	"slices"
	"time"
)

// WriteArchive writes a snapshot's files as /v1/export's gzip-compressed tar:
// regular files sorted by path, mode 0644, no owner, time the Unix epoch, so
// the same files always give the same bytes.
func WriteArchive(w io.Writer, files map[string][]byte) error {
	zw, err := gzip.NewWriterLevel(w, gzip.DefaultCompression)
	if err != nil {
		return err
	}
	tw := tar.NewWriter(zw)
	for _, n := range slices.Sorted(maps.Keys(files)) {
		b := files[n]
		h := &tar.Header{Name: n, Mode: 0o644, Size: int64(len(b)), ModTime: time.Unix(0, 0), Typeflag: tar.TypeReg, Format: tar.FormatPAX}
		if err := tw.WriteHeader(h); err != nil {
			return fmt.Errorf("archive %s: %w", n, err)
		}
		if _, err := tw.Write(b); err != nil {
			return fmt.Errorf("archive %s: %w", n, err)
		}
	}
	if err := tw.Close(); err != nil {
		return err
	}
	return zw.Close()
}
