package impl

import (
	"net/http"

	"github.com/refdata/refdata/catalog"
	"github.com/refdata/refdata/gen"
	"github.com/refdata/refdata/representation"
)

// bulkRoute answers the bulk files: NDJSON, never changing, sent compressed
// only (docs/decisions.md).
var bulkRoute = func() *representation.Route {
	rt := representation.NewRoute(PinnedPrefix+"/bulk", "application/x-ndjson", CacheImmutable)
	rt.Compressed = true
	return rt
}()

// GetBulk serves a retained version's bulk file in one language, as stored
// at its import: never made for a request.
func (s *Server) GetBulk(w http.ResponseWriter, r *http.Request, manifestId gen.ManifestId, p gen.GetBulkParams) {
	if err := parseManifestID(manifestId, "/v1/versions lists them"); err != nil {
		s.fail(w, r, err)
		return
	}
	loc, err := parseLanguage(deref(p.Language), true)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	ed, err := s.Repo.RetainedEdition(manifestId)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	b := ed.Bulk(loc)
	if b == nil {
		s.notFound(w, r, ed, "version %s was stored without bulk files (its import did not ask for them, or was made by an older refdata); import its snapshot (/v1/export/%s) again with refdata import --force --bulk-files to make them", ed.ManifestID, ed.ManifestID)
		return
	}
	where := &location{}
	where.value[0] = "/v1/versions/" + ed.ManifestID + "/bulk"
	if r.URL.RawQuery != "" {
		where.value[0] += "?" + r.URL.RawQuery
	}
	where.f = representation.Field{Name: "Content-Location", Value: where.value[:]}
	res := representation.Response{Route: bulkRoute, Version: &ed.VersionField, Location: &where.f, Body: b}
	if !res.Acceptable(r.Header["Accept-Encoding"]) {
		s.fail(w, r, catalog.Errorf(catalog.EENCODING, "a bulk file is sent compressed only: send Accept-Encoding: gzip or br, or none (curl --compressed decodes it); Accept-Encoding %.100q takes neither", r.Header.Get("Accept-Encoding")))
		return
	}
	s.respond(w, r, ed, res)
}
