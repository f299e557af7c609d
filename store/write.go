package store

import (
	"bytes"
	"compress/gzip"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"maps"
	"os"
	"path"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/refdata/refdata/blob"
	"github.com/refdata/refdata/catalog"
)

// Publication is one version to publish: its snapshot files and, when a version
// was active before, the diff from it.
type Publication struct {
	ManifestID string
	Version    string
	Branch     string
	Files      map[string][]byte // snapshot path ("en-US/weapons.json") → bytes
	// Stored names snapshot files stored already (Backend.PutFiles): path →
	// sha256.
	Stored map[string]string
	// Previous and DiffBody: the diff Previous → ManifestID as served by /v1/diff.
	Previous string
	DiffBody []byte
	// Index is the version's edition index (package edition), what servers
	// read; Segments, the sha256 of every segment it names; Segment, when
	// not nil, the one its import wrote, which the store takes over.
	Index    []byte
	Segments []string
	Segment  *blob.Finished
	// Bulk describes the index's bulk files (Manifest.Bulk).
	Bulk   map[string]BulkFile
	Retain int // versions to keep, the new one included; < 1 keeps all
	Now    time.Time
	// Replace re-publishes a manifestId already stored (import --force): the
	// new files take the old ones' place and the diffs naming it are dropped.
	Replace bool
}

// Names checks p's manifest ID, snapshot paths and segments, which every
// backend refuses a publication for, and returns the paths in order.
func (p Publication) Names() ([]string, error) {
	if !catalog.IsManifestID(p.ManifestID) {
		return nil, fmt.Errorf("publish: %q is not a manifest ID", p.ManifestID)
	}
	for _, sum := range p.Segments {
		if !blob.ValidSum(sum) {
			return nil, fmt.Errorf("publish: segment %q is not named by a sha256", sum)
		}
	}
	if p.Segment != nil && !slices.Contains(p.Segments, p.Segment.Sum) {
		return nil, fmt.Errorf("publish: the new segment %s is not among the index's", p.Segment.Sum)
	}
	names := make([]string, 0, len(p.Files))
	for name := range p.Files {
		if !fs.ValidPath(name) || Reserved(name) || strings.HasPrefix(name, ".") {
			return nil, fmt.Errorf("publish: bad snapshot path %q", name)
		}
		names = append(names, name)
	}
	for name, sum := range p.Stored {
		if _, dup := p.Files[name]; !fs.ValidPath(name) || Reserved(name) || strings.HasPrefix(name, ".") || dup || !blob.ValidSum(sum) {
			return nil, fmt.Errorf("publish: bad stored snapshot path %q (%q)", name, sum)
		}
	}
	sort.Strings(names)
	return names, nil
}

// Manifest is p's manifest as the seq-th version published, and its JSON.
func (p Publication) Manifest(seq int64) (Manifest, []byte, error) {
	m := Manifest{ManifestID: p.ManifestID, Version: p.Version, Branch: p.Branch, Seq: seq,
		PublishedAt: p.Now.UTC(), Files: make(map[string]string, len(p.Files)), Contents: true}
	for name, b := range p.Files {
		m.Files[name] = Sum(b)
	}
	maps.Copy(m.Files, p.Stored)
	if len(p.Index) > 0 {
		m.Index, m.Segments, m.Bulk = PackSum(p.Index), p.Segments, p.Bulk
	}
	mb, err := json.MarshalIndent(m, "", "  ")
	if err != nil {
		return m, nil, fmt.Errorf("publish %s: manifest: %w", p.ManifestID, err)
	}
	return m, mb, nil
}

// Publish persists a version and makes it active; the caller holds Lock. Order:
// version directory (staged, fsynced, renamed), diff file, active pointer, then
// pruning, so a crash before the pointer's rename leaves the old version active.
func (s *Store) Publish(p Publication) ([]string, error) {
	names, err := p.Names()
	if err != nil {
		return nil, err
	}
	if _, err := s.Lookup(p.ManifestID); err == nil && !p.Replace {
		return nil, fmt.Errorf("publish: version %s is already stored", p.ManifestID)
	}
	vs, err := s.Versions()
	if err != nil {
		return nil, err
	}
	var seq int64 = 1
	if len(vs) > 0 {
		seq = vs[len(vs)-1].Seq + 1
	}
	m, mb, err := p.Manifest(seq)
	if err != nil {
		return nil, err
	}
	for _, d := range []string{versionsDir, diffsDir, tmpDir, filesDir, segmentsDir} {
		if err := os.MkdirAll(filepath.Join(s.dir, d), 0o755); err != nil {
			return nil, fmt.Errorf("publish: %w", err)
		}
	}
	if err := s.putFiles(names, p.Files); err != nil {
		return nil, err
	}
	if err := s.putSegment(p.Segment); err != nil {
		return nil, err
	}
	stage := filepath.Join(s.dir, tmpDir, p.ManifestID+"."+randomSuffix())
	if err := os.Mkdir(stage, 0o755); err != nil {
		return nil, fmt.Errorf("publish: %w", err)
	}
	if len(p.Index) > 0 {
		if err := s.writeSynced(filepath.Join(stage, indexFile), CompressFile(p.Index)); err != nil {
			return nil, err
		}
	}
	if err := s.writeSynced(filepath.Join(stage, manifestFile), mb); err != nil {
		return nil, err
	}
	if err := s.syncDir(stage); err != nil {
		return nil, err
	}
	ptr := Pointer{ManifestID: p.ManifestID, Previous: p.Previous, ManifestSHA256: Sum(mb), PublishedAt: m.PublishedAt}
	// A replaced version is exchanged with the new one in one step, the
	// pointer naming both manifests meanwhile, so a crash leaves one whole
	// copy in versions/ that the pointer names (the other is in tmp/).
	exchanged := false
	if id, err := s.Lookup(p.ManifestID); err == nil && p.Replace {
		s.removeDiffs([]string{id})
		if old, err := os.ReadFile(filepath.Join(s.dir, versionsDir, id, manifestFile)); err == nil && id == p.ManifestID {
			both := ptr
			both.ReplacedSHA256 = Sum(old)
			if err := s.writePointer(both); err != nil {
				return nil, fmt.Errorf("publish: %w", err)
			}
			s.step("exchange the replaced version with the new one")
			if exchanged, err = exchange(stage, filepath.Join(s.dir, versionsDir, id)); err != nil {
				return nil, fmt.Errorf("publish: %w", err)
			}
		}
		if !exchanged {
			s.step("move replaced version out of versions/")
			if err := s.trash(id); err != nil {
				return nil, fmt.Errorf("publish: %w", err)
			}
		}
	}
	if !exchanged {
		s.step("rename version into versions/")
		if err := os.Rename(stage, filepath.Join(s.dir, versionsDir, p.ManifestID)); err != nil {
			return nil, fmt.Errorf("publish: %w", err)
		}
	}
	if err := s.syncDir(filepath.Join(s.dir, versionsDir)); err != nil {
		return nil, err
	}

	if p.Previous != "" && p.DiffBody != nil {
		if err := s.writeDiff(p.Previous, p.ManifestID, p.DiffBody); err != nil {
			return nil, err
		}
	}

	if err := s.writePointer(ptr); err != nil {
		return nil, fmt.Errorf("publish: %w", err)
	}
	gone, err := s.prune(p.Retain, p.ManifestID)
	if err != nil {
		return gone, err
	}
	_ = s.Sweep() // what a failed sweep leaves, the next one removes: the version is published
	return gone, nil
}

// writePointer replaces the active pointer with p.
func (s *Store) writePointer(p Pointer) error {
	pb, err := json.MarshalIndent(p, "", "  ")
	if err == nil {
		err = s.replace(activeFile, pb)
	}
	if err != nil {
		return fmt.Errorf("active pointer: %w", err)
	}
	return nil
}

// PutFiles stores snapshot files by content ahead of a publish, so an import
// need not hold them while it renders; the caller holds the lock. It returns
// their sha256 by path (Publication.Stored). What no version names when the
// next publish sweeps is removed.
func (s *Store) PutFiles(files map[string][]byte) (map[string]string, error) {
	if err := os.MkdirAll(filepath.Join(s.dir, filesDir), 0o755); err != nil {
		return nil, fmt.Errorf("put files: %w", err)
	}
	names := slices.Sorted(maps.Keys(files))
	sums := make(map[string]string, len(files))
	for _, name := range names {
		if !fs.ValidPath(name) || Reserved(name) || strings.HasPrefix(name, ".") {
			return nil, fmt.Errorf("put files: bad snapshot path %q", name)
		}
		sums[name] = Sum(files[name])
	}
	return sums, s.putFiles(names, files)
}

// putFiles stores the snapshot files the store lacks, gzipped, under the
// sha256 of their bytes.
func (s *Store) putFiles(names []string, files map[string][]byte) error {
	dir := filepath.Join(s.dir, filesDir)
	wrote := false
	for _, name := range names {
		b := files[name]
		full := filepath.Join(dir, Sum(b)+".gz")
		if _, err := os.Stat(full); err == nil {
			continue
		}
		tmp := filepath.Join(s.dir, tmpDir, "file."+randomSuffix())
		if err := s.writeSynced(tmp, CompressFile(b)); err != nil {
			return err
		}
		if err := os.Rename(tmp, full); err != nil {
			return fmt.Errorf("publish %s: %w", name, err)
		}
		wrote = true
	}
	if wrote {
		return s.syncDir(dir)
	}
	return nil
}

// putSegment moves a new segment (fsynced by its writer) into segments/.
func (s *Store) putSegment(seg *blob.Finished) error {
	if seg == nil {
		return nil
	}
	full := blob.Path(filepath.Join(s.dir, segmentsDir), seg.Sum)
	if _, err := os.Stat(full); err == nil {
		return nil // the same bytes are there
	}
	s.step("rename segment into segments/")
	if seg.Path == "" {
		tmp := filepath.Join(s.dir, tmpDir, "segment."+randomSuffix())
		if err := s.writeSynced(tmp, seg.Mem); err != nil {
			return err
		}
		seg = &blob.Finished{Sum: seg.Sum, Path: tmp}
	}
	if err := os.Rename(seg.Path, full); err != nil {
		return fmt.Errorf("publish segment: %w", err)
	}
	return s.syncDir(filepath.Dir(full))
}

// Sweep deletes the segments and snapshot files no stored version names: a
// pruned version's, or those of an import a crash stopped before it
// published. The caller holds the lock, so no import is between storing them
// and naming them. A crash in a sweep leaves some for the next one.
func (s *Store) Sweep() error {
	names, err := s.versionNames()
	if err != nil {
		return err
	}
	keep := map[string]bool{}
	for _, n := range names {
		m, _, err := s.manifest(n)
		if err != nil {
			// A version whose manifest cannot be read keeps nothing safe to
			// delete: sweep nothing rather than what it may name.
			return nil
		}
		for _, sum := range m.Segments {
			keep[sum+".seg"] = true
		}
		if m.Contents {
			for _, sum := range m.Files {
				keep[sum+".gz"] = true
			}
		}
	}
	var errs []error
	for _, dir := range []string{segmentsDir, filesDir} {
		entries, err := os.ReadDir(filepath.Join(s.dir, dir))
		if err != nil {
			return fmt.Errorf("sweep: %w", err)
		}
		for _, e := range entries {
			if !keep[e.Name()] {
				s.step("sweep " + e.Name())
				errs = append(errs, os.Remove(filepath.Join(s.dir, dir, e.Name())))
			}
		}
	}
	return errors.Join(errs...)
}

// CompressFile is a snapshot file compressed for keeping: snapshot files compress about six to one.
func CompressFile(b []byte) []byte {
	var buf bytes.Buffer
	zw := fileWriters.Get().(*gzip.Writer)
	zw.Reset(&buf)
	_, _ = zw.Write(b)
	_ = zw.Close()
	fileWriters.Put(zw)
	return buf.Bytes()
}

// fileWriters are CompressFile's gzip writers: a new one allocates and clears
// several hundred KiB, more than compressing a small file costs.
var fileWriters = sync.Pool{New: func() any {
	zw, _ := gzip.NewWriterLevel(nil, gzip.DefaultCompression)
	return zw
}}

// maxFileBytes bounds a stored snapshot file when it is read back.
const maxFileBytes = 1 << 30

// DecompressFile reads back what CompressFile made, bounded.
func DecompressFile(z []byte) ([]byte, error) {
	zr, err := gzip.NewReader(bytes.NewReader(z))
	if err != nil {
		return nil, err
	}
	b, err := io.ReadAll(io.LimitReader(zr, maxFileBytes))
	if err != nil {
		return nil, err
	}
	return b, nil
}

// Activate makes a retained version the active one; the caller holds the lock.
func (s *Store) Activate(id string, diffBody []byte, now time.Time) (Pointer, error) {
	id, err := s.Lookup(id)
	if err != nil {
		return Pointer{}, err
	}
	if _, _, err := s.Verify(id, ""); err != nil {
		return Pointer{}, err
	}
	m, msum, err := s.manifest(id)
	if err != nil {
		return Pointer{}, err
	}
	ptr := Pointer{ManifestID: id, ManifestSHA256: msum, PublishedAt: m.PublishedAt, Activated: true}
	if cur, _, err := s.Active(); err == nil && cur.ManifestID != id {
		if _, err := s.Lookup(cur.ManifestID); err == nil {
			ptr.Previous = cur.ManifestID
			if diffBody != nil {
				if err := s.writeDiff(cur.ManifestID, id, diffBody); err != nil {
					return Pointer{}, err
				}
			}
		}
	} else if err == nil {
		ptr.Previous, ptr.Activated = cur.Previous, cur.Activated // already active: the pointer stays as it is
	}
	if err := s.writePointer(ptr); err != nil {
		return Pointer{}, fmt.Errorf("activate: %w", err)
	}
	return ptr, nil
}

const syncStateFile = "SYNC.json"

// SyncState reads the state sync keeps beside the versions; nil when none.
func (s *Store) SyncState() ([]byte, error) {
	b, err := os.ReadFile(filepath.Join(s.dir, syncStateFile))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	return b, err
}

// WriteSyncState replaces the sync state atomically.
func (s *Store) WriteSyncState(b []byte) error { return s.replace(syncStateFile, b) }

// WriteDiff stores a diff computed on demand; the caller holds the lock.
func (s *Store) WriteDiff(from, to string, body []byte) error {
	f, t, err := LookupBoth(s, from, to)
	if err != nil {
		return err
	}
	return s.writeDiff(f, t, body)
}

func (s *Store) writeDiff(from, to string, body []byte) error {
	if !catalog.IsManifestID(from) || !catalog.IsManifestID(to) {
		return fmt.Errorf("write diff: bad version names %q, %q", from, to)
	}
	return s.replace(path.Join(diffsDir, from+"-"+to+".json"), encodeDiffFile(body))
}

// replace writes name (relative to the store) atomically: temp file in tmp/,
// fsync, rename, fsync of the target directory.
func (s *Store) replace(name string, b []byte) error {
	if err := os.MkdirAll(filepath.Join(s.dir, tmpDir), 0o755); err != nil {
		return fmt.Errorf("replace %s: %w", name, err)
	}
	tmp := filepath.Join(s.dir, tmpDir, path.Base(name)+"."+randomSuffix())
	if err := s.writeSynced(tmp, b); err != nil {
		return err
	}
	full := filepath.Join(s.dir, filepath.FromSlash(name))
	s.step("rename " + name)
	if err := os.Rename(tmp, full); err != nil {
		return fmt.Errorf("replace %s: %w", name, err)
	}
	return s.syncDir(filepath.Dir(full))
}

func (s *Store) writeSynced(name string, b []byte) error {
	s.step("write " + filepath.Base(name))
	f, err := os.OpenFile(name, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o644)
	if err != nil {
		return fmt.Errorf("write %s: %w", name, err)
	}
	if _, err := f.Write(b); err != nil {
		f.Close()
		return fmt.Errorf("write %s: %w", name, err)
	}
	s.step("fsync " + filepath.Base(name))
	if err := f.Sync(); err != nil {
		f.Close()
		return fmt.Errorf("fsync %s: %w", name, err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("close %s: %w", name, err)
	}
	return nil
}

func (s *Store) syncDir(dir string) error {
	s.step("fsync dir " + filepath.Base(dir))
	d, err := os.Open(dir)
	if err != nil {
		return fmt.Errorf("fsync %s: %w", dir, err)
	}
	defer d.Close()
	if err := d.Sync(); err != nil {
		return fmt.Errorf("fsync %s: %w", dir, err)
	}
	return nil
}

// prune removes the oldest versions beyond retain (never the active one) and
// the diffs naming them. A version leaves by one rename into tmp/, so a crash
// never leaves half a version listed.
func (s *Store) prune(retain int, active string) ([]string, error) {
	if retain < 1 {
		return nil, nil
	}
	vs, err := s.Versions()
	if err != nil {
		return nil, err
	}
	var gone []string
	for i := 0; i < len(vs)-retain; i++ {
		id := vs[i].ManifestID
		if id == active {
			continue
		}
		s.step("prune " + id)
		if err := s.trash(id); err != nil {
			return gone, fmt.Errorf("prune %s: %w", id, err)
		}
		gone = append(gone, id)
	}
	if len(gone) == 0 {
		return nil, nil
	}
	if err := s.syncDir(filepath.Join(s.dir, versionsDir)); err != nil {
		return gone, err
	}
	s.removeDiffs(gone)
	return gone, s.CleanTmp()
}

// Discard removes a stored version that is not active; the caller holds the lock.
func (s *Store) Discard(id string) error {
	id, err := s.Lookup(id)
	if err != nil {
		return err
	}
	if p, _, err := s.Active(); err == nil && p.ManifestID == id {
		return fmt.Errorf("discard %s: it is the active version", id)
	}
	if err := s.trash(id); err != nil {
		return fmt.Errorf("discard %s: %w", id, err)
	}
	if err := s.syncDir(filepath.Join(s.dir, versionsDir)); err != nil {
		return err
	}
	s.removeDiffs([]string{id})
	if err := s.CleanTmp(); err != nil {
		return err
	}
	return s.Sweep()
}

// trash moves a version out of versions/ into tmp/ in one rename.
func (s *Store) trash(id string) error {
	return os.Rename(filepath.Join(s.dir, versionsDir, id), filepath.Join(s.dir, tmpDir, "trash."+id+"."+randomSuffix()))
}

func (s *Store) removeDiffs(ids []string) {
	entries, _ := os.ReadDir(filepath.Join(s.dir, diffsDir))
	for _, e := range entries {
		if slices.ContainsFunc(ids, func(id string) bool { return strings.Contains(e.Name(), id) }) {
			_ = os.Remove(filepath.Join(s.dir, diffsDir, e.Name()))
		}
	}
}

// CleanTmp removes staging leftovers (of a crash, or pruned versions); the caller
// holds the lock.
func (s *Store) CleanTmp() error {
	entries, err := os.ReadDir(filepath.Join(s.dir, tmpDir))
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("clean tmp: %w", err)
	}
	var errs []error
	for _, e := range entries {
		errs = append(errs, os.RemoveAll(filepath.Join(s.dir, tmpDir, e.Name())))
	}
	return errors.Join(errs...)
}

func randomSuffix() string {
	var b [6]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}
