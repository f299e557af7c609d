package store

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/refdata/refdata/blob"
)

// Backend is where versions live: the file store (Store) or postgres.Store,
// both held to one contract by store/storetest. Identifiers a client sent are
// only compared with the backend's listing (Lookup), never used as a file name
// or as query text.
type Backend interface {
	// Lock takes the writer lock, waiting until it is free or ctx ends (then
	// an error wrapping ctx's cause). Writers never interleave, even across machines.
	Lock(ctx context.Context) (unlock func(), err error)
	// TryLock takes the writer lock if it is free.
	TryLock() (unlock func(), ok bool)
	// LockHolder names who holds the writer lock; "" when unknown or free.
	LockHolder() string

	// Lookup finds a version by manifest ID in any letter case and returns the
	// ID as stored, or an error wrapping ErrNotFound.
	Lookup(id string) (string, error)
	// Versions lists the stored versions, oldest first (by publish sequence).
	Versions() ([]Manifest, error)
	// ReadVersion is Verify without a manifest checksum.
	ReadVersion(id string) (Manifest, map[string][]byte, error)
	// Verify returns a version's manifest, checked against manifestSHA when
	// not "", and its files, each checked against the manifest: ErrNotFound
	// for an unknown version, ErrCorrupt for a failed checksum.
	Verify(id, manifestSHA string) (Manifest, map[string][]byte, error)
	// Active returns the active pointer and its revision, opaque bytes that
	// change whenever the pointer does; ErrNotFound when nothing was published.
	Active() (Pointer, []byte, error)
	// ReadDiff returns the stored diff between two versions, checksum
	// verified: ErrNotFound when never stored, ErrCorrupt when damaged.
	ReadDiff(from, to string) ([]byte, error)
	// ReadIndex is Verify for the edition index (Publication.Index) rather
	// than the files; ErrCorrupt too when the version has none. For a version
	// stored before bodies were stored by content (Manifest.Index ""), it is
	// the version's edition pack.
	ReadIndex(id, manifestSHA string) (Manifest, []byte, error)
	// Segment opens a segment an index names, by its sha256 and size, read
	// through c: a damaged or missing one is an error wrapping ErrCorrupt.
	Segment(sum string, size int64, c *blob.Cache) (*blob.Segment, error)
	// Staging is the directory an import writes its new segment in
	// (Publication.Segment); "" for memory.
	Staging() string

	// Publish stores a version and the diff from the previous one, moves the
	// active pointer and prunes to p.Retain, all or nothing; the caller holds
	// Lock. It returns the manifest IDs pruned.
	Publish(p Publication) (pruned []string, err error)
	// PutFiles stores snapshot files by content ahead of a publish (the
	// caller holds Lock), so an import need not hold them; it returns their
	// sha256 by path, for Publication.Stored. What no version names by the
	// next publish's sweep is removed.
	PutFiles(files map[string][]byte) (map[string]string, error)
	// Sweep deletes what no stored version names (PutFiles' files of an
	// import that did not publish); the caller holds Lock. A manifest that
	// cannot be read makes it delete nothing.
	Sweep() error
	// WriteDiff stores a diff computed on demand between two stored versions.
	WriteDiff(from, to string, body []byte) error
	// Discard removes a version that is not active, with the diffs naming it;
	// the caller holds Lock.
	Discard(id string) error
	// Activate makes a retained version the active one (Pointer.Activated);
	// the caller holds Lock. The version active until now becomes Previous,
	// and diffBody, when not nil, is stored as the diff between them.
	Activate(id string, diffBody []byte, now time.Time) (Pointer, error)
	// SyncState returns what sync last recorded (nil when nothing);
	// WriteSyncState replaces it.
	SyncState() ([]byte, error)
	WriteSyncState(b []byte) error

	// Location names the store for logs: a directory, or a database and
	// schema (never a password).
	Location() string
}

// Cleaner is a Backend with staging leftovers a crashed writer may have left;
// a writer holding Lock calls CleanTmp first.
type Cleaner interface {
	CleanTmp() error
}

var (
	_ Backend  = (*Store)(nil)
	_ Notifier = (*Store)(nil)
	_ Lazy     = (*Store)(nil)
)

// Lazy is a Backend whose store need not exist yet (a directory, or a schema
// without refdata's tables): it reads as an empty store, its first write
// creates it, and a writer that stores nothing leaves nothing behind.
// Exists reports whether it exists now.
type Lazy interface {
	Exists() (bool, error)
}

// Notifier is a Backend that signals when the active pointer may have moved,
// so a replica need not wait for its next poll. The first signal comes once
// it is listening; a signal may come without a change. The channel is closed
// when ctx ends.
type Notifier interface {
	Changes(ctx context.Context) <-chan struct{}
}

// Coordinator is a Backend shared by replicas that swap together: each reports
// what it serves and has staged, and the publisher schedules the switch
// (Pointer.ActivateAt) for when every live replica has staged, or a bound passed.
type Coordinator interface {
	Heartbeat(replica, serving, staged string) error
}

// Signals runs loop in a goroutine with fire, which signals the channel it
// returns without blocking (at most one signal waits), and closes the channel
// when loop returns: a Notifier's Changes.
func Signals(loop func(fire func())) <-chan struct{} {
	out := make(chan struct{}, 1)
	go func() {
		defer close(out)
		loop(func() {
			select {
			case out <- struct{}{}:
			default:
			}
		})
	}()
	return out
}

// LookupBoth is Lookup of the two versions of a diff.
func LookupBoth(b Backend, from, to string) (string, string, error) {
	f, err := b.Lookup(from)
	if err != nil {
		return "", "", err
	}
	t, err := b.Lookup(to)
	return f, t, err
}

// ResolveIn picks the version to serve at start-up from any backend: the one
// the pointer names when it is intact, else the newest intact version. why
// explains a fallback ("" when none was needed). It returns an error wrapping
// ErrNotFound when no version is intact.
func ResolveIn(b Backend) (Pointer, string, error) {
	p, _, _, why, err := ResolveWith(b, b.Verify)
	return p, why, err
}

// ReadPointed reads the version p names with read, its manifest checked
// against the one p names, or, while a publish replaces it, the one replaced.
// The pointer returned names the manifest read.
func ReadPointed[T any](p Pointer, read func(id, manifestSHA string) (Manifest, T, error)) (Pointer, Manifest, T, error) {
	m, v, err := read(p.ManifestID, p.ManifestSHA256)
	if err != nil && p.ReplacedSHA256 != "" {
		if rm, rv, rerr := read(p.ManifestID, p.ReplacedSHA256); rerr == nil {
			p.ManifestSHA256 = p.ReplacedSHA256
			m, v, err = rm, rv, nil
		}
	}
	p.ReplacedSHA256 = ""
	return p, m, v, err
}

// ResolveWith is ResolveIn with read as the check of a version (its manifest
// checked against manifestSHA when not ""), returning what read made of the
// version picked.
func ResolveWith[T any](b Backend, read func(id, manifestSHA string) (Manifest, T, error)) (Pointer, Manifest, T, string, error) {
	var none T
	p, _, perr := b.Active()
	if perr == nil {
		ep, m, v, err := ReadPointed(p, read)
		if err == nil {
			return ep, m, v, "", nil
		}
		perr = err
	}
	vs, err := b.Versions()
	if err != nil {
		return Pointer{}, Manifest{}, none, "", err
	}
	why, errs := perr.Error(), []any{perr} // why each candidate was passed over
	for i := len(vs) - 1; i >= 0; i-- {
		if vs[i].ManifestID == p.ManifestID {
			continue // just failed
		}
		m, v, err := read(vs[i].ManifestID, "")
		if err != nil {
			why += "; " + err.Error()
			errs = append(errs, err)
			continue
		}
		return Pointer{ManifestID: vs[i].ManifestID, PublishedAt: vs[i].PublishedAt}, m, v, why, nil
	}
	// Each reason is wrapped, so a caller can tell damage (ErrCorrupt) apart.
	list := strings.TrimSuffix(strings.Repeat("%w; ", len(errs)), "; ")
	return Pointer{}, Manifest{}, none, "", fmt.Errorf("no intact version ("+list+"): %w", append(errs, ErrNotFound)...)
}
