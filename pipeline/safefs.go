package pipeline

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"syscall"
	"unicode/utf8"

	"github.com/refdata/refdata/catalog"
)

// Default limits on what an import reads; Options raise them.
const (
	// DefaultMaxFileBytes is the largest snapshot file read: over ten times the
	// largest real capture file (weapons.json with its skins, 1.4 MB).
	DefaultMaxFileBytes = 64 << 20
	// DefaultMaxSnapshotBytes bounds all the files of one snapshot together: 18
	// locales of every catalog stay well under it.
	DefaultMaxSnapshotBytes = 1 << 30
	// DefaultMaxJSONDepth bounds nesting: real items nest a handful of levels.
	DefaultMaxJSONDepth = 64
)

// snapshotFiles is the one way an import reads a snapshot's files: regular files
// only, inside the snapshot directory (os.Root refuses a path or symlink that
// leaves it), never blocking on a FIFO, and within a per-file and a per-snapshot
// byte budget. Everything it refuses is a *catalog.FileError, so the report names
// the file.
type snapshotFiles struct {
	root               *os.Root
	maxFile, remaining int64
}

// limits defaults the per-file and per-snapshot byte limits left at 0.
func limits(maxFile, maxTotal int64) (int64, int64) {
	if maxFile <= 0 {
		maxFile = DefaultMaxFileBytes
	}
	if maxTotal <= 0 {
		maxTotal = DefaultMaxSnapshotBytes
	}
	return maxFile, maxTotal
}

func openSnapshot(dir string, maxFile, maxTotal int64) (*snapshotFiles, error) {
	root, err := os.OpenRoot(dir)
	if err != nil {
		return nil, err
	}
	maxFile, maxTotal = limits(maxFile, maxTotal)
	return &snapshotFiles{root: root, maxFile: maxFile, remaining: maxTotal}, nil
}

func (s *snapshotFiles) Close() error { return s.root.Close() }

// FS lists the snapshot; its files are read with ReadFile, never through it.
func (s *snapshotFiles) FS() fs.FS { return s.root.FS() }

// ReadFile reads name (slash-separated, relative to the snapshot).
func (s *snapshotFiles) ReadFile(name string) ([]byte, error) {
	fail := func(format string, args ...any) error {
		return &catalog.FileError{File: name, Err: fmt.Errorf(format, args...)}
	}
	// Stat first, so a FIFO or device is refused before it is opened.
	st, err := s.root.Stat(name)
	if errors.Is(err, fs.ErrNotExist) {
		if _, lerr := s.root.Lstat(name); lerr == nil {
			return nil, fail("a symlink whose target does not exist")
		}
		return nil, err
	}
	if err != nil {
		return nil, fail("refused: %v (symlinks must stay inside the snapshot)", unwrapPath(err))
	}
	if !st.Mode().IsRegular() {
		return nil, fail("refused: not a regular file (%s)", st.Mode().Type())
	}
	// O_NONBLOCK: should it become a FIFO between Stat and open, the open does not hang.
	f, err := s.root.OpenFile(name, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, fail("open: %v", unwrapPath(err))
	}
	defer f.Close()
	if st, err = f.Stat(); err != nil || !st.Mode().IsRegular() {
		return nil, fail("refused: not a regular file")
	}
	limit := min(s.maxFile, s.remaining)
	b, err := io.ReadAll(io.LimitReader(f, limit+1))
	if err != nil {
		return nil, fail("read: %v", unwrapPath(err))
	}
	if int64(len(b)) > limit {
		if limit == s.maxFile {
			return nil, fail("larger than the per-file limit of %d bytes (raise it with --max-file-bytes)", s.maxFile)
		}
		return nil, fail("the snapshot exceeds its limit of bytes read (raise it with --max-snapshot-bytes)")
	}
	s.remaining -= int64(len(b))
	return b, nil
}

// unwrapPath drops the absolute path a *PathError carries: reports name the file
// relative to the snapshot.
func unwrapPath(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

// checkJSONText refuses what encoding/json would quietly accept: invalid UTF-8
// (decoded as U+FFFD and served) and nesting deeper than maxDepth (the decoder's
// own bound is 10,000).
func checkJSONText(b []byte, maxDepth int) string {
	if !utf8.Valid(b) {
		for i, r := range string(b) {
			if r == utf8.RuneError && !bytes.HasPrefix(b[i:], []byte("\uFFFD")) {
				return fmt.Sprintf("invalid UTF-8 at byte %d", i)
			}
		}
	}
	depth, inString, escaped := 0, false, false
	for i, c := range b {
		switch {
		case inString:
			switch {
			case escaped:
				escaped = false
			case c == '\\':
				escaped = true
			case c == '"':
				inString = false
			}
		case c == '"':
			inString = true
		case c == '[' || c == '{':
			depth++
			if depth > maxDepth {
				return fmt.Sprintf("JSON nested deeper than %d levels at byte %d", maxDepth, i)
			}
		case c == ']' || c == '}':
			depth--
		}
	}
	return ""
}
