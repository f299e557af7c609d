package pages

import (
	"encoding/json"
	"fmt"
	"weak"

	"github.com/refdata/refdata/catalog"
	"github.com/refdata/refdata/edition"
)

// latestPair names the versions /changes compares: those of /v1/diff/latest,
// or, when the repository has no latest diff (pruned by retention), the
// active version and the one retained before it.
func (s *Site) latestPair() (from, to string, err error) {
	ed := s.repo.Active()
	if p := s.latest.Load(); p != nil && p.ed == weak.Make(ed) {
		return p.from, p.to, nil
	}
	b, err := s.repo.LatestDiff()
	switch {
	case err == nil:
		var d diffJSON
		if err := json.Unmarshal(b.JSON, &d); err != nil {
			return "", "", fmt.Errorf("read the latest diff: %w", err)
		}
		from, to = d.Data.FromVersion, d.Data.ToVersion
	case catalog.ErrorCode(err) == catalog.ENOTFOUND:
		from, to = olderThan(s.repo.Versions(), ed.ManifestID), ed.ManifestID
		if from == "" {
			return "", "", catalog.Errorf(catalog.ENOTFOUND, "the server retains no version before %s, so there are no changes to show; /v1/versions lists the retained versions", ed.ManifestID)
		}
	default:
		return "", "", err
	}
	s.latest.Store(&latestPair{ed: weak.Make(ed), from: from, to: to})
	return from, to, nil
}

// olderThan is the version retained right before id in a newest-first list.
func olderThan(l *edition.VersionList, id string) string {
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
