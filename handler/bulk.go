package handler

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
	s.write(w, r, s.bulk(r, manifestId, deref(p.Language)))
}

func (s *Server) bulk(r *http.Request, manifestID, lang string) Answer {
	if err := parseManifestID(manifestID, "/v1/versions lists them"); err != nil {
		return failed(err)
	}
	loc, err := parseLanguage(lang, true)
	if err != nil {
		return failed(err)
	}
	ed, err := s.Repo.RetainedEdition(manifestID)
	if err != nil {
		return failed(err)
	}
	b := ed.Bulk(loc)
	if b == nil {
		return notFound(ed, "version %s was stored without bulk files (its import did not ask for them, or was made by an older refdata); import its snapshot (/v1/export/%s) again with refdata import --force --bulk-files to make them", ed.ManifestID, ed.ManifestID)
	}
	where := &location{}
	where.value[0] = "/v1/versions/" + ed.ManifestID + "/bulk"
	if r.URL.RawQuery != "" {
		where.value[0] += "?" + r.URL.RawQuery
	}
	where.f = representation.Field{Name: "Content-Location", Value: where.value[:]}
	a := own(ed, b, bulkRoute)
	a.Response.Location = &where.f
	if !a.Response.Acceptable(r.Header["Accept-Encoding"]) {
		return failed(catalog.Errorf(catalog.EENCODING, "a bulk file is sent compressed only: send Accept-Encoding: gzip or br, or none (curl --compressed decodes it); Accept-Encoding %.100q takes neither", r.Header.Get("Accept-Encoding")))
	}
	return a
}
