package impl

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"net/http"
	"path"
	"strconv"
	"strings"
	"sync"

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
	key := id
	if key == "" {
		key = s.Repo.Active().ManifestID
	}
	arc := s.archives.get(key)
	if arc == nil {
		var err error
		arc, err = s.archives.make(ex, id, key)
		switch {
		case errors.Is(err, ErrNotFound):
			WriteError(w, http.StatusNotFound, "no export: "+err.Error())
			return
		case err != nil:
			WriteInternal(w, r, s.Logger, http.StatusInternalServerError, "the version's files cannot be read", err)
			return
		}
	}
	h := w.Header()
	h.Set("Content-Type", "application/gzip")
	h.Set("Cache-Control", cache)
	h.Set("X-Data-Version", arc.manifestID)
	h.Set("ETag", arc.etag)
	h.Set("Content-Disposition", `attachment; filename="refdata-`+arc.manifestID+`.tar.gz"`)
	if inm := r.Header["If-None-Match"]; len(inm) > 0 && representation.ETagMatch(inm, arc.etag) {
		w.WriteHeader(http.StatusNotModified)
		return
	}
	h.Set("Content-Length", strconv.Itoa(len(arc.body)))
	w.WriteHeader(http.StatusOK)
	if r.Method != http.MethodHead {
		_, _ = w.Write(arc.body)
	}
}

// archives keeps the export archives made last. An archive is the same bytes
// every time it is asked for (its ETag is the version's content hash), and making
// one reads every file of the version and gzips them: for the 18-locale synthetic
// version 34 MB read and most of a second of CPU. Made per request, as it was,
// concurrent exports took that memory each, without bound. Now each is made once,
// one at a time, and at most keepArchives are kept: any number of exports cost
// those archives and one version's files.
type archives struct {
	making sync.Mutex // held while an archive is made
	mu     sync.Mutex
	recent []*archive // the last made or asked for first
}

// keepArchives: the active version's, and one other (a mirror seeding itself
// from the previous version, or a client fetching an older one).
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

// make reads the version id ("" for the active one, whose manifest ID was key)
// from ex and archives it, unless another request made it meanwhile.
func (a *archives) make(ex Exporter, id, key string) (*archive, error) {
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
