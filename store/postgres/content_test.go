package postgres_test

import (
	"bytes"
	"context"
	"errors"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/refdata/refdata/blob"
	"github.com/refdata/refdata/store"
	"github.com/refdata/refdata/store/storetest"
)

// noise is n bytes that do not compress, the same for the same seed.
func noise(seed uint64, n int) []byte {
	r := rand.New(rand.NewPCG(seed, 1))
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(r.Uint32())
	}
	return b
}

// newSegment writes a segment of blobs into dir ("": memory), as an import
// stages its segment, and returns it and where its blobs are.
func newSegment(t *testing.T, dir string, blobs ...[]byte) (*blob.Finished, []int64) {
	t.Helper()
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
	f, err := w.Finish()
	if err != nil {
		t.Fatal(err)
	}
	return &f, offs
}

// TestNoValueOver64MiB: a version whose segment, index and a snapshot file
// are each over 16 MiB (none compressing) is stored with no value in the
// database over 64 MiB — the segment and the index in chunks of at most 16
// MiB — and reads back whole: its files, its index, and each blob of its
// segment fetched into a replica's cache.
func TestNoValueOver64MiB(t *testing.T) {
	t.Parallel()
	u := freshSchema(t, "big")
	st := open(t, u)
	st.CacheDir = t.TempDir()
	const over = 16<<20 + 1
	blobs := [][]byte{noise(1, 9<<20), noise(2, 9<<20), noise(3, 1<<10)}
	seg, offs := newSegment(t, t.TempDir(), blobs...)
	if seg.Size <= 16<<20 {
		t.Fatalf("a segment of %d bytes", seg.Size)
	}
	const id = "00000000000000A1"
	files := storetest.Files(id)
	files["en-US/big.json"] = noise(4, over)
	index := noise(5, over)
	unlock, err := st.Lock(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	_, err = st.Publish(store.Publication{ManifestID: id, Version: "v", Branch: "b", Files: files,
		Index: index, Segments: []string{seg.Sum}, Segment: seg, Now: time.Now()})
	unlock()
	if err != nil {
		t.Fatal(err)
	}

	conn, err := pgx.Connect(context.Background(), u)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(context.Background())
	for _, tc := range []struct {
		table    string
		max      int64
		minCount int // rows the version needs at least
	}{
		{"refdata_segments", 16 << 20, 2},
		{"refdata_index_parts", 16 << 20, 2},
		{"refdata_contents", 16 << 20, len(files)},
	} {
		var biggest int64
		var rows int
		if err := conn.QueryRow(context.Background(), "SELECT coalesce(max(octet_length(body)), 0), count(*) FROM "+
			pgx.Identifier{tc.table}.Sanitize()).Scan(&biggest, &rows); err != nil {
			t.Fatal(err)
		}
		if biggest > tc.max || rows < tc.minCount {
			t.Errorf("%s: %d rows, the largest value %d bytes; want at least %d rows, none over %d", tc.table, rows, biggest, tc.minCount, tc.max)
		}
		t.Logf("%s: %d rows, the largest %d bytes", tc.table, rows, biggest)
	}

	if _, got, err := st.ReadVersion(id); err != nil || !bytes.Equal(got["en-US/big.json"], files["en-US/big.json"]) {
		t.Errorf("the big file read back: %d bytes, %v", len(got["en-US/big.json"]), err)
	}
	if _, got, err := st.ReadIndex(id, ""); err != nil || !bytes.Equal(got, index) {
		t.Errorf("the big index read back: %d bytes, %v", len(got), err)
	}
	s, err := st.Segment(seg.Sum, seg.Size, nil)
	if err != nil {
		t.Fatal(err)
	}
	for i, b := range blobs {
		if got, err := s.Read(offs[i], len(b), blob.Checksum(b)); err != nil || !bytes.Equal(got, b) {
			t.Errorf("blob %d of the segment: %d bytes, %v", i, len(got), err)
		}
	}

	// A chunk gone from the database, then every chunk: a replica with an
	// empty cache refuses the segment as corrupt and keeps nothing of it.
	for _, where := range []string{"sha256 = $1 AND chunk = 1", "sha256 = $1"} {
		if _, err := conn.Exec(context.Background(), "DELETE FROM refdata_segments WHERE "+where, seg.Sum); err != nil {
			t.Fatal(err)
		}
		replica := open(t, u)
		replica.CacheDir = t.TempDir()
		if _, err := replica.Segment(seg.Sum, seg.Size, nil); !errors.Is(err, store.ErrCorrupt) {
			t.Errorf("%s deleted: Segment = %v, want ErrCorrupt", where, err)
		}
		if left, _ := os.ReadDir(replica.CacheDir); len(left) != 0 {
			t.Errorf("%s deleted: the cache keeps %d files", where, len(left))
		}
	}
}

// TestSegmentCache: a replica keeps the segments it serves in its cache
// directory, fetched and checked once; a handle opened later (a replica
// restarted on the same directory) checks a cached segment before it trusts
// it, and fetches a damaged, cut, grown or missing one again; a handle that
// checked it already still refuses a damaged blob when it reads it, and
// fetches again one removed since (its directory too).
func TestSegmentCache(t *testing.T) {
	t.Parallel()
	u := freshSchema(t, "segcache")
	blobs := [][]byte{[]byte(`{"status":200,"data":"one"}`), noise(6, 64<<10), []byte(`{"status":200,"data":"three"}`)}
	seg, offs := newSegment(t, "", blobs...)
	pub := open(t, u)
	unlock, err := pub.Lock(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	const id = "00000000000000A1"
	_, err = pub.Publish(store.Publication{ManifestID: id, Version: "v", Branch: "b", Files: storetest.Files(id),
		Index: []byte("index"), Segments: []string{seg.Sum}, Segment: seg, Now: time.Now()})
	unlock()
	if err != nil {
		t.Fatal(err)
	}
	readAll := func(t *testing.T, s *blob.Segment) error {
		t.Helper()
		for i, b := range blobs {
			got, err := s.Read(offs[i], len(b), blob.Checksum(b))
			if err != nil {
				return err
			}
			if !bytes.Equal(got, b) {
				t.Fatalf("blob %d: other bytes", i)
			}
		}
		return nil
	}
	for _, tc := range []struct {
		name   string
		damage func(path string) error
	}{
		{"a flipped byte", func(p string) error {
			b, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			b[offs[1]+100] ^= 1
			return os.WriteFile(p, b, 0o644)
		}},
		{"cut short", func(p string) error { return os.Truncate(p, offs[1]) }},
		{"a byte more", func(p string) error {
			f, err := os.OpenFile(p, os.O_APPEND|os.O_WRONLY, 0)
			if err != nil {
				return err
			}
			_, err = f.Write([]byte{' '})
			return errors.Join(err, f.Close())
		}},
		{"removed", os.Remove},
		{"its directory removed", func(p string) error { return os.RemoveAll(filepath.Dir(p)) }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			first := open(t, u)
			first.CacheDir = dir
			s, err := first.Segment(seg.Sum, seg.Size, nil)
			if err != nil {
				t.Fatal(err)
			}
			if err := readAll(t, s); err != nil {
				t.Fatal(err)
			}
			path := blob.Path(dir, seg.Sum)
			if got, err := os.ReadFile(path); err != nil || !bytes.Equal(got, seg.Mem) {
				t.Fatalf("the cached segment: %d bytes, %v", len(got), err)
			}
			if err := tc.damage(path); err != nil {
				t.Fatal(err)
			}
			if tc.name == "a flipped byte" {
				// The handle that checked the file opens it again without
				// checking it whole; the blob is checked as it is read.
				again, err := first.Segment(seg.Sum, seg.Size, nil)
				if err != nil {
					t.Fatal(err)
				}
				if got, err := again.Read(offs[1], len(blobs[1]), blob.Checksum(blobs[1])); !errors.Is(err, blob.ErrCorrupt) || got != nil {
					t.Errorf("a damaged blob read by the handle that cached it: %d bytes, %v", len(got), err)
				}
			}
			if strings.Contains(tc.name, "removed") {
				// The handle that checked the file fetches it again: a cleaner
				// of the temporary directory removed it while the replica ran.
				again, err := first.Segment(seg.Sum, seg.Size, nil)
				if err != nil {
					t.Fatalf("the handle that cached it, the copy %s: %v", tc.name, err)
				}
				if err := readAll(t, again); err != nil {
					t.Errorf("the handle that cached it, the copy %s: %v", tc.name, err)
				}
			}
			later := open(t, u)
			later.CacheDir = dir
			s, err = later.Segment(seg.Sum, seg.Size, nil)
			if err != nil {
				t.Fatalf("a new handle on a damaged cache: %v", err)
			}
			if err := readAll(t, s); err != nil {
				t.Errorf("a new handle on a damaged cache: %v", err)
			}
			if got, err := os.ReadFile(path); err != nil || !bytes.Equal(got, seg.Mem) {
				t.Errorf("the cached segment after a new handle: %d bytes, %v; want it fetched again", len(got), err)
			}
		})
	}
	// A segment the database does not hold is ErrCorrupt, and not cached.
	dir := t.TempDir()
	s := open(t, u)
	s.CacheDir = dir
	other, _ := newSegment(t, "", []byte("never published"))
	if _, err := s.Segment(other.Sum, other.Size, nil); !errors.Is(err, store.ErrCorrupt) {
		t.Errorf("a segment not stored: %v, want ErrCorrupt", err)
	}
	if entries, err := os.ReadDir(dir); err != nil || len(entries) != 0 {
		t.Errorf("a failed fetch left %d files in the cache (%v)", len(entries), err)
	}
}
