package postgres

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"

	"github.com/jackc/pgx/v5"

	"github.com/refdata/refdata/blob"
	"github.com/refdata/refdata/store"
)

// chunkBytes bounds every value the store writes for bodies: a segment's
// chunks and an index's parts.
const chunkBytes = 16 << 20

// PutFiles stores snapshot files by content ahead of a publish, in a
// transaction of their own; the caller holds the lock. What no version names
// when the next publish sweeps is removed.
func (s *Store) PutFiles(files map[string][]byte) (map[string]string, error) {
	sums := make(map[string]string, len(files))
	for name, b := range files {
		sums[name] = store.Sum(b)
	}
	ctx := context.Background()
	if err := s.ensure(ctx); err != nil {
		return nil, err
	}
	err := pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		return putContents(ctx, tx, sums, files)
	})
	if err != nil {
		return nil, fmt.Errorf("put files: %w", err)
	}
	return sums, nil
}

// putContents stores the snapshot files the database lacks, gzipped, once
// each by the sha256 of their bytes (sums: path → sha256).
func putContents(ctx context.Context, tx pgx.Tx, sums map[string]string, files map[string][]byte) error {
	bySum := map[string][]byte{}
	list := make([]string, 0, len(files))
	for name, b := range files {
		if _, ok := bySum[sums[name]]; !ok {
			list = append(list, sums[name])
		}
		bySum[sums[name]] = b
	}
	rows, err := tx.Query(ctx, "SELECT DISTINCT sha256 FROM refdata_contents WHERE sha256 = ANY($1)", list)
	if err != nil {
		return err
	}
	have, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		return err
	}
	for _, h := range have {
		delete(bySum, h)
	}
	for sum, b := range bySum {
		z := store.CompressFile(b)
		for i := 0; i == 0 || len(z) > 0; i++ {
			n := min(len(z), chunkBytes)
			if _, err := tx.Exec(ctx, "INSERT INTO refdata_contents (sha256, chunk, body) VALUES ($1, $2, $3)", sum, i, z[:n]); err != nil {
				return fmt.Errorf("file %s: %w", sum[:12], err)
			}
			z = z[n:]
		}
	}
	return nil
}

// putSegment stores a new segment as chunks, unless it is stored already.
func putSegment(ctx context.Context, tx pgx.Tx, seg *blob.Finished) error {
	if seg == nil {
		return nil
	}
	var exists bool
	if err := tx.QueryRow(ctx, "SELECT exists(SELECT 1 FROM refdata_segments WHERE sha256 = $1)", seg.Sum).Scan(&exists); err != nil || exists {
		return err
	}
	var r io.Reader
	if seg.Path != "" {
		f, err := os.Open(seg.Path)
		if err != nil {
			return fmt.Errorf("segment: %w", err)
		}
		defer f.Close()
		r = f
	} else {
		r = bytesReader(seg.Mem)
	}
	buf := make([]byte, chunkBytes)
	for i := 0; ; i++ {
		n, err := io.ReadFull(r, buf)
		if n > 0 {
			if _, err := tx.Exec(ctx, "INSERT INTO refdata_segments (sha256, chunk, body) VALUES ($1, $2, $3)", seg.Sum, i, buf[:n]); err != nil {
				return fmt.Errorf("segment %s chunk %d: %w", seg.Sum[:12], i, err)
			}
		}
		if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
			return nil
		}
		if err != nil {
			return fmt.Errorf("segment: %w", err)
		}
	}
}

// checkNamed fails unless the store holds every segment and snapshot file m
// names: what an import stored ahead (PutFiles) or took from the version it
// builds on may have been swept by another writer since, if its writer lock
// was lost. The caller holds lockContents.
func checkNamed(ctx context.Context, tx pgx.Tx, m store.Manifest) error {
	files := make([]string, 0, len(m.Files))
	for _, sum := range m.Files {
		files = append(files, sum)
	}
	for _, c := range []struct {
		what, table string
		sums        []string
	}{{"segment", "refdata_segments", m.Segments}, {"snapshot file", "refdata_contents", files}} {
		rows, err := tx.Query(ctx, "SELECT DISTINCT sha256 FROM "+c.table+" WHERE sha256 = ANY($1)", c.sums)
		if err != nil {
			return err
		}
		have, err := pgx.CollectRows(rows, pgx.RowTo[string])
		if err != nil {
			return err
		}
		for _, sum := range c.sums {
			if !slices.Contains(have, sum) {
				return fmt.Errorf("the version names %s %s, which the store does not hold: another writer swept it (was this one's lock lost?)", c.what, sum[:min(12, len(sum))])
			}
		}
	}
	return nil
}

// putIndex stores an index, gzipped, in parts.
func putIndex(ctx context.Context, tx pgx.Tx, id string, index []byte) error {
	if len(index) > 0 {
		index = store.CompressFile(index)
	}
	for i := 0; len(index) > 0; i++ {
		n := min(len(index), chunkBytes)
		if _, err := tx.Exec(ctx, "INSERT INTO refdata_index_parts (manifest_id, part, body) VALUES ($1, $2, $3)", id, i, index[:n]); err != nil {
			return fmt.Errorf("index part %d: %w", i, err)
		}
		index = index[n:]
	}
	return nil
}

// Sweep deletes the segments and files no stored version names, in a
// transaction of its own; the caller holds the lock.
func (s *Store) Sweep() error {
	if ok, err := s.Exists(); err != nil || !ok {
		return err
	}
	ctx := context.Background()
	return pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error { return s.sweep(ctx, tx) })
}

// lockContents serializes tx with every other transaction that names or
// sweeps segments and files, until it ends. The writer lock does too, but it
// lives in a session of its own, which can end behind its writer's back (a
// server restart, idle_session_timeout, a proxy): then a sweep must still
// never delete what a publish names, and a publish never name what a sweep
// deleted. Each statement after it sees what the other committed.
func (s *Store) lockContents(ctx context.Context, tx pgx.Tx) error {
	_, err := tx.Exec(ctx, "SELECT pg_advisory_xact_lock($1, $2)", lockClass, s.lockKey+2)
	return err
}

// sweep deletes the segments and files no stored version names.
func (s *Store) sweep(ctx context.Context, tx pgx.Tx) error {
	if err := s.lockContents(ctx, tx); err != nil {
		return err
	}
	rows, err := tx.Query(ctx, "SELECT manifest FROM refdata_versions")
	if err != nil {
		return err
	}
	raws, err := pgx.CollectRows(rows, pgx.RowTo[[]byte])
	if err != nil {
		return err
	}
	segs, files := []string{}, []string{}
	for _, raw := range raws {
		m, err := parseManifest(raw)
		if err != nil {
			return nil // keep everything: a manifest that cannot be read may name it
		}
		segs = append(segs, m.Segments...)
		if m.Contents {
			for _, sum := range m.Files {
				files = append(files, sum)
			}
		}
	}
	if _, err := tx.Exec(ctx, "DELETE FROM refdata_segments WHERE sha256 <> ALL($1)", segs); err != nil {
		return err
	}
	_, err = tx.Exec(ctx, "DELETE FROM refdata_contents WHERE sha256 <> ALL($1)", files)
	return err
}

// readContents reads a version's files stored by content.
func readContents(ctx context.Context, tx pgx.Tx, m store.Manifest, files map[string][]byte) error {
	sums := make([]string, 0, len(m.Files))
	for _, sum := range m.Files {
		sums = append(sums, sum)
	}
	rows, err := tx.Query(ctx, "SELECT sha256, body FROM refdata_contents WHERE sha256 = ANY($1) ORDER BY sha256, chunk", sums)
	if err != nil {
		return err
	}
	zipped := map[string][]byte{}
	var sum string
	var z []byte
	if _, err := pgx.ForEachRow(rows, []any{&sum, &z}, func() error {
		zipped[sum] = append(zipped[sum], z...)
		return nil
	}); err != nil {
		return err
	}
	bySum := make(map[string][]byte, len(zipped))
	for sum, z := range zipped {
		b, err := store.DecompressFile(z)
		if err != nil {
			return fmt.Errorf("file %s: %w: %w", sum[:min(12, len(sum))], store.ErrCorrupt, err)
		}
		bySum[sum] = b
	}
	for name, sum := range m.Files {
		if b, ok := bySum[sum]; ok {
			files[name] = b
		}
	}
	return nil
}

// readIndex reads a version's index parts.
func readIndex(ctx context.Context, tx pgx.Tx, id string) ([]byte, error) {
	rows, err := tx.Query(ctx, "SELECT body FROM refdata_index_parts WHERE manifest_id = $1 ORDER BY part", id)
	if err != nil {
		return nil, err
	}
	var out []byte
	var part []byte
	if _, err = pgx.ForEachRow(rows, []any{&part}, func() error { out = append(out, part...); return nil }); err != nil {
		return nil, err
	}
	if out == nil {
		return nil, nil
	}
	out, err = store.DecompressFile(out)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", store.ErrCorrupt, err)
	}
	return out, nil
}

// Segment opens a segment from the local cache directory, fetching it from
// the database first when the cache lacks it; a fetched segment is checked
// against its sha256 before it is kept, and one already kept is checked the
// first time this process opens it, so a damaged copy is fetched again, as is
// one removed since.
func (s *Store) Segment(sum string, size int64, c *blob.Cache) (*blob.Segment, error) {
	if !blob.ValidSum(sum) {
		return nil, fmt.Errorf("segment %q: %w", sum, store.ErrCorrupt)
	}
	dir, err := s.cacheDir()
	if err != nil {
		return nil, err
	}
	mu := s.segmentLock(sum)
	mu.Lock()
	defer mu.Unlock()
	path := blob.Path(dir, sum)
	if _, checked := s.checked.Load(sum); checked {
		if seg, err := blob.Open(path, sum, size, c); err == nil {
			return seg, nil
		}
		// Removed (a cleaner of the temporary directory) or cut since it was
		// checked: fetched again, or the version could not be read until a restart.
		s.checked.Delete(sum)
	}
	if err := checkFile(path, sum, size); err != nil {
		_ = os.Remove(path)
		if err := s.fetchSegment(context.Background(), dir, sum, size); err != nil {
			return nil, err
		}
		s.pruneCache(dir)
	}
	s.checked.Store(sum, true)
	seg, err := blob.Open(path, sum, size, c)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", store.ErrCorrupt, err)
	}
	return seg, nil
}

func (s *Store) segmentLock(sum string) *sync.Mutex {
	mu, _ := s.fetching.LoadOrStore(sum, new(sync.Mutex))
	return mu.(*sync.Mutex)
}

// pruneCache removes from the cache the segments no stored version names, so
// it holds no more than the store does: a replica still serving from one has
// it open, and its file lives on until closed.
func (s *Store) pruneCache(dir string) {
	vs, err := s.Versions()
	if err != nil {
		return // keep everything rather than guess
	}
	keep := map[string]bool{}
	for _, v := range vs {
		for _, sum := range v.Segments {
			keep[filepath.Base(blob.Path(dir, sum))] = true
		}
	}
	entries, _ := os.ReadDir(dir)
	for _, e := range entries {
		if name := e.Name(); filepath.Ext(name) == ".seg" && !keep[name] {
			_ = os.Remove(filepath.Join(dir, name))
			s.checked.Delete(strings.TrimSuffix(name, ".seg"))
		}
	}
}

// cacheDir is CacheDir, made when missing; by default a directory per store
// (server, database and schema) in the system's temporary directory: two
// stores' replicas on one machine never prune each other's segments.
func (s *Store) cacheDir() (string, error) {
	dir := s.CacheDir
	if dir == "" {
		sum := sha256.Sum256([]byte(s.Location()))
		dir = filepath.Join(os.TempDir(), fmt.Sprintf("refdata-segments-%s-%x", s.schema, sum[:6]))
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", fmt.Errorf("segment cache: %w", err)
	}
	return dir, nil
}

// checkFile checks a cached segment's size and sha256.
func checkFile(path, sum string, size int64) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	h := sha256.New()
	n, err := io.Copy(h, f)
	if err != nil {
		return err
	}
	if n != size || hex.EncodeToString(h.Sum(nil)) != sum {
		return fmt.Errorf("segment %s: %w", sum[:12], store.ErrCorrupt)
	}
	return nil
}

// A segment is fetched in pieces of at most pieceBytes, fetchAhead of them
// read from the database at once while the fetch writes and hashes them in
// order: the server reads the next pieces while this process takes the last
// (a replica's first start fetches every segment its versions name), and
// at most fetchAhead pieces are held. A piece is a substring of a chunk,
// which PostgreSQL reads from the chunk's stored (EXTERNAL) value alone.
const (
	pieceBytes = 4 << 20
	fetchAhead = 3
)

// piece is a part of a segment's chunk.
type piece struct {
	chunk     int
	off, size int64
}

// fetchSegment copies a segment's chunks into the cache, checked.
func (s *Store) fetchSegment(ctx context.Context, dir, sum string, size int64) error {
	pieces, err := s.pieces(ctx, sum, size)
	if err != nil {
		return err
	}
	tmp, err := os.CreateTemp(dir, "fetch-*.tmp")
	if err != nil {
		return fmt.Errorf("segment cache: %w", err)
	}
	defer os.Remove(tmp.Name())
	defer tmp.Close()
	ctx, cancel := context.WithCancel(ctx)
	defer cancel() // ends the reads under way at a failure; each is dropped
	type read struct {
		body []byte
		err  error
	}
	reads := make([]chan read, len(pieces))
	start := func(i int) {
		reads[i] = make(chan read, 1)
		go func() {
			var body []byte
			err := s.pool.QueryRow(ctx, "SELECT substring(body FROM $3 FOR $4) FROM refdata_segments WHERE sha256 = $1 AND chunk = $2",
				sum, pieces[i].chunk, pieces[i].off+1, pieces[i].size).Scan(&body)
			reads[i] <- read{body, err}
		}()
	}
	for i := range min(fetchAhead, len(pieces)) {
		start(i)
	}
	h := sha256.New()
	w := io.MultiWriter(tmp, h)
	var n int64
	for i, p := range pieces {
		r := <-reads[i] // every read started answers, if only with ctx's error
		switch {
		case errors.Is(r.err, pgx.ErrNoRows):
			return fmt.Errorf("segment %s: chunk %d gone: %w", sum[:12], p.chunk, store.ErrCorrupt)
		case r.err != nil:
			return fmt.Errorf("segment %s: %w", sum[:12], r.err)
		case int64(len(r.body)) != p.size:
			return fmt.Errorf("segment %s: chunk %d changed while read: %w", sum[:12], p.chunk, store.ErrCorrupt)
		}
		if _, err := w.Write(r.body); err != nil {
			return fmt.Errorf("segment cache: %w", err)
		}
		n += int64(len(r.body))
		if next := i + fetchAhead; next < len(pieces) {
			start(next) // this one written: the next read may start
		}
	}
	if n != size || hex.EncodeToString(h.Sum(nil)) != sum {
		return fmt.Errorf("segment %s: its chunks fail its checksum: %w", sum[:12], store.ErrCorrupt)
	}
	// Not synced: a copy cut or lost by a crash fails its check when the
	// next process first opens it, and is fetched again.
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("segment cache: %w", err)
	}
	return os.Rename(tmp.Name(), blob.Path(dir, sum))
}

// pieces plans a segment's fetch from its chunks' lengths (read without
// their bodies): chunks numbered from 0 with none missing, size bytes in all.
func (s *Store) pieces(ctx context.Context, sum string, size int64) ([]piece, error) {
	rows, err := s.pool.Query(ctx, "SELECT chunk, octet_length(body) FROM refdata_segments WHERE sha256 = $1 ORDER BY chunk", sum)
	if err != nil {
		return nil, fmt.Errorf("segment %s: %w", sum[:12], err)
	}
	var pieces []piece
	var total int64
	next := 0
	var chunk int
	var n int64
	_, err = pgx.ForEachRow(rows, []any{&chunk, &n}, func() error {
		if chunk != next {
			return fmt.Errorf("segment %s: chunk %d missing: %w", sum[:12], next, store.ErrCorrupt)
		}
		next++
		for off := int64(0); off < n; off += pieceBytes {
			pieces = append(pieces, piece{chunk: chunk, off: off, size: min(pieceBytes, n-off)})
		}
		total += n
		return nil
	})
	switch {
	case errors.Is(err, store.ErrCorrupt):
		return nil, err
	case err != nil:
		return nil, fmt.Errorf("segment %s: %w", sum[:12], err)
	case next == 0:
		return nil, fmt.Errorf("segment %s: not stored: %w", sum[:12], store.ErrCorrupt)
	case total != size:
		return nil, fmt.Errorf("segment %s: its chunks hold %d bytes, not %d: %w", sum[:12], total, size, store.ErrCorrupt)
	}
	return pieces, nil
}

// Staging is the system's temporary directory: an import writes its new
// segment there, and Publish copies it into the database.
func (s *Store) Staging() string { return os.TempDir() }
