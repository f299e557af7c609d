package follow

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"reflect"
	"time"

	"github.com/refdata/refdata/catalog"
	"github.com/refdata/refdata/gen"
	"github.com/refdata/refdata/pipeline"
)

// syncRefdata follows another refdata through the client generated from
// openapi.yaml: what changed from its /v1/diff/{ours}/{theirs} when it retains
// our active version (the import's own diff must agree), the data from its
// /v1/export/{theirs}, the stored source snapshot. Its catalog routes serve
// rendered bodies, and rendering is not idempotent: importing them as source
// would convert twice.
func (f *Follower) syncRefdata(ctx context.Context, st *State, theirs string, etag string, res *Result, now time.Time) error {
	c, err := gen.NewClientWithResponses(f.opt.Client.BaseURL(), gen.WithHTTPClient(f.opt.Client))
	if err != nil {
		return err
	}
	if _, err := f.opt.Store.Lookup(theirs); err == nil {
		res.Outcome, res.ManifestID = "already stored", theirs
		st.ManifestID, st.ETag, st.ContentHash = theirs, etag, ""
		st.CheckedAt = now
		return nil
	}
	var their *gen.Diff
	if active, _, err := f.opt.Store.Active(); err == nil && active.ManifestID != theirs {
		d, err := c.GetDiffWithResponse(ctx, active.ManifestID, theirs)
		switch {
		case err != nil:
			return fetchFailed(fmt.Errorf("diff %s → %s: %w", active.ManifestID, theirs, err))
		case d.StatusCode() == http.StatusOK && d.JSON200 != nil:
			their = &d.JSON200.Data
			res.Notes = append(res.Notes, fmt.Sprintf("the upstream's diff %s → %s: %d added, %d removed, %d changed",
				active.ManifestID, theirs, their.Summary.TotalAdded, their.Summary.TotalRemoved, their.Summary.TotalChanged))
		case d.StatusCode() == http.StatusNotFound:
			res.Notes = append(res.Notes, fmt.Sprintf("the upstream does not retain our version %s: fetching %s whole", active.ManifestID, theirs))
		default:
			return failed(ReasonStatus, fmt.Errorf("diff %s → %s from %s: status %d", active.ManifestID, theirs, f.opt.Client.BaseURL(), d.StatusCode()))
		}
	}
	ex, err := c.ExportVersionWithResponse(ctx, theirs)
	if err != nil {
		return fetchFailed(fmt.Errorf("export %s: %w", theirs, err))
	}
	if ex.StatusCode() != http.StatusOK {
		return failed(ReasonStatus, fmt.Errorf("export %s from %s: status %d", theirs, f.opt.Client.BaseURL(), ex.StatusCode()))
	}
	opt := f.opt.Import
	files, ps, err := pipeline.ReadArchive(bytes.NewReader(ex.Body), opt.MaxFileBytes, opt.MaxSnapshotBytes)
	if err != nil {
		return failed(ReasonInvalid, fmt.Errorf("export %s from %s: %w", theirs, f.opt.Client.BaseURL(), err))
	}
	if len(ps) > 0 {
		return failed(ReasonInvalid, fmt.Errorf("export %s from %s: %s: %s", theirs, f.opt.Client.BaseURL(), ps[0].File, ps[0].Reason))
	}
	res.ManifestID, res.Bytes = theirs, int64(len(ex.Body))
	opt.Context = ctx
	rep, err := pipeline.ImportFiles(f.opt.Store, f.opt.Client.BaseURL()+"/v1/export/"+theirs, files, opt)
	res.Report = rep
	if err != nil {
		return importFailed(err)
	}
	res.Outcome = rep.Outcome
	if their != nil && rep.Summary != nil && !reflect.DeepEqual(*rep.Summary, their.Summary) {
		// Our diff is made against our active version's files; theirs against
		// theirs. They differ only when the two stores' copies of that version do.
		res.Notes = append(res.Notes, fmt.Sprintf("our diff disagrees with the upstream's: %+v here, %+v there", *rep.Summary, their.Summary))
	}
	st.ManifestID, st.ETag, st.ContentHash = theirs, etag, catalog.FilesHash(files)
	st.CheckedAt = now
	return nil
}
