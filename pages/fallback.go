package pages

import (
	"encoding/json"
	"errors"
	"fmt"
	"time"
	"weak"

	"github.com/refdata/refdata/catalog"
	"github.com/refdata/refdata/gen"
	"github.com/refdata/refdata/impl"
)

// This file is the one place that copes with a repository holding retained
// versions but no diff between a pair (an impl.Static without Latest, or a pair
// other than its latest): the latest pair is then the active version and the one
// retained before it, and a diff is computed from the two editions. A repository
// that has its diffs (live, and the embedded sample data, whose Static holds its
// 14→15 diff) never reaches the fallbacks for them.

// latestPair names the versions /changes compares: those of /v1/diff/latest.
func (s *Site) latestPair() (from, to string, err error) {
	ed := s.repo.Active()
	if p := s.latest.Load(); p != nil && p.ed == weak.Make(ed) {
		return p.from, p.to, nil
	}
	b, err := s.repo.LatestDiff()
	switch {
	case err == nil:
		var d struct {
			Data struct {
				FromVersion string `json:"fromVersion"`
				ToVersion   string `json:"toVersion"`
			} `json:"data"`
		}
		if err := json.Unmarshal(b.JSON, &d); err != nil {
			return "", "", fmt.Errorf("read the latest diff: %w", err)
		}
		from, to = d.Data.FromVersion, d.Data.ToVersion
	case errors.Is(err, impl.ErrNotFound):
		from, to = olderThan(s.repo.Versions(), ed.ManifestID), ed.ManifestID
		if from == "" {
			return "", "", impl.NotFound(fmt.Sprintf("the server retains no version before %s, so there are no changes to show; /v1/versions lists the retained versions", ed.ManifestID))
		}
	default:
		return "", "", err
	}
	s.latest.Store(&latestPair{ed: weak.Make(ed), from: from, to: to})
	return from, to, nil
}

// olderThan is the version retained right before id in a newest-first list.
func olderThan(l *impl.VersionList, id string) string {
	if l == nil {
		return ""
	}
	for i, v := range l.Versions {
		if v.ManifestId == id && i+1 < len(l.Versions) {
			return l.Versions[i+1].ManifestId
		}
	}
	return ""
}

// diff returns the repository's diff from → to, or computes it from the two
// editions when the repository has none.
func (s *Site) diff(from, to *catalog.Edition) (gen.Diff, error) {
	b, err := s.repo.Diff(from.ManifestID, to.ManifestID)
	switch {
	case err == nil:
		var d gen.DiffBody
		if err := json.Unmarshal(b.JSON, &d); err != nil {
			return gen.Diff{}, fmt.Errorf("read the diff %s → %s: %w", from.ManifestID, to.ManifestID, err)
		}
		return d.Data, nil
	case errors.Is(err, impl.ErrNotFound):
		return catalog.Diff(from, to, time.Now())
	default:
		return gen.Diff{}, err
	}
}
