package blob_test

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/refdata/refdata/blob"
)

// blobs are what the tests write into segments: of several sizes, one empty.
var blobs = [][]byte{[]byte(`{"status":200,"data":{"uuid":"a"}}`), {}, bytes.Repeat([]byte("Glitchpop "), 400), []byte("x")}

// written is a segment written by a Writer, with where its blobs are.
type written struct {
	blob.Finished
	offs []int64
}

// write writes blobs into a new segment in dir ("": memory).
func write(t *testing.T, dir string, bs ...[]byte) written {
	t.Helper()
	w, err := blob.NewWriter(dir)
	if err != nil {
		t.Fatal(err)
	}
	var out written
	for _, b := range bs {
		off, err := w.Append(b)
		if err != nil {
			t.Fatal(err)
		}
		out.offs = append(out.offs, off)
	}
	if out.Finished, err = w.Finish(); err != nil {
		t.Fatal(err)
	}
	return out
}

// TestWriter: a segment, written to a file or to memory, is the header and
// its blobs back to back, each Append giving its offset, named by the sha256
// of all its bytes; the same blobs make the same segment either way. A file
// is synced and readable by others (0644); an aborted one is removed.
func TestWriter(t *testing.T) {
	t.Parallel()
	want := []byte(blob.Magic)
	var offs []int64
	for _, b := range blobs {
		offs = append(offs, int64(len(want)))
		want = append(want, b...)
	}
	sum := sha256.Sum256(want)
	for _, tc := range []struct {
		name string
		dir  string
	}{
		{"file", t.TempDir()},
		{"memory", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			seg := write(t, tc.dir, blobs...)
			if seg.Sum != hex.EncodeToString(sum[:]) || seg.Size != int64(len(want)) || !blob.ValidSum(seg.Sum) {
				t.Errorf("segment %s of %d bytes, want %x of %d", seg.Sum, seg.Size, sum, len(want))
			}
			if !slices.Equal(seg.offs, offs) {
				t.Errorf("offsets %v, want %v", seg.offs, offs)
			}
			got := seg.Mem
			if tc.dir != "" {
				if seg.Mem != nil || filepath.Dir(seg.Path) != tc.dir {
					t.Errorf("a file segment at %q, %d bytes in memory", seg.Path, len(seg.Mem))
				}
				st, err := os.Stat(seg.Path)
				if err != nil || st.Mode().Perm() != 0o644 {
					t.Fatalf("the segment's file: %v, %v", st, err)
				}
				if got, err = os.ReadFile(seg.Path); err != nil {
					t.Fatal(err)
				}
			} else if seg.Path != "" {
				t.Errorf("a memory segment at %q", seg.Path)
			}
			if !bytes.Equal(got, want) {
				t.Errorf("the segment holds %d bytes, want %d", len(got), len(want))
			}
		})
	}

	dir := t.TempDir()
	w, err := blob.NewWriter(dir)
	if err != nil {
		t.Fatal(err)
	}
	if w.Blobs() || w.Len() != int64(len(blob.Magic)) {
		t.Errorf("a new segment: blobs %v, %d bytes", w.Blobs(), w.Len())
	}
	if _, err := w.Append(blobs[0]); err != nil || !w.Blobs() || w.Len() != int64(len(blob.Magic)+len(blobs[0])) {
		t.Errorf("after a blob: blobs %v, %d bytes, %v", w.Blobs(), w.Len(), err)
	}
	w.Abort()
	if entries, err := os.ReadDir(dir); err != nil || len(entries) != 0 {
		t.Errorf("an aborted segment left %d files (%v)", len(entries), err)
	}
	if _, err := blob.NewWriter(filepath.Join(dir, "missing")); err == nil {
		t.Error("a segment in a missing directory")
	}
}

// TestWriterReadAt: a segment being written gives back each blob written,
// checked: not one outside what was written, nor one whose checksum is not
// the one asked for.
func TestWriterReadAt(t *testing.T) {
	t.Parallel()
	for _, dir := range []string{t.TempDir(), ""} {
		w, err := blob.NewWriter(dir)
		if err != nil {
			t.Fatal(err)
		}
		var offs []int64
		for _, b := range blobs {
			off, err := w.Append(b)
			if err != nil {
				t.Fatal(err)
			}
			offs = append(offs, off)
		}
		for i, b := range blobs {
			got, err := w.ReadAt(offs[i], len(b), blob.Checksum(b))
			if err != nil || !bytes.Equal(got, b) {
				t.Errorf("dir %q, blob %d: %q, %v", dir, i, got, err)
			}
		}
		for _, bad := range []struct {
			off int64
			n   int
			sum uint64
		}{
			{offs[0], len(blobs[0]), blob.Checksum(blobs[2])}, // another checksum
			{offs[3], len(blobs[3]) + 1, 0},                   // past the end
			{0, 4, blob.Checksum([]byte(blob.Magic[:4]))},     // the header
			{offs[0], -1, 0},
		} {
			if got, err := w.ReadAt(bad.off, bad.n, bad.sum); err == nil {
				t.Errorf("dir %q: %d bytes at %d read back as %q", dir, bad.n, bad.off, got)
			}
		}
		w.Abort()
	}
}

// TestValidSum: a segment is named by 64 lowercase hexadecimal digits, no
// other name (a path, capitals, another length) passes.
func TestValidSum(t *testing.T) {
	t.Parallel()
	good := strings.Repeat("0123456789abcdef", 4)
	for _, tc := range []struct {
		sum  string
		want bool
	}{
		{good, true},
		{strings.ToUpper(good), false},
		{good[:63], false},
		{good + "0", false},
		{"../" + good[3:], false},
		{good[:62] + "0g", false},
		{"", false},
	} {
		if got := blob.ValidSum(tc.sum); got != tc.want {
			t.Errorf("ValidSum(%q) = %v", tc.sum, got)
		}
	}
	if p := blob.Path("d", good); p != filepath.Join("d", good+".seg") {
		t.Errorf("Path: %s", p)
	}
}

// TestOpen: a segment's file is opened only at the size its index names: a
// file cut short or grown is refused (ErrCorrupt), a missing one is its
// error.
func TestOpen(t *testing.T) {
	t.Parallel()
	seg := write(t, t.TempDir(), blobs...)
	for _, tc := range []struct {
		name    string
		size    int64
		corrupt bool
	}{
		{"its size", seg.Size, false},
		{"a byte less", seg.Size - 1, true},
		{"a byte more", seg.Size + 1, true},
		{"none", 0, true},
	} {
		s, err := blob.Open(seg.Path, seg.Sum, tc.size, nil)
		if tc.corrupt != errors.Is(err, blob.ErrCorrupt) || (err == nil) != (s != nil) {
			t.Errorf("%s: %v", tc.name, err)
		}
		if err == nil && (s.File() == nil || s.InMemory() || s.Size != seg.Size || s.Sum != seg.Sum) {
			t.Errorf("%s: file %v, in memory %v, %d bytes, %s", tc.name, s.File() != nil, s.InMemory(), s.Size, s.Sum)
		}
	}
	if _, err := blob.Open(seg.Path+".missing", seg.Sum, seg.Size, nil); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("a missing file: %v", err)
	}
}

// TestRead: each blob reads back as written, from a file or from memory,
// with or without a cache; a blob whose bytes fail their checksum (a byte
// flipped on disk, a checksum that is not theirs) is refused with
// ErrCorrupt and never returned, and so is one outside the segment or in a
// file cut short after it was opened. Check is Read without keeping the
// bytes.
func TestRead(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name  string
		dir   bool
		cache *blob.Cache
	}{
		{"file", true, nil},
		{"file through a cache", true, blob.NewCache(1 << 20)},
		{"memory", false, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			dir := ""
			if tc.dir {
				dir = t.TempDir()
			}
			w := write(t, dir, blobs...)
			var s *blob.Segment
			if tc.dir {
				var err error
				if s, err = blob.Open(w.Path, w.Sum, w.Size, tc.cache); err != nil {
					t.Fatal(err)
				}
			} else {
				s = blob.Memory(w.Sum, w.Mem)
				if !s.InMemory() || s.File() != nil || s.Size != w.Size {
					t.Errorf("a memory segment: in memory %v, file %v, %d bytes", s.InMemory(), s.File() != nil, s.Size)
				}
			}
			for i, b := range blobs {
				for range 2 { // the second from the cache, where there is one
					got, err := s.Read(w.offs[i], len(b), blob.Checksum(b))
					if err != nil || !bytes.Equal(got, b) {
						t.Fatalf("blob %d: %q, %v", i, got, err)
					}
				}
				if err := s.Check(w.offs[i], len(b), blob.Checksum(b)); err != nil {
					t.Errorf("Check of blob %d: %v", i, err)
				}
			}
			for _, tc := range []struct {
				name   string
				off    int64
				n      int
				reason string
			}{
				{"in the header", 0, 4, "outside"},
				{"past the end", w.Size - 1, 2, "outside"},
				{"of negative length", w.offs[0], -1, "outside"},
				{"far past the end", 1 << 40, 1, "outside"},
			} {
				if got, err := s.Read(tc.off, tc.n, 0); !errors.Is(err, blob.ErrCorrupt) || got != nil || !strings.Contains(err.Error(), tc.reason) {
					t.Errorf("a blob %s: %q, %v", tc.name, got, err)
				}
			}
			if !tc.dir {
				return // bytes made in this process: not checked again
			}
			big := blobs[2]
			if got, err := s.Read(w.offs[2], len(big), blob.Checksum(big)+1); tc.cache == nil && (!errors.Is(err, blob.ErrCorrupt) || got != nil) {
				t.Errorf("a checksum not the blob's: %d bytes, %v", len(got), err)
			}
			if err := s.Check(w.offs[2], len(big), blob.Checksum(big)+1); !errors.Is(err, blob.ErrCorrupt) {
				t.Errorf("Check with a checksum not the blob's: %v", err)
			}
			flip(t, w.Path, w.offs[2]+int64(len(big))/2)
			got, err := s.ReadUncached(w.offs[2], len(big), blob.Checksum(big))
			if !errors.Is(err, blob.ErrCorrupt) || got != nil {
				t.Errorf("a flipped byte: %d bytes, %v", len(got), err)
			}
			if err := s.Check(w.offs[2], len(big), blob.Checksum(big)); !errors.Is(err, blob.ErrCorrupt) {
				t.Errorf("Check of a flipped byte: %v", err)
			}
			// A new handle has nothing cached: the flip shows.
			s2, err := blob.Open(w.Path, w.Sum, w.Size, tc.cache)
			if err != nil {
				t.Fatal(err)
			}
			if got, err := s2.Read(w.offs[2], len(big), blob.Checksum(big)); !errors.Is(err, blob.ErrCorrupt) || got != nil {
				t.Errorf("a flipped byte, read by a new handle: %d bytes, %v", len(got), err)
			}
			if err := os.Truncate(w.Path, w.offs[2]); err != nil {
				t.Fatal(err)
			}
			if got, err := s2.ReadUncached(w.offs[2], len(big), blob.Checksum(big)); !errors.Is(err, blob.ErrCorrupt) || got != nil {
				t.Errorf("a file cut short: %d bytes, %v", len(got), err)
			}
		})
	}
}

// flip changes the byte at off of the file at path.
func flip(t *testing.T, path string, off int64) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	b[off] ^= 0x01
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestCache: the cache keeps what was read last up to its bound in bytes,
// dropping what was used least recently; a blob over an eighth of the bound
// is never kept (ReadUncached never keeps one); a value derived from a blob
// (CacheKey) is kept apart from the blob, a blob read with another checksum
// apart from it, two handles on one file apart; a nil cache, or one of 0
// bytes, keeps nothing.
func TestCache(t *testing.T) {
	t.Parallel()
	const bound = 8 << 10
	c := blob.NewCache(bound)
	var bs [][]byte
	for i := range 12 {
		bs = append(bs, bytes.Repeat([]byte{'a' + byte(i)}, bound/8))
	}
	big := bytes.Repeat([]byte("b"), bound/8+1)
	all := append(slices.Clone(bs), big)
	w := write(t, t.TempDir(), all...)
	s, err := blob.Open(w.Path, w.Sum, w.Size, c)
	if err != nil {
		t.Fatal(err)
	}
	read := func(i int) {
		t.Helper()
		b := all[i]
		if got, err := s.Read(w.offs[i], len(b), blob.Checksum(b)); err != nil || !bytes.Equal(got, b) {
			t.Fatalf("blob %d: %v", i, err)
		}
	}
	if !c.Keeps(bound/8) || c.Keeps(bound/8+1) {
		t.Errorf("keeps %d bytes: %v; %d: %v", bound/8, c.Keeps(bound/8), bound/8+1, c.Keeps(bound/8+1))
	}
	for i := range 8 {
		read(i)
	}
	if c.Bytes() != bound {
		t.Errorf("%d bytes kept of 8 blobs of %d", c.Bytes(), bound/8)
	}
	read(0) // used: the oldest is now blob 1
	read(8)
	if c.Bytes() != bound {
		t.Errorf("%d bytes kept, bound %d", c.Bytes(), bound)
	}
	// cached reads blob i with the segment's file damaged: only a kept blob
	// reads.
	file, err := os.ReadFile(w.Path)
	if err != nil {
		t.Fatal(err)
	}
	damaged := bytes.Clone(file)
	for i := len(blob.Magic); i < len(damaged); i++ {
		damaged[i] ^= 0x20
	}
	cached := func(i int) bool {
		t.Helper()
		if err := os.WriteFile(w.Path, damaged, 0o644); err != nil {
			t.Fatal(err)
		}
		got, err := s.Read(w.offs[i], len(all[i]), blob.Checksum(all[i]))
		if err := os.WriteFile(w.Path, file, 0o644); err != nil {
			t.Fatal(err)
		}
		return err == nil && bytes.Equal(got, all[i])
	}
	if !cached(0) || cached(1) || !cached(8) {
		t.Errorf("after a ninth blob: blob 0 (used again) kept %v, blob 1 (least recent) kept %v, blob 8 kept %v", cached(0), cached(1), cached(8))
	}
	before := c.Bytes()
	read(len(bs)) // over an eighth
	if cached(len(bs)) || c.Bytes() != before {
		t.Errorf("a blob over an eighth of the bound kept (%d bytes kept, %d before)", c.Bytes(), before)
	}
	if _, err := s.ReadUncached(w.offs[9], len(bs[9]), blob.Checksum(bs[9])); err != nil || cached(9) {
		t.Errorf("ReadUncached kept its blob (%v)", err)
	}
	// The same offset read with another checksum is not the kept blob.
	if got, err := s.Read(w.offs[0], len(bs[0]), blob.Checksum(bs[0])+1); !errors.Is(err, blob.ErrCorrupt) || got != nil {
		t.Errorf("a kept blob read with another checksum: %d bytes, %v", len(got), err)
	}
	// A derived value at a blob's offset is not the blob.
	c.Add(s.CacheKey(w.offs[0]), []byte("derived"))
	if got, ok := c.Get(s.CacheKey(w.offs[0])); !ok || string(got) != "derived" || !cached(0) {
		t.Errorf("a derived value: %q, %v; the blob still kept: %v", got, ok, cached(0))
	}
	if s.Cache() != c {
		t.Error("the segment does not name its cache")
	}
	// Another handle on the same file has its own entries.
	s2, err := blob.Open(w.Path, w.Sum, w.Size, c)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(w.Path, damaged, 0o644); err != nil {
		t.Fatal(err)
	}
	if got, err := s2.Read(w.offs[0], len(bs[0]), blob.Checksum(bs[0])); err == nil {
		t.Errorf("a second handle read another's cached blob: %d bytes", len(got))
	}

	var none *blob.Cache
	none.Add(s.CacheKey(0), []byte("x"))
	if _, ok := none.Get(s.CacheKey(0)); ok || none.Bytes() != 0 || none.Keeps(1) {
		t.Error("a nil cache kept something")
	}
	zero := blob.NewCache(0) // serve --cache-bytes 0
	zero.Add(s.CacheKey(0), []byte("x"))
	if _, ok := zero.Get(s.CacheKey(0)); ok || zero.Bytes() != 0 || zero.Keeps(1) {
		t.Error("a cache of 0 bytes kept something")
	}
}

// TestAppendAligns: a blob of AlignFrom bytes or more starts at a page
// boundary, after zero bytes, and a smaller one right after the blob before
// it; each reads back as written.
func TestAppendAligns(t *testing.T) {
	w, err := blob.NewWriter(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer w.Abort()
	blobs := [][]byte{
		bytes.Repeat([]byte("a"), 100),
		bytes.Repeat([]byte("b"), blob.AlignFrom),
		bytes.Repeat([]byte("c"), 7),
		bytes.Repeat([]byte("d"), blob.AlignFrom+1),
		bytes.Repeat([]byte("e"), blob.AlignFrom-1),
	}
	end := int64(len(blob.Magic))
	for i, b := range blobs {
		off, err := w.Append(b)
		if err != nil {
			t.Fatal(err)
		}
		big := len(b) >= blob.AlignFrom
		if big && (off%blob.PageAlign != 0 || off-end >= blob.PageAlign) || !big && off != end {
			t.Errorf("blob %d of %d bytes at %d, after a blob ending at %d", i, len(b), off, end)
		}
		if got, err := w.ReadAt(off, len(b), blob.Checksum(b)); err != nil || !bytes.Equal(got, b) {
			t.Errorf("blob %d reads back as %d bytes: %v", i, len(got), err)
		}
		if pad, err := w.ReadAt(end, int(off-end), blob.Checksum(make([]byte, off-end))); err != nil || bytes.Count(pad, []byte{0}) != len(pad) {
			t.Errorf("before blob %d: %d bytes of padding, not zeros (%v)", i, off-end, err)
		}
		end = off + int64(len(b))
	}
}
