package impl

import (
	"errors"
	"fmt"
	"io/fs"
	"net/http"
	"path"
	"strings"

	"github.com/refdata/refdata/catalog"
	"github.com/refdata/refdata/gen"
	"github.com/refdata/refdata/representation"
)

// Snapshot is a retained version's files in the snapshot layout, for
// /v1/export.
type Snapshot struct {
	ManifestID  string
	ContentHash string // catalog.ContentHash of Files
	Files       map[string][]byte
}

// Exporter is a Repository that can hand out a retained version's files.
type Exporter interface {
	// Snapshot returns the files of a retained version by manifest ID (any
	// letter case; "" for the active one). An error wrapping ErrNotFound when
	// the version is not retained.
	Snapshot(id string) (*Snapshot, error)
}

// ExportActive streams the active version's snapshot.
func (s *Server) ExportActive(w http.ResponseWriter, r *http.Request) {
	s.export(w, r, "", CacheSignal)
}

// ExportVersion streams a retained version's snapshot. The ID is only compared
// with the retained versions' names; it never forms a path.
func (s *Server) ExportVersion(w http.ResponseWriter, r *http.Request, id gen.ManifestId) {
	if !catalog.IsManifestID(strings.ToUpper(id)) {
		WriteError(w, http.StatusBadRequest, fmt.Sprintf("%q is not a manifest ID; use 16 hexadecimal digits as /v1/versions lists them, e.g. 05E83EB5E32657B9", id))
		return
	}
	s.export(w, r, id, CacheImmutable)
}

func (s *Server) export(w http.ResponseWriter, r *http.Request, id string, cache string) {
	ex, ok := s.Repo.(Exporter)
	if !ok {
		WriteError(w, http.StatusNotFound, "this server keeps no version files to export")
		return
	}
	snap, err := ex.Snapshot(id)
	switch {
	case errors.Is(err, ErrNotFound):
		WriteError(w, http.StatusNotFound, "no export: "+err.Error())
		return
	case err != nil:
		WriteInternal(w, r, s.Logger, http.StatusInternalServerError, "the version's files cannot be read", err)
		return
	}
	h := w.Header()
	h.Set("Content-Type", "application/gzip")
	h.Set("Cache-Control", cache)
	h.Set("X-Data-Version", snap.ManifestID)
	// The archive's bytes follow from the files alone, so their content hash is
	// a strong validator of it.
	sum := snap.ContentHash
	if sum == "" {
		sum = catalog.FilesHash(snap.Files)
	}
	sum = strings.TrimPrefix(sum, "sha256:")
	etag := `"tgz-` + sum[:min(32, len(sum))] + `"`
	h.Set("ETag", etag)
	h.Set("Content-Disposition", `attachment; filename="refdata-`+snap.ManifestID+`.tar.gz"`)
	if inm := r.Header["If-None-Match"]; len(inm) > 0 && representation.ETagMatch(inm, etag) {
		w.WriteHeader(http.StatusNotModified)
		return
	}
	w.WriteHeader(http.StatusOK)
	if r.Method == http.MethodHead {
		return
	}
	if err := catalog.WriteArchive(w, snap.Files); err != nil && s.Logger != nil {
		// Headers are gone: the client sees a truncated gzip stream, which
		// every reader (and refdata import) refuses.
		s.Logger.Error("export cut off", "manifest_id", snap.ManifestID, "err", err)
	}
}

// EmbeddedSnapshots exports the embedded sample versions from their files:
// dirs maps each manifest ID to its directory in fsys.
type EmbeddedSnapshots struct {
	Static
	FS   fs.FS
	Dirs map[string]string
}

// Snapshot reads an embedded version's files.
func (e EmbeddedSnapshots) Snapshot(id string) (*Snapshot, error) {
	if id == "" {
		id = e.Edition.ManifestID
	}
	ed, err := e.RetainedEdition(id)
	if err != nil {
		return nil, err
	}
	dir, ok := e.Dirs[ed.ManifestID]
	if !ok {
		return nil, NotFound("version " + ed.ManifestID + " has no files to export")
	}
	files := map[string][]byte{}
	err = fs.WalkDir(e.FS, dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := fs.ReadFile(e.FS, p)
		if err != nil {
			return err
		}
		rel := strings.TrimPrefix(p, path.Clean(dir)+"/")
		files[rel] = b
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("export %s: %w", ed.ManifestID, err)
	}
	return &Snapshot{ManifestID: ed.ManifestID, ContentHash: ed.ContentHash, Files: files}, nil
}
