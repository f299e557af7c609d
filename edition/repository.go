package edition

import (
	"time"

	"github.com/refdata/refdata/catalog"
	"github.com/refdata/refdata/gen"
	"github.com/refdata/refdata/representation"
)

// Repository is the data the handlers serve. Its errors carry catalog's
// codes: ENOTFOUND for a version or diff it does not have; others are internal.
type Repository interface {
	// Active returns the edition being served; never nil. Handlers call it
	// once per request.
	Active() *Edition
	// LatestDiff returns the diff between the previous version and the
	// active one: ENOTFOUND when there is none.
	LatestDiff() (*representation.Body, error)
	// Diff returns the diff between two retained versions, by manifest ID in
	// any letter case: ENOTFOUND when either is not retained.
	Diff(from, to string) (*representation.Body, error)
	// Versions lists the retained versions, newest first.
	Versions() *VersionList
	// RetainedEdition returns a retained version's edition by manifest ID
	// (any letter case): ENOTFOUND when it is not retained. One not active
	// may be read for the call: callers keep what they make of it.
	RetainedEdition(id string) (*Edition, error)
}

// Readiness is a Repository that can be not ready (one backed by a store); one
// without it is ready whenever it answers.
type Readiness interface {
	// Ready says whether this replica should get traffic, and what it
	// serves; when not, why says so for the operator.
	Ready() (status gen.ProbeStatus, ready bool, why string)
}

// Swapping is a Repository whose active edition changes while it serves:
// OnSwap has f called after each change (the edge's memo lets go of answers).
type Swapping interface {
	OnSwap(f func())
}

// Exporter is a Repository that can hand out a retained version's files.
type Exporter interface {
	// Snapshot returns the files of a retained version by manifest ID (any
	// letter case; "" for the active one): ENOTFOUND when it is not retained.
	Snapshot(id string) (*Snapshot, error)
}

// Snapshot is a retained version's files, for /v1/export.
type Snapshot struct {
	ManifestID  string
	ContentHash string // catalog.ContentHash of Files
	Files       map[string][]byte
}

// VersionList is /v1/versions: the retained versions, newest first, and its body.
type VersionList struct {
	Versions []gen.RetainedVersion
	Body     *representation.Body
}

// NewVersionList renders the list once.
func NewVersionList(vs []gen.RetainedVersion) (*VersionList, error) {
	if vs == nil {
		vs = []gen.RetainedVersion{}
	}
	b, err := catalog.Encode(gen.RetainedVersionListBody{Status: 200, Data: vs})
	if err != nil {
		return nil, err
	}
	return &VersionList{Versions: vs, Body: representation.Encode(b, "", representation.Best)}, nil
}

// RetainedVersion describes one retained version; publishedAt is nil for one
// never published into a store.
func RetainedVersion(ed *Edition, publishedAt *time.Time, active bool) gen.RetainedVersion {
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
	if fs := ed.BulkFiles(); fs != nil {
		bulk := make(map[string]gen.BulkFile, len(fs))
		for _, f := range fs {
			bulk[f.Language] = gen.BulkFile{Sha256: f.SHA256, Size: f.Size}
		}
		v.Bulk = &bulk
	}
	return v
}

// DiffBody diffs two editions and renders the body of /v1/diff/….
func DiffBody(from, to catalog.Items, generatedAt time.Time) (*representation.Body, error) {
	d, err := catalog.Diff(from, to, generatedAt)
	if err != nil {
		return nil, err
	}
	b, err := catalog.DiffBody(d)
	if err != nil {
		return nil, err
	}
	return representation.Encode(b, "", representation.Best), nil
}
