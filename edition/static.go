package edition

import (
	"cmp"
	"errors"
	"strings"
	"sync/atomic"
	"time"

	"github.com/refdata/refdata/catalog"
	"github.com/refdata/refdata/gen"
	"github.com/refdata/refdata/representation"
)

// Static is a Repository of versions that never change: the embedded sample,
// a test's. It serves the newest and retains the others, with the diffs
// between every two in both orders. Set replaces the versions at once.
type Static struct {
	state atomic.Pointer[staticState]
}

// StaticVersion is one version of a Static.
type StaticVersion struct {
	Edition *Edition
	// Published is the generatedAt of diffs to it; zero when unknown.
	Published time.Time
	// Files returns the snapshot files for /v1/export; nil when none.
	Files func() (map[string][]byte, error)
}

type staticState struct {
	versions []StaticVersion // newest first
	list     *VersionList
	diffs    map[[2]string]*representation.Body
	complete bool
}

var (
	_ Repository = (*Static)(nil)
	_ Readiness  = (*Static)(nil)
	_ Exporter   = (*Static)(nil)
)

// NewStatic serves vs[0] and retains the rest (newest first).
func NewStatic(vs ...StaticVersion) (*Static, error) {
	s := &Static{}
	return s, s.Set(true, vs...)
}

// Serve makes a Static of one edition: a test's.
func Serve(ed *Edition) *Static {
	s, err := NewStatic(StaticVersion{Edition: ed})
	if err != nil {
		panic(err) // one version: no diff, nothing to fail
	}
	return s
}

// Set replaces the versions (newest first; at least one) and their diffs.
// Until complete (all the versions there will be) it is not ready.
func (s *Static) Set(complete bool, vs ...StaticVersion) error {
	if len(vs) == 0 {
		return errors.New("edition: a Static serves at least one version")
	}
	st := &staticState{versions: vs, diffs: map[[2]string]*representation.Body{}, complete: complete}
	var list []gen.RetainedVersion
	for i, v := range vs {
		var at *time.Time
		if !v.Published.IsZero() {
			at = &v.Published
		}
		list = append(list, RetainedVersion(v.Edition, at, i == 0))
		for j, w := range vs[:i] {
			// Diffs either way are stamped with the newer one's publication.
			for _, pair := range [][2]*Edition{{v.Edition, w.Edition}, {w.Edition, v.Edition}} {
				b, err := DiffBody(pair[0], pair[1], vs[j].Published)
				if err != nil {
					return err
				}
				st.diffs[[2]string{pair[0].ManifestID, pair[1].ManifestID}] = b
			}
		}
	}
	var err error
	if st.list, err = NewVersionList(list); err != nil {
		return err
	}
	s.state.Store(st)
	return nil
}

// Active returns the newest version's edition.
func (s *Static) Active() *Edition { return s.state.Load().versions[0].Edition }

// Versions lists the versions, newest first.
func (s *Static) Versions() *VersionList { return s.state.Load().list }

// Ready: every version is there.
func (s *Static) Ready() (gen.ProbeStatus, bool, string) {
	st := s.state.Load()
	status := gen.ProbeStatus{Serving: st.versions[0].Edition.ManifestID}
	if !st.complete {
		return status, false, "loading the versions before " + status.Serving
	}
	return status, true, ""
}

func (st *staticState) find(id string) (StaticVersion, error) {
	for _, v := range st.versions {
		if strings.EqualFold(id, v.Edition.ManifestID) {
			return v, nil
		}
	}
	return StaticVersion{}, catalog.Errorf(catalog.ENOTFOUND, "version %s is not retained; /v1/versions lists the ones that are", id)
}

// RetainedEdition finds a version's edition by manifest ID.
func (s *Static) RetainedEdition(id string) (*Edition, error) {
	v, err := s.state.Load().find(id)
	return v.Edition, err
}

// LatestDiff is the diff from the second newest version to the newest.
func (s *Static) LatestDiff() (*representation.Body, error) {
	st := s.state.Load()
	if len(st.versions) < 2 {
		return nil, catalog.Errorf(catalog.ENOTFOUND, "the active version %s has no version before it, so no diff", st.versions[0].Edition.ManifestID)
	}
	return st.diffs[[2]string{st.versions[1].Edition.ManifestID, st.versions[0].Edition.ManifestID}], nil
}

// Diff is the diff between two of the versions, in either order.
func (s *Static) Diff(from, to string) (*representation.Body, error) {
	st := s.state.Load()
	f, err := st.find(from)
	if err != nil {
		return nil, err
	}
	t, err := st.find(to)
	if err != nil {
		return nil, err
	}
	b := st.diffs[[2]string{f.Edition.ManifestID, t.Edition.ManifestID}]
	if b == nil {
		return nil, catalog.Errorf(catalog.ENOTFOUND, "%s and %s are the same version; a diff names two", from, to)
	}
	return b, nil
}

// Snapshot returns a version's files ("" for the active one).
func (s *Static) Snapshot(id string) (*Snapshot, error) {
	st := s.state.Load()
	id = cmp.Or(id, st.versions[0].Edition.ManifestID)
	v, err := st.find(id)
	if err != nil {
		return nil, err
	}
	if v.Files == nil {
		return nil, catalog.Errorf(catalog.ENOTFOUND, "version %s has no files to export", v.Edition.ManifestID)
	}
	files, err := v.Files()
	if err != nil {
		return nil, err
	}
	return &Snapshot{ManifestID: v.Edition.ManifestID, ContentHash: v.Edition.ContentHash, Files: files}, nil
}
