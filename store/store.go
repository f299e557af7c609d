// Package store keeps game versions behind Backend: the file store (a
// directory, layout in docs/pipeline.md) here, PostgreSQL in store/postgres.
// A version is a manifest of its snapshot files' sha256 sums and its edition
// index; the files and the bodies' segments are stored once by content and
// shared by every version that names them. Beside them, the diffs between
// versions and the active pointer. Every write goes to a temporary name, is
// fsynced and renamed, the pointer last, so a crash leaves the old or the
// new version active; what a crash leaves unnamed the next sweep removes.
package store

import (
	"bytes"
	"cmp"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"hash/crc64"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"syscall"
	"time"

	"github.com/refdata/refdata/blob"
	"github.com/refdata/refdata/catalog"
)

// ErrNotFound is wrapped by errors for versions or diffs the store does not hold.
var ErrNotFound = errors.New("not found")

// ErrCorrupt is wrapped by errors for files that fail their checksum or do not parse.
var ErrCorrupt = errors.New("corrupt")

const (
	activeFile   = "ACTIVE"
	lockFile     = "LOCK"
	manifestFile = "MANIFEST.json"
	indexFile    = "INDEX.gz"     // the edition index, gzipped: a quarter smaller
	packFile     = "EDITION.pack" // an edition as stores kept it before its index and segments
	versionsDir  = "versions"
	filesDir     = "files"    // snapshot files, gzipped, by the sha256 of their bytes
	segmentsDir  = "segments" // the bodies' segments, by the sha256 of theirs
	diffsDir     = "diffs"
	tmpDir       = "tmp"
)

// Store is one store directory. Its methods are safe for concurrent use by
// readers; writers serialize through Lock.
type Store struct {
	dir string
	// Trace, when set, is called with every file or directory the store opens,
	// relative to the store directory.
	Trace func(name string)
	// OnStep, when set, is called before each durable write step with what it
	// does (crash tests stop a publish at a chosen one).
	OnStep func(what string)
}

// Manifest describes one stored version.
type Manifest struct {
	ManifestID  string            `json:"manifestId"`
	Version     string            `json:"version"`
	Branch      string            `json:"branch"`
	Seq         int64             `json:"seq"`
	PublishedAt time.Time         `json:"publishedAt"`
	Files       map[string]string `json:"files"` // snapshot path → sha256 hex
	// Index is the edition index's PackSum, and Segments the sha256 of every
	// segment it names; "" for a version stored before bodies were stored by
	// content, which has an edition pack (Edition, its PackSum) instead.
	Index    string   `json:"index,omitempty"`
	Segments []string `json:"segments,omitempty"`
	Edition  string   `json:"edition,omitempty"`
	// Contents: the files are stored once by content (every version this
	// program publishes); false for a version stored before, whose files are
	// its own.
	Contents bool `json:"contents,omitempty"`
	// Bulk describes the version's bulk files (in its index) by language, a
	// locale or "all", for /v1/versions; nil for a version stored before
	// there were any.
	Bulk map[string]BulkFile `json:"bulk,omitempty"`
}

// BulkFile is one language's bulk file: the sha256 and length of its
// identity bytes.
type BulkFile struct {
	SHA256 string `json:"sha256"`
	Size   int64  `json:"size"`
}

// Reserved reports whether name, a path inside a version, is one of the
// store's own files, which a publication's Files may not hold.
func Reserved(name string) bool {
	return name == manifestFile || name == indexFile || name == packFile
}

// Pointer is the content of ACTIVE.
type Pointer struct {
	ManifestID string `json:"manifestId"`
	// Previous is the version that was active before; the latest diff is Previous → ManifestID.
	Previous string `json:"previous,omitempty"`
	// PreviousBefore is Previous's own Previous, on a store that schedules
	// switches: until ActivateAt replicas serve Previous, whose latest diff is
	// PreviousBefore → Previous.
	PreviousBefore string `json:"previousBefore,omitempty"`
	// ManifestSHA256 is the checksum of the version's MANIFEST.json.
	ManifestSHA256 string `json:"manifestSha256"`
	// ReplacedSHA256, while a publish replaces the version (import --force),
	// is the checksum of the manifest being replaced: until the new copy is
	// in place the old one is the version (ReadPointed).
	ReplacedSHA256 string    `json:"replacedManifestSha256,omitempty"`
	PublishedAt    time.Time `json:"publishedAt"`
	// ActivateAt, on a store shared by replicas, is the instant every replica
	// switches to ManifestID (until then they serve Previous); zero: at once.
	ActivateAt time.Time `json:"activateAt,omitzero"`
	// Activated: an operator chose this version (refdata activate), so newer
	// stored versions are kept aside on purpose.
	Activated bool `json:"activated,omitempty"`
}

// Open opens the store in dir. A directory that does not exist is an empty
// store: it is created by the first writer that takes the lock (Lock), and
// removed again when that writer stored nothing (a rejected import, a sync
// that failed), so a mistyped path or a failed first run leaves nothing behind.
func Open(dir string) (*Store, error) {
	if st, err := os.Stat(dir); err == nil && !st.IsDir() {
		return nil, fmt.Errorf("open store: %s is not a directory", dir)
	}
	return &Store{dir: dir}, nil
}

// Create opens the store in dir, creating the directory and its layout now
// (serve --init: an empty store that waits for its first import).
func Create(dir string) (*Store, error) {
	for _, d := range []string{dir, filepath.Join(dir, versionsDir), filepath.Join(dir, filesDir), filepath.Join(dir, segmentsDir), filepath.Join(dir, diffsDir), filepath.Join(dir, tmpDir)} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			return nil, fmt.Errorf("create store: %w", err)
		}
	}
	return &Store{dir: dir}, nil
}

// Exists reports whether the store's directory exists: a sync records its
// failures only in a store that does (a failed first sync creates nothing).
func (s *Store) Exists() (bool, error) {
	_, err := os.Stat(s.dir)
	if errors.Is(err, fs.ErrNotExist) {
		return false, nil
	}
	return err == nil, err
}

// Dir is the store directory.
func (s *Store) Dir() string { return s.dir }

// Location is the store directory.
func (s *Store) Location() string { return s.dir }

func (s *Store) trace(name string) {
	if s.Trace != nil {
		s.Trace(name)
	}
}

// read reads name, a slash-separated path relative to the store directory.
func (s *Store) read(name string) ([]byte, error) {
	s.trace(name)
	return os.ReadFile(filepath.Join(s.dir, filepath.FromSlash(name)))
}

// step marks one durable write step.
func (s *Store) step(what string) {
	if s.OnStep != nil {
		s.OnStep(what)
	}
}

// Lock takes the writer lock (flock on LOCK, which cannot be interrupted, so
// the wait polls) and writes the holder's pid and start time into the file
// for LockHolder; unlock clears them.
func (s *Store) Lock(ctx context.Context) (func(), error) {
	for {
		unlock, err := s.lock()
		if err == nil {
			return unlock, nil
		}
		if !errors.Is(err, syscall.EWOULDBLOCK) {
			return nil, err
		}
		select {
		case <-ctx.Done():
			return nil, fmt.Errorf("lock store: %w", context.Cause(ctx))
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// TryLock takes the writer lock if it is free.
func (s *Store) TryLock() (func(), bool) {
	unlock, err := s.lock()
	return unlock, err == nil
}

// LockHolder says who holds the writer lock ("pid 123 since …"); "" when unknown.
func (s *Store) LockHolder() string {
	b, err := os.ReadFile(filepath.Join(s.dir, lockFile))
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(b))
}

func (s *Store) lock() (func(), error) {
	made, err := s.makeLayout()
	if err != nil {
		return nil, fmt.Errorf("lock store: %w", err)
	}
	name := filepath.Join(s.dir, lockFile)
	f, err := os.OpenFile(name, os.O_CREATE|os.O_RDWR, 0o644)
	if errors.Is(err, fs.ErrNotExist) {
		// A writer that had created the store removed it (unlock below): retry.
		return nil, fmt.Errorf("lock store: %w", syscall.EWOULDBLOCK)
	}
	if err != nil {
		return nil, fmt.Errorf("lock store: %w", err)
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		f.Close()
		return nil, fmt.Errorf("lock store: %w", err)
	}
	// The lock file may have been removed while we waited for it, by a writer
	// removing the store it created: a lock on it locks nothing, so retry.
	if fi, err := f.Stat(); err != nil || !sameFile(fi, name) {
		_ = syscall.Flock(int(f.Fd()), syscall.LOCK_UN)
		f.Close()
		return nil, fmt.Errorf("lock store: %w", syscall.EWOULDBLOCK)
	}
	_ = f.Truncate(0)
	_, _ = f.WriteAt([]byte(fmt.Sprintf("pid %d since %s\n", os.Getpid(), time.Now().UTC().Format(time.RFC3339))), 0)
	return func() {
		if len(made) > 0 && !s.holdsAnything() {
			// Removed while still locked, the lock file first, so a writer
			// waiting on it retries (above) rather than locking a removed file.
			_ = os.Remove(name)
			for _, d := range []string{versionsDir, diffsDir} {
				_ = os.Remove(filepath.Join(s.dir, d))
			}
			for _, d := range []string{filesDir, segmentsDir} {
				_ = os.RemoveAll(filepath.Join(s.dir, d)) // no version names them
			}
			for i := len(made) - 1; i >= 0; i-- {
				_ = os.Remove(made[i]) // only empty directories go
			}
		}
		_ = f.Truncate(0)
		_ = syscall.Flock(int(f.Fd()), syscall.LOCK_UN)
		f.Close()
	}, nil
}

// makeLayout creates the store's directory (and its missing parents) and
// tmp/ when they do not exist, and returns what it created, outermost first.
func (s *Store) makeLayout() ([]string, error) {
	var made []string
	for d := filepath.Clean(s.dir); ; d = filepath.Dir(d) {
		if _, err := os.Stat(d); err == nil {
			break
		} else if !errors.Is(err, fs.ErrNotExist) {
			return nil, err
		}
		made = append([]string{d}, made...)
		if filepath.Dir(d) == d {
			break
		}
	}
	tmp := filepath.Join(s.dir, tmpDir)
	if _, err := os.Stat(tmp); errors.Is(err, fs.ErrNotExist) {
		made = append(made, tmp)
	}
	if len(made) == 0 {
		return nil, nil
	}
	return made, os.MkdirAll(tmp, 0o755)
}

// holdsAnything reports whether a writer stored something: a version, a
// diff, the active pointer or sync state.
func (s *Store) holdsAnything() bool {
	for _, f := range []string{activeFile, syncStateFile} {
		if _, err := os.Lstat(filepath.Join(s.dir, f)); !errors.Is(err, fs.ErrNotExist) {
			return true
		}
	}
	for _, d := range []string{versionsDir, diffsDir, tmpDir} {
		entries, err := os.ReadDir(filepath.Join(s.dir, d))
		if len(entries) > 0 || err != nil && !errors.Is(err, fs.ErrNotExist) {
			return true
		}
	}
	return false
}

func sameFile(fi fs.FileInfo, name string) bool {
	cur, err := os.Stat(name)
	return err == nil && os.SameFile(fi, cur)
}

// Lookup finds a stored version by manifest ID in any letter case, by listing
// versions/: the returned ID is the directory's own name, never the input.
func (s *Store) Lookup(id string) (string, error) {
	names, err := s.versionNames()
	if err != nil {
		return "", err
	}
	for _, n := range names {
		if strings.EqualFold(n, id) {
			return n, nil
		}
	}
	return "", fmt.Errorf("version %s: %w", id, ErrNotFound)
}

func (s *Store) versionNames() ([]string, error) {
	s.trace(versionsDir)
	entries, err := os.ReadDir(filepath.Join(s.dir, versionsDir))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil // nothing published yet
	}
	if err != nil {
		return nil, fmt.Errorf("list versions: %w", err)
	}
	var names []string
	for _, e := range entries {
		if e.IsDir() && catalog.IsManifestID(e.Name()) {
			names = append(names, e.Name())
		}
	}
	return names, nil
}

// Versions lists the stored versions whose manifest parses, oldest first (by
// import sequence). It does not verify file checksums; Verify does.
func (s *Store) Versions() ([]Manifest, error) {
	names, err := s.versionNames()
	if err != nil {
		return nil, err
	}
	var out []Manifest
	for _, n := range names {
		m, _, err := s.manifest(n)
		if err != nil {
			continue
		}
		out = append(out, m)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Seq < out[j].Seq })
	return out, nil
}

// manifest reads a listed version's manifest and its checksum.
func (s *Store) manifest(id string) (Manifest, string, error) {
	name := path.Join(versionsDir, id, manifestFile)
	b, err := s.read(name)
	if err != nil {
		return Manifest{}, "", fmt.Errorf("read %s: %w", name, err)
	}
	var m Manifest
	if err := json.Unmarshal(b, &m); err != nil {
		return Manifest{}, "", fmt.Errorf("%s: %w: %w", name, ErrCorrupt, err)
	}
	if m.ManifestID != id {
		return Manifest{}, "", fmt.Errorf("%s names version %q: %w", name, m.ManifestID, ErrCorrupt)
	}
	return m, Sum(b), nil
}

// checkedManifest finds a stored version and reads its manifest, checked
// against manifestSHA when not "".
func (s *Store) checkedManifest(id, manifestSHA string) (string, Manifest, error) {
	id, err := s.Lookup(id)
	if err != nil {
		return "", Manifest{}, err
	}
	m, got, err := s.manifest(id)
	if err == nil {
		err = CheckManifest(id, got, manifestSHA)
	}
	return id, m, err
}

// CheckManifest is the error for version id whose manifest checksum is got
// when the pointer says want; nil when they agree or want is "".
func CheckManifest(id, got, want string) error {
	if want == "" || got == want {
		return nil
	}
	return fmt.Errorf("version %s: manifest checksum %s, pointer says %s: %w", id, got[:12], want[:min(12, len(want))], ErrCorrupt)
}

// CheckFiles checks a version's files against its manifest: each listed, of
// the listed checksum, and no other.
func CheckFiles(id string, m Manifest, files map[string][]byte) error {
	for name, want := range m.Files {
		b, ok := files[name]
		if !ok {
			return fmt.Errorf("version %s: %s is missing: %w", id, name, ErrCorrupt)
		}
		if got := Sum(b); got != want {
			return fmt.Errorf("version %s: %s has sha256 %s, manifest says %s: %w", id, name, got[:12], want[:min(12, len(want))], ErrCorrupt)
		}
	}
	if len(files) != len(m.Files) {
		return fmt.Errorf("version %s: %d files stored, manifest lists %d: %w", id, len(files), len(m.Files), ErrCorrupt)
	}
	return nil
}

// CheckIndex checks a version's edition index (or, for a version stored
// before, its pack; nil when none is stored) against its manifest.
func CheckIndex(id string, m Manifest, b []byte) error {
	want := cmp.Or(m.Index, m.Edition)
	if want == "" || b == nil {
		return fmt.Errorf("version %s was stored without its edition (by an older refdata); import it again with --force: %w", id, ErrCorrupt)
	}
	if PackSum(b) != want {
		return fmt.Errorf("version %s: edition fails its checksum: %w", id, ErrCorrupt)
	}
	return nil
}

// ReadVersion reads every file of a stored version, checked against the manifest.
func (s *Store) ReadVersion(id string) (Manifest, map[string][]byte, error) {
	return s.Verify(id, "")
}

// Verify is ReadVersion with the manifest checked against the pointer's
// checksum, when given.
func (s *Store) Verify(id, manifestSHA string) (Manifest, map[string][]byte, error) {
	id, m, err := s.checkedManifest(id, manifestSHA)
	if err != nil {
		return Manifest{}, nil, err
	}
	files := make(map[string][]byte, len(m.Files))
	for name, sum := range m.Files {
		if !fs.ValidPath(name) || Reserved(name) {
			return m, nil, fmt.Errorf("version %s: manifest lists %q: %w", id, name, ErrCorrupt)
		}
		if files[name], err = s.readFile(id, name, sum, !m.Contents); err != nil {
			return m, nil, fmt.Errorf("version %s: %s: %w: %w", id, name, ErrCorrupt, err)
		}
	}
	if err := CheckFiles(id, m, files); err != nil {
		return m, nil, err
	}
	return m, files, nil
}

// Active reads the active pointer; its revision is the file's bytes.
func (s *Store) Active() (Pointer, []byte, error) {
	b, err := s.read(activeFile)
	if errors.Is(err, fs.ErrNotExist) {
		return Pointer{}, nil, fmt.Errorf("active pointer: %w", ErrNotFound)
	}
	if err != nil {
		return Pointer{}, nil, fmt.Errorf("read active pointer: %w", err)
	}
	var p Pointer
	if err := json.Unmarshal(b, &p); err != nil || !catalog.IsManifestID(p.ManifestID) {
		return Pointer{}, b, fmt.Errorf("active pointer: %w", ErrCorrupt)
	}
	return p, b, nil
}

// readFile reads one snapshot file of version id: stored once by content,
// or, for a version stored before, in the version's directory.
func (s *Store) readFile(id, name, sum string, legacy bool) ([]byte, error) {
	if legacy {
		return s.read(path.Join(versionsDir, id, name))
	}
	if !blob.ValidSum(sum) {
		return nil, fmt.Errorf("manifest names %q", sum)
	}
	z, err := s.read(path.Join(filesDir, sum+".gz"))
	if err != nil {
		return nil, err
	}
	return DecompressFile(z)
}

// ReadIndex reads a version's manifest, checked against manifestSHA when
// not "", and its edition index, checked against the manifest. For a
// version stored before bodies were stored by content (Manifest.Index is
// ""), it is the edition pack (package edition reads both).
func (s *Store) ReadIndex(id, manifestSHA string) (Manifest, []byte, error) {
	id, m, err := s.checkedManifest(id, manifestSHA)
	if err != nil {
		return m, nil, err
	}
	var b []byte
	name := indexFile
	if m.Index == "" {
		name = packFile
	}
	if m.Index != "" || m.Edition != "" {
		if b, err = s.read(path.Join(versionsDir, id, name)); err == nil && m.Index != "" {
			b, err = DecompressFile(b)
		}
		if err != nil {
			return m, nil, fmt.Errorf("version %s: edition: %w: %w", id, ErrCorrupt, err)
		}
	}
	if err := CheckIndex(id, m, b); err != nil {
		return m, nil, err
	}
	return m, b, nil
}

// Segment opens a segment of bodies, read through c.
func (s *Store) Segment(sum string, size int64, c *blob.Cache) (*blob.Segment, error) {
	if !blob.ValidSum(sum) {
		return nil, fmt.Errorf("segment %q: %w", sum, ErrCorrupt)
	}
	name := path.Join(segmentsDir, sum+".seg")
	s.trace(name)
	seg, err := blob.Open(filepath.Join(s.dir, filepath.FromSlash(name)), sum, size, c)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrCorrupt, err)
	}
	return seg, nil
}

// Staging is where an import writes its new segment: beside the segments,
// so publishing it is a rename.
func (s *Store) Staging() string { return filepath.Join(s.dir, tmpDir) }

// ReadDiff reads the stored diff between two stored versions, checksum verified.
func (s *Store) ReadDiff(from, to string) ([]byte, error) {
	f, t, err := LookupBoth(s, from, to)
	if err != nil {
		return nil, err
	}
	name := path.Join(diffsDir, f+"-"+t+".json")
	b, err := s.read(name)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("diff %s → %s: %w", f, t, ErrNotFound)
	}
	if err != nil {
		return nil, fmt.Errorf("read diff %s → %s: %w: %w", f, t, ErrCorrupt, err)
	}
	return decodeDiffFile(b)
}

func encodeDiffFile(body []byte) []byte {
	return slices.Concat([]byte("sha256:"+Sum(body)+"\n"), body)
}

func decodeDiffFile(b []byte) ([]byte, error) {
	head, body, ok := bytes.Cut(b, []byte("\n"))
	if !ok || !bytes.HasPrefix(head, []byte("sha256:")) {
		return nil, fmt.Errorf("diff file has no checksum line: %w", ErrCorrupt)
	}
	if got := Sum(body); got != string(head[len("sha256:"):]) {
		return nil, fmt.Errorf("diff file fails its checksum: %w", ErrCorrupt)
	}
	if !json.Valid(body) {
		return nil, fmt.Errorf("diff file is not JSON: %w", ErrCorrupt)
	}
	return body, nil
}

// PackSum is an edition pack's checksum as a manifest holds it: CRC-64, six
// times faster than SHA-256 on packs of hundreds of megabytes read at every
// swap, and enough to find damage.
func PackSum(b []byte) string {
	return fmt.Sprintf("crc64:%016x", crc64.Checksum(b, crcTable))
}

var crcTable = crc64.MakeTable(crc64.ECMA)

// Sum is the sha256 hex of b, as manifests and pointers hold checksums.
func Sum(b []byte) string {
	h := sha256.Sum256(b)
	return hex.EncodeToString(h[:])
}

// WatchInterval is how often Changes looks at the active pointer file.
const WatchInterval = 50 * time.Millisecond

// Changes fires when the active pointer file may have been replaced: it
// stats the file every WatchInterval (a stat loop rather than inotify works on
// network file systems too) and compares identity, size and modification time.
func (s *Store) Changes(ctx context.Context) <-chan struct{} {
	name := filepath.Join(s.dir, activeFile)
	return Signals(func(fire func()) {
		last, _ := os.Stat(name)
		fire()
		t := time.NewTicker(WatchInterval)
		defer t.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-t.C:
			}
			fi, _ := os.Stat(name) // nil when absent: changed compares presence
			if changed(last, fi) {
				fire()
			}
			last = fi
		}
	})
}

// changed: a pointer file appeared, went, or was replaced or rewritten.
func changed(a, b fs.FileInfo) bool {
	if a == nil || b == nil {
		return (a == nil) != (b == nil)
	}
	return !os.SameFile(a, b) || a.Size() != b.Size() || !a.ModTime().Equal(b.ModTime())
}
