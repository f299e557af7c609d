// Package blob owns bodies stored once by content: segment files, each a run
// of blobs written by one import and named by the sha256 of its bytes, and
// their reading through a bounded cache that checks every blob it reads
// against its checksum, so a damaged file is refused, never served.
//
// Why segments and not a file per body: a version at the public API's size
// has some 250,000 bodies, most under 2 KiB; a file each would cost a 4 KiB
// block and an inode apiece, and hundreds of thousands of creates per import.
package blob

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"hash"
	"hash/crc64"
	"io"
	"os"
	"path/filepath"
	"sync/atomic"
	"time"
)

// Magic starts every segment.
const Magic = "refdata-segment/1\n"

// ErrCorrupt is wrapped by the errors of a blob or segment that fails its check.
var ErrCorrupt = errors.New("corrupt")

// Checksum is the CRC-64 (ECMA) of b: a blob's check, and the hash its
// representation's ETag quotes.
func Checksum(b []byte) uint64 { return crc64.Checksum(b, crcTable) }

var crcTable = crc64.MakeTable(crc64.ECMA)

// ValidSum says whether s names a segment: 64 lowercase hexadecimal digits.
func ValidSum(s string) bool {
	b, err := hex.DecodeString(s)
	return err == nil && len(b) == sha256.Size && hex.EncodeToString(b) == s
}

// Writer writes a new segment: to a temporary file in a directory, or to
// memory. Finish names it by its sha256.
type Writer struct {
	f   *os.File // nil: in memory
	mem []byte
	h   hash.Hash
	n   int64
	err error
}

// NewWriter starts a segment in a temporary file in dir; "" keeps it in memory.
func NewWriter(dir string) (*Writer, error) {
	w := &Writer{h: sha256.New()}
	if dir != "" {
		f, err := os.CreateTemp(dir, "segment-*.tmp")
		if err != nil {
			return nil, fmt.Errorf("new segment: %w", err)
		}
		w.f = f
	}
	if _, err := w.write([]byte(Magic)); err != nil {
		w.Abort()
		return nil, err
	}
	return w, nil
}

func (w *Writer) write(b []byte) (int64, error) {
	if w.err != nil {
		return 0, w.err
	}
	off := w.n
	if w.f != nil {
		if _, err := w.f.Write(b); err != nil {
			w.err = fmt.Errorf("write segment: %w", err)
			return 0, w.err
		}
	} else {
		w.mem = append(w.mem, b...)
	}
	w.h.Write(b)
	w.n += int64(len(b))
	return off, nil
}

// Append adds a blob and returns its offset: a page boundary for a blob of
// AlignFrom bytes or more.
func (w *Writer) Append(b []byte) (int64, error) {
	if pad := (PageAlign - w.n%PageAlign) % PageAlign; len(b) >= AlignFrom && pad > 0 {
		if _, err := w.write(zeros[:pad]); err != nil {
			return 0, err
		}
	}
	return w.write(b)
}

// A blob of AlignFrom bytes or more (the edge's smallest answer sent by
// sendfile) starts at a multiple of PageAlign in its segment, after up to
// PageAlign-1 zero bytes: a server sends it by sendfile(2) straight from the
// segment's pages, where one that starts mid-page is first copied to a page
// boundary (sent from mid-page it cost 1.6× the CPU). The padding is about 1 %
// of a segment (the sample versions' at Best with bulk files: 0.9 % and
// 1.6 %), and readers never see it: a blob is read by its offset and length.
const (
	PageAlign = 4096
	AlignFrom = 16 << 10
)

var zeros [PageAlign]byte

// Len is the segment's size so far.
func (w *Writer) Len() int64 { return w.n }

// ReadAt reads back the n bytes written at off, checked against want (their
// Checksum): an import makes its bulk files of the items it has written. It
// may run on several goroutines, but not beside Append.
func (w *Writer) ReadAt(off int64, n int, want uint64) ([]byte, error) {
	if off < int64(len(Magic)) || n < 0 || off+int64(n) > w.n {
		return nil, fmt.Errorf("new segment: a blob at %d of %d bytes is outside its %d bytes", off, n, w.n)
	}
	var b []byte
	if w.f == nil {
		b = w.mem[off : off+int64(n) : off+int64(n)]
	} else {
		b = make([]byte, n)
		if _, err := w.f.ReadAt(b, off); err != nil {
			return nil, fmt.Errorf("new segment at %d: %w", off, err)
		}
	}
	if Checksum(b) != want {
		return nil, fmt.Errorf("new segment at %d: %w: the blob's checksum differs from the one written", off, ErrCorrupt)
	}
	return b, nil
}

// Blobs says whether anything but the header was written.
func (w *Writer) Blobs() bool { return w.n > int64(len(Magic)) }

// Finished is a written segment: its name, size, and where its bytes are.
type Finished struct {
	Sum  string // sha256 of the bytes, lowercase hex
	Size int64
	Path string // the temporary file (the store renames it), or "" in memory
	Mem  []byte // the bytes, in memory
}

// Finish syncs and closes the segment.
func (w *Writer) Finish() (Finished, error) {
	if w.err != nil {
		w.Abort()
		return Finished{}, w.err
	}
	fin := Finished{Sum: hex.EncodeToString(w.h.Sum(nil)), Size: w.n, Mem: w.mem}
	if w.f != nil {
		err := w.f.Chmod(0o644) // as every file of a store: replicas may run as another user
		if err == nil {
			err = w.f.Sync()
		}
		if cerr := w.f.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			_ = os.Remove(w.f.Name())
			return Finished{}, fmt.Errorf("finish segment: %w", err)
		}
		fin.Path = w.f.Name()
	}
	return fin, nil
}

// Abort drops an unfinished segment.
func (w *Writer) Abort() {
	if w.f != nil {
		_ = w.f.Close()
		_ = os.Remove(w.f.Name())
	}
	w.mem = nil
}

// Segment is a segment open for reading. Its file is closed when the Segment
// is no longer reachable (os.File's cleanup), so nothing in flight reads a
// closed file: what serves from it holds it.
type Segment struct {
	Sum   string
	Size  int64
	f     *os.File // nil in memory
	mem   []byte
	cache *Cache
	id    uint64 // the cache's key for it
	// mtime is the file's when opened; changed is set once the file is
	// seen written since (Unchanged).
	mtime   time.Time
	changed atomic.Bool
}

var segmentIDs atomic.Uint64

// Open opens the segment at path, named sum, of size bytes, read through c
// (nil: no cache). A file of another size is refused: it was cut short or
// is not the segment named.
func Open(path, sum string, size int64, c *Cache) (*Segment, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("segment %s: %w", short(sum), err)
	}
	st, err := f.Stat()
	if err == nil && st.Size() != size {
		err = fmt.Errorf("%w: %d bytes, the index says %d", ErrCorrupt, st.Size(), size)
	}
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("segment %s: %w", short(sum), err)
	}
	return &Segment{Sum: sum, Size: size, f: f, cache: c, id: segmentIDs.Add(1), mtime: st.ModTime()}, nil
}

// Unchanged says whether the file is as it was opened, by its size and
// modification time: a blob checked once (Check) and sent from the file
// after is checked again if anything wrote to the file since (one fstat; a
// segment is immutable, so that is damage). Once changed, always changed.
func (s *Segment) Unchanged() bool {
	if s.f == nil {
		return true
	}
	if s.changed.Load() {
		return false
	}
	st, err := s.f.Stat()
	if err == nil && st.Size() == s.Size && st.ModTime().Equal(s.mtime) {
		return true
	}
	s.changed.Store(true)
	return false
}

// Memory is a segment held in memory (a test's, or an edition built in the
// process).
func Memory(sum string, b []byte) *Segment {
	return &Segment{Sum: sum, Size: int64(len(b)), mem: b, id: segmentIDs.Add(1)}
}

// File is the segment's file, for sendfile; nil in memory.
func (s *Segment) File() *os.File { return s.f }

// InMemory says whether the segment's bytes are in memory.
func (s *Segment) InMemory() bool { return s.f == nil }

func short(sum string) string {
	if len(sum) > 12 {
		return sum[:12]
	}
	return sum
}

// Read returns the n bytes at off, checked against want (their Checksum):
// from memory, the cache, or the file.
func (s *Segment) Read(off int64, n int, want uint64) ([]byte, error) {
	if off < int64(len(Magic)) || n < 0 || off+int64(n) > s.Size {
		return nil, fmt.Errorf("segment %s: %w: a blob at %d of %d bytes is outside its %d bytes", short(s.Sum), ErrCorrupt, off, n, s.Size)
	}
	if s.f == nil {
		return s.mem[off : off+int64(n) : off+int64(n)], nil
	}
	k := Key{segment: s.id, off: off, sum: want}
	if b, ok := s.cache.Get(k); ok {
		return b, nil
	}
	b, err := s.ReadUncached(off, n, want)
	if err == nil {
		s.cache.Add(k, b)
	}
	return b, err
}

// ReadUncached is Read bypassing the cache: for a blob too big to keep.
func (s *Segment) ReadUncached(off int64, n int, want uint64) ([]byte, error) {
	b := make([]byte, n)
	if _, err := s.f.ReadAt(b, off); err != nil {
		if errors.Is(err, io.EOF) {
			err = fmt.Errorf("%w: cut short", ErrCorrupt)
		}
		return nil, fmt.Errorf("segment %s at %d: %w", short(s.Sum), off, err)
	}
	if Checksum(b) != want {
		return nil, fmt.Errorf("segment %s at %d: %w: the blob's checksum differs from the index's", short(s.Sum), off, ErrCorrupt)
	}
	return b, nil
}

// Check reads the n bytes at off and checks them against want, without
// keeping them: before a blob is sent from the file by sendfile.
func (s *Segment) Check(off int64, n int, want uint64) error {
	if s.f == nil {
		return nil // made in this process
	}
	_, err := s.ReadUncached(off, n, want)
	return err
}

// CacheKey is the cache's key for a value derived from the blob at off (a
// decompressed identity).
func (s *Segment) CacheKey(off int64) Key { return Key{segment: s.id, off: off, derived: true} }

// Cache is where the segment keeps what it read; nil for none.
func (s *Segment) Cache() *Cache { return s.cache }

// Path is where a store keeps a segment in dir.
func Path(dir, sum string) string { return filepath.Join(dir, sum+".seg") }
