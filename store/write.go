package store

import (
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/refdata/refdata/catalog"
)

// Publication is one version to publish: its snapshot files and, when a version
// was active before, the diff from it.
type Publication struct {
	ManifestID string
	Version    string
	Branch     string
	Files      map[string][]byte // snapshot path ("en-US/weapons.json") → bytes
	// Previous and DiffBody: the diff Previous → ManifestID as served by /v1/diff.
	Previous string
	DiffBody []byte
	// Edition is the version's edition pack (package edition), what servers read.
	Edition []byte
	Retain  int // versions to keep, the new one included; < 1 keeps all
	Now     time.Time
	// Replace re-publishes a manifestId already stored (import --force): the
	// new files take the old ones' place and the diffs naming it are dropped.
	Replace bool
}

// Names checks p's manifest ID and snapshot paths, which every backend
// refuses a publication for, and returns the paths in order.
func (p Publication) Names() ([]string, error) {
	if !catalog.IsManifestID(p.ManifestID) {
		return nil, fmt.Errorf("publish: %q is not a manifest ID", p.ManifestID)
	}
	names := make([]string, 0, len(p.Files))
	for name := range p.Files {
		if !fs.ValidPath(name) || Reserved(name) || strings.HasPrefix(name, ".") {
			return nil, fmt.Errorf("publish: bad snapshot path %q", name)
		}
		names = append(names, name)
	}
	sort.Strings(names)
	return names, nil
}

// Manifest is p's manifest as the seq-th version published, and its JSON.
func (p Publication) Manifest(seq int64) (Manifest, []byte, error) {
	m := Manifest{ManifestID: p.ManifestID, Version: p.Version, Branch: p.Branch, Seq: seq,
		PublishedAt: p.Now.UTC(), Files: make(map[string]string, len(p.Files))}
	for name, b := range p.Files {
		m.Files[name] = Sum(b)
	}
	if len(p.Edition) > 0 {
		m.Edition = PackSum(p.Edition)
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
	for _, d := range []string{versionsDir, diffsDir, tmpDir} {
		if err := os.MkdirAll(filepath.Join(s.dir, d), 0o755); err != nil {
			return nil, fmt.Errorf("publish: %w", err)
		}
	}
	stage := filepath.Join(s.dir, tmpDir, p.ManifestID+"."+randomSuffix())
	if err := os.Mkdir(stage, 0o755); err != nil {
		return nil, fmt.Errorf("publish: %w", err)
	}
	dirs := map[string]bool{stage: true}
	for _, name := range names {
		full := filepath.Join(stage, filepath.FromSlash(name))
		if d := filepath.Dir(full); !dirs[d] {
			if err := os.MkdirAll(d, 0o755); err != nil {
				return nil, fmt.Errorf("publish: %w", err)
			}
			dirs[d] = true
		}
		if err := s.writeSynced(full, p.Files[name]); err != nil {
			return nil, err
		}
	}
	if len(p.Edition) > 0 {
		if err := s.writeSynced(filepath.Join(stage, editionFile), p.Edition); err != nil {
			return nil, err
		}
	}
	if err := s.writeSynced(filepath.Join(stage, manifestFile), mb); err != nil {
		return nil, err
	}
	for d := range dirs {
		if err := s.syncDir(d); err != nil {
			return nil, err
		}
	}
	if id, err := s.Lookup(p.ManifestID); err == nil && p.Replace {
		s.step("move replaced version out of versions/")
		if err := s.trash(id); err != nil {
			return nil, fmt.Errorf("publish: %w", err)
		}
		s.removeDiffs([]string{id})
	}
	s.step("rename version into versions/")
	if err := os.Rename(stage, filepath.Join(s.dir, versionsDir, p.ManifestID)); err != nil {
		return nil, fmt.Errorf("publish: %w", err)
	}
	if err := s.syncDir(filepath.Join(s.dir, versionsDir)); err != nil {
		return nil, err
	}

	if p.Previous != "" && p.DiffBody != nil {
		if err := s.writeDiff(p.Previous, p.ManifestID, p.DiffBody); err != nil {
			return nil, err
		}
	}

	ptr := Pointer{ManifestID: p.ManifestID, Previous: p.Previous, ManifestSHA256: Sum(mb), PublishedAt: m.PublishedAt}
	pb, err := json.MarshalIndent(ptr, "", "  ")
	if err != nil {
		return nil, fmt.Errorf("publish: %w", err)
	}
	if err := s.replace(activeFile, pb); err != nil {
		return nil, fmt.Errorf("publish active pointer: %w", err)
	}
	return s.prune(p.Retain, p.ManifestID)
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
	pb, err := json.MarshalIndent(ptr, "", "  ")
	if err != nil {
		return Pointer{}, fmt.Errorf("activate: %w", err)
	}
	if err := s.replace(activeFile, pb); err != nil {
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
	return s.CleanTmp()
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
