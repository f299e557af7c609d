package impl

import (
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/refdata/refdata/catalog"
	"github.com/refdata/refdata/gen"
	"github.com/refdata/refdata/representation"
)

// ErrNotFound is returned by a Repository when a version or diff does not exist.
var ErrNotFound = errors.New("not found")

// NotFound returns an error that wraps ErrNotFound and reads as msg alone, so the
// message a client sees is the explanation.
func NotFound(msg string) error { return notFound(msg) }

type notFound string

func (e notFound) Error() string        { return string(e) }
func (e notFound) Is(target error) bool { return target == ErrNotFound }

// Repository is the data the handlers serve.
type Repository interface {
	// Active returns the edition being served; never nil. Handlers call it once per
	// request, so a request never mixes two versions.
	Active() *catalog.Edition
	// LatestDiff returns the diff between the previous version and the active one.
	// Returns an error wrapping ErrNotFound when there is none; any other error means
	// the stored diff is unreadable.
	LatestDiff() (*representation.Body, error)
	// Diff returns the diff between two retained versions, by manifest ID. Returns an
	// error wrapping ErrNotFound when either version is not retained.
	Diff(from, to string) (*representation.Body, error)
	// Versions lists the retained versions, newest first, with the body of
	// /v1/versions, made when the active version was loaded. nil when the
	// repository keeps no list (a test's Static literal).
	Versions() *VersionList
	// RetainedEdition returns the edition of a retained version by manifest ID (any
	// letter case). Returns an error wrapping ErrNotFound when it is not retained.
	// An edition that is not the active one may be loaded for the call: callers
	// keep what they make of it rather than call again.
	RetainedEdition(id string) (*catalog.Edition, error)
}

// Swapping is a Repository whose active edition changes while it serves (one
// backed by a store): OnSwap has f called after each change, for what keeps
// answers of the edition served until then to let go of them.
type Swapping interface {
	OnSwap(f func())
}

// VersionList is /v1/versions: the retained versions, newest first, and its body.
type VersionList struct {
	Versions []gen.RetainedVersion
	Body     *representation.Body
}

// NewVersionList renders the list once.
func NewVersionList(vs []gen.RetainedVersion) (*VersionList, error) {
	b, err := catalog.VersionsBody(vs)
	if err != nil {
		return nil, err
	}
	return &VersionList{Versions: vs, Body: b}, nil
}

// RetainedVersion describes one retained version from its edition; publishedAt
// is nil for a version never published into a store.
func RetainedVersion(ed *catalog.Edition, publishedAt *time.Time, active bool) gen.RetainedVersion {
	v := gen.RetainedVersion{
		ManifestId:  ed.ManifestID,
		Version:     ed.Version.Version,
		Branch:      ed.Version.Branch,
		ContentHash: ed.ContentHash,
		Active:      active,
	}
	if publishedAt != nil {
		s := publishedAt.UTC().Format(time.RFC3339)
		v.PublishedAt = &s
	}
	return v
}

// Static serves one edition that never changes, without diffs: the embedded sample
// data, or a test's. Older editions may be retained beside it (the embedded
// sample data holds the version before the served one), for the pages.
type Static struct {
	Edition *catalog.Edition
	// Older are the retained versions before Edition, newest first.
	Older []*catalog.Edition
	// List is /v1/versions; NewStatic makes it.
	List *VersionList
	// Latest is the diff Older[0] → Edition (/v1/diff/latest), or nil; ComputeLatest
	// makes it.
	Latest *representation.Body
}

// ComputeLatest diffs the newest retained version before Edition against it, so
// /v1/diff/latest, /v1/diff/{from}/{to} and /changes answer from one rendered
// body (the embedded sample data's 14 → 15).
func (s *Static) ComputeLatest(generatedAt time.Time) error {
	if len(s.Older) == 0 {
		return nil
	}
	d, err := catalog.Diff(s.Older[0], s.Edition, generatedAt)
	if err != nil {
		return fmt.Errorf("diff %s → %s: %w", s.Older[0].ManifestID, s.Edition.ManifestID, err)
	}
	b, err := catalog.DiffBody(d)
	if err != nil {
		return err
	}
	b.Compress()
	s.Latest = b
	return nil
}

// NewStatic serves ed and retains older (newest first).
func NewStatic(ed *catalog.Edition, older ...*catalog.Edition) (Static, error) {
	vs := []gen.RetainedVersion{RetainedVersion(ed, nil, true)}
	for _, o := range older {
		vs = append(vs, RetainedVersion(o, nil, false))
	}
	l, err := NewVersionList(vs)
	if err != nil {
		return Static{}, err
	}
	return Static{Edition: ed, Older: older, List: l}, nil
}

// Versions returns the list NewStatic made.
func (s Static) Versions() *VersionList { return s.List }

// RetainedEdition finds a retained edition by manifest ID.
func (s Static) RetainedEdition(id string) (*catalog.Edition, error) {
	if strings.EqualFold(id, s.Edition.ManifestID) {
		return s.Edition, nil
	}
	for _, o := range s.Older {
		if strings.EqualFold(id, o.ManifestID) {
			return o, nil
		}
	}
	return nil, NotFound("version " + id + " is not retained; /v1/versions lists the ones that are")
}

// Active returns the edition.
func (s Static) Active() *catalog.Edition { return s.Edition }

// LatestDiff returns Latest, or reports that there is no diff.
func (s Static) LatestDiff() (*representation.Body, error) {
	if s.Latest != nil {
		return s.Latest, nil
	}
	return nil, NotFound("the active version was not imported after another one, so it has no diff")
}

// Diff knows the retained versions but holds no diffs between them.
func (s Static) Diff(from, to string) (*representation.Body, error) {
	for _, v := range []string{from, to} {
		if _, err := s.RetainedEdition(v); err != nil {
			return nil, err
		}
	}
	if len(s.Older) == 0 {
		return nil, NotFound("the embedded sample data has one version, so there is no diff")
	}
	if s.Latest != nil && strings.EqualFold(from, s.Older[0].ManifestID) && strings.EqualFold(to, s.Edition.ManifestID) {
		return s.Latest, nil
	}
	return nil, NotFound("the embedded sample data holds no diffs between its versions; /changes/" + from + "/" + to + " shows what changed")
}
