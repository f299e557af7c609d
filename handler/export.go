package handler

import (
	"bytes"
	"fmt"
	"net/http"
	"strings"
	"sync"

	"github.com/refdata/refdata/catalog"
	"github.com/refdata/refdata/edition"
	"github.com/refdata/refdata/gen"
	"github.com/refdata/refdata/representation"
)

// ExportActive sends the active version's snapshot.
func (s *Server) ExportActive(w http.ResponseWriter, r *http.Request) {
	s.write(w, r, s.export(r, "", CacheSignal))
}

// ExportVersion sends a retained version's snapshot. The ID is only compared
// with the retained versions' names; it never forms a path.
func (s *Server) ExportVersion(w http.ResponseWriter, r *http.Request, id gen.ManifestId) {
	if err := parseManifestID(id, "/v1/versions lists them"); err != nil {
		s.write(w, r, failed(err))
		return
	}
	s.write(w, r, s.export(r, id, CacheImmutable))
}

func (s *Server) export(r *http.Request, id string, cache string) Answer {
	ex, ok := s.Repo.(edition.Exporter)
	if !ok {
		return failed(catalog.Errorf(catalog.ENOTFOUND, "this server keeps no version files to export"))
	}
	key := id
	if key == "" {
		key = s.Repo.Active().ManifestID
	}
	arc := s.archives.get(key)
	if arc == nil {
		var err error
		arc, err = s.archives.make(ex, id, key)
		switch catalog.ErrorCode(err) {
		case "":
		case catalog.ENOTFOUND:
			return failed(catalog.Errorf(catalog.ENOTFOUND, "no export: %s", catalog.ErrorMessage(err)))
		default:
			return failed(catalog.Internal("the version's files cannot be read", err))
		}
	}
	a := Answer{Status: http.StatusOK, Raw: arc.body, Fields: []representation.Field{
		representation.NewField("Content-Type", "application/gzip"),
		representation.NewField("Cache-Control", cache),
		representation.NewField("X-Data-Version", arc.manifestID),
		representation.NewField("ETag", arc.etag),
		representation.NewField("Content-Disposition", `attachment; filename="refdata-`+arc.manifestID+`.tar.gz"`),
	}}
	if inm := r.Header["If-None-Match"]; len(inm) > 0 && representation.ETagMatch(inm, arc.etag) {
		a.Status, a.Raw = http.StatusNotModified, nil
	}
	return a
}

// archives keeps the export archives made last: making one reads and gzips
// every file of a version, so each is made once, one at a time, and
// keepArchives are kept, whatever the number of concurrent exports.
type archives struct {
	making sync.Mutex // held while an archive is made
	mu     sync.Mutex
	recent []*archive // the last made or asked for first
}

// keepArchives: the active version's, and one other.
const keepArchives = 2

// archive is one version's export: the gzip-compressed tar of its files.
type archive struct {
	manifestID, etag string
	body             []byte
}

// get returns the kept archive of the version id (any letter case), or nil.
func (a *archives) get(id string) *archive {
	a.mu.Lock()
	defer a.mu.Unlock()
	for i, arc := range a.recent {
		if strings.EqualFold(arc.manifestID, id) {
			copy(a.recent[1:i+1], a.recent[:i])
			a.recent[0] = arc
			return arc
		}
	}
	return nil
}

// make archives the version id ("" for the active one, key) from ex, unless
// another request made it meanwhile.
func (a *archives) make(ex edition.Exporter, id, key string) (*archive, error) {
	a.making.Lock()
	defer a.making.Unlock()
	if arc := a.get(key); arc != nil {
		return arc, nil
	}
	snap, err := ex.Snapshot(id)
	if err != nil {
		return nil, err
	}
	sum := snap.ContentHash
	if sum == "" {
		sum = catalog.FilesHash(snap.Files)
	}
	sum = strings.TrimPrefix(sum, "sha256:")
	var buf bytes.Buffer
	if err := catalog.WriteArchive(&buf, snap.Files); err != nil {
		return nil, fmt.Errorf("archive %s: %w", snap.ManifestID, err)
	}
	// The strong validator: the archive's bytes follow from the files alone.
	arc := &archive{manifestID: snap.ManifestID, etag: `"tgz-` + sum[:min(32, len(sum))] + `"`, body: bytes.Clone(buf.Bytes())}
	a.mu.Lock()
	defer a.mu.Unlock()
	a.recent = append([]*archive{arc}, a.recent[:min(len(a.recent), keepArchives-1)]...)
	return arc, nil
}
