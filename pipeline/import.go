// Package pipeline ingests game versions into the store: load a snapshot (either
// layout), validate it against openapi.yaml, render and compress the bodies the
// active version lacks into a new segment, diff it against the active version,
// and publish it atomically. It reports progress, a report per import, and its
// own Prometheus metrics; Watch runs imports for folders dropped into an inbox.
package pipeline

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path"
	"slices"
	"strings"
	"time"

	"github.com/refdata/refdata/blob"
	"github.com/refdata/refdata/catalog"
	"github.com/refdata/refdata/edition"
	"github.com/refdata/refdata/envelope"
	"github.com/refdata/refdata/representation"
	"github.com/refdata/refdata/store"
)

// Stage is a step of an import, as metrics and progress name it.
type Stage string

// The stages, in order; Idle is between imports.
const (
	Idle     Stage = "idle"
	Load     Stage = "load"
	Validate Stage = "validate"
	Render   Stage = "render"
	Diff     Stage = "diff"
	Compress Stage = "compress"
	Publish  Stage = "publish"
)

// Stages lists every stage, idle first.
var Stages = []Stage{Idle, Load, Validate, Render, Diff, Compress, Publish}

// ErrRejected is wrapped by Import's error when the snapshot is unfit to publish;
// the Report says why.
var ErrRejected = errors.New("snapshot rejected")

// ErrShrinkGuard is wrapped, with ErrRejected, by the error of an import the
// shrink guard refused.
var ErrShrinkGuard = errors.New("shrink guard")

// Options tune an import. The zero value works: each 0 means its default.
type Options struct {
	Retain int
	// Progress, when set, is told each stage as it starts, with counts.
	Progress func(s Stage, detail string)
	Metrics  *Metrics
	Now      func() time.Time
	// Context cancels the import (SIGINT, SIGTERM, a deadline), leaving the
	// store untouched.
	Context     context.Context
	LockTimeout time.Duration
	// MaxFileBytes, MaxSnapshotBytes and MaxJSONDepth bound what is read.
	MaxFileBytes, MaxSnapshotBytes int64
	MaxJSONDepth                   int
	// AllowShrink publishes a version the shrink guard (ShrinkLimit) refuses.
	AllowShrink bool
	ShrinkLimit float64
	// Force re-validates and re-publishes, as the active version, a manifestId
	// the store already holds.
	Force bool
	// Effort is what the bodies are compressed at (0: representation.Best).
	Effort representation.Effort
	// Names, when not nil, holds name files to take as translations (names.go).
	Names fs.FS
	// Bulk makes the version's bulk files (GET /v1/versions/{id}/bulk): every
	// item of every catalog per language, as NDJSON. Each changes whole when
	// any item does, so a version stores about a third more with them than
	// it changes otherwise (docs/decisions.md).
	Bulk bool
	// MediaURL, when set, is where a media URL's file is served from instead
	// (--public-media-url): the rendered bodies are rewritten, not the files.
	MediaURL func(upstreamURL string) (string, bool)
}

const (
	// importCacheBytes bounds what an import keeps of the bodies it reads back.
	importCacheBytes = 16 << 20
	// DefaultRetain is how many versions a store keeps unless told otherwise.
	DefaultRetain = 10
	// DefaultLockTimeout is how long an import waits for another's store lock.
	DefaultLockTimeout = time.Minute
	// DefaultShrinkLimit is the share of a catalog's items a version may remove
	// before the shrink guard refuses it.
	DefaultShrinkLimit = 0.20
)

// Import reads the snapshot in dir and, when it is valid and new, publishes it as
// the active version of st. It returns a report in every case; the error wraps
// ErrRejected when the snapshot was refused (the store is untouched).
func Import(st store.Backend, dir string, opt Options) (*Report, error) {
	return importWith(st, dir, opt, func(im *importer) error { return im.run(dir) })
}

func importWith(st store.Backend, source string, opt Options, run func(*importer) error) (*Report, error) {
	opt.Retain = cmp.Or(opt.Retain, DefaultRetain)
	opt.Context = cmp.Or(opt.Context, context.Background())
	opt.Effort = cmp.Or(opt.Effort, representation.Best)
	if opt.Now == nil {
		opt.Now = time.Now
	}
	if opt.LockTimeout <= 0 {
		opt.LockTimeout = DefaultLockTimeout
	}
	if opt.ShrinkLimit <= 0 {
		opt.ShrinkLimit = DefaultShrinkLimit
	}
	r := &Report{Source: source}
	im := &importer{st: st, opt: opt, r: r, cache: blob.NewCache(importCacheBytes)}
	err := im.locked(source, run)
	opt.Metrics.setStage(Idle)
	if err != nil {
		opt.Metrics.failed(im.stage)
		r.Outcome = cmp.Or(r.Outcome, "failed")
		return r, err
	}
	return r, nil
}

type importer struct {
	st    store.Backend
	opt   Options
	r     *Report
	stage Stage
	// cache: the base version's bodies read for the diff and for copying.
	cache *blob.Cache
}

// checkpoint ends the import when its context has: SIGINT, SIGTERM or deadline.
func (im *importer) checkpoint() error {
	if err := context.Cause(im.opt.Context); err != nil {
		return &checkpointError{fmt.Errorf("%s: import stopped, store untouched: %w", im.stage, err)}
	}
	return nil
}

// checkpointError is an import stopped by its context, not by its snapshot.
type checkpointError struct{ err error }

func (e *checkpointError) Error() string { return e.err.Error() }
func (e *checkpointError) Unwrap() error { return e.err }

// storeError is an import stopped by its store, not by its snapshot.
type storeError struct{ err error }

func (e *storeError) Error() string { return e.err.Error() }
func (e *storeError) Unwrap() error { return e.err }

// next starts stage s unless the import's context has ended.
func (im *importer) next(s Stage, format string, args ...any) error {
	err := im.checkpoint()
	if err == nil {
		im.enter(s, format, args...)
	}
	return err
}

func (im *importer) enter(s Stage, format string, args ...any) {
	im.stage = s
	im.opt.Metrics.setStage(s)
	if im.opt.Progress != nil {
		im.opt.Progress(s, fmt.Sprintf(format, args...))
	}
}

// reject records the problems and returns an error wrapping ErrRejected; format
// may use %w, so a rejection caused by an error keeps that error's chain.
func (im *importer) reject(ps []catalog.Problem, format string, args ...any) error {
	im.r.Outcome = "rejected"
	im.r.NumRejections = len(ps)
	im.r.Rejections = capProblems(ps)
	return fmt.Errorf("%s: %w: "+format, append([]any{im.stage, ErrRejected}, args...)...)
}

// locked runs an import's stages holding the store's writer lock, after
// removing what a crashed writer left behind. It says whose the lock is while
// it waits for it, for at most LockTimeout.
func (im *importer) locked(source string, run func(*importer) error) error {
	im.enter(Load, "reading %s", source)
	unlock, ok := im.st.TryLock()
	if !ok {
		holder := cmp.Or(im.st.LockHolder(), "another process")
		if im.opt.Progress != nil {
			im.opt.Progress(Load, fmt.Sprintf("waiting for the store lock held by %s (at most %s)", holder, im.opt.LockTimeout))
		}
		ctx, cancel := context.WithTimeoutCause(im.opt.Context, im.opt.LockTimeout,
			fmt.Errorf("gave up after --lock-timeout %s waiting for the store lock held by %s", im.opt.LockTimeout, holder))
		defer cancel()
		var err error
		if unlock, err = im.st.Lock(ctx); err != nil {
			return err
		}
	}
	defer unlock()
	if c, ok := im.st.(store.Cleaner); ok {
		if err := c.CleanTmp(); err != nil {
			return err
		}
	}
	return run(im)
}

func (im *importer) run(dir string) error {
	r := im.r
	st, err := os.Stat(dir)
	if err != nil {
		return im.reject([]catalog.Problem{{File: dir, Reason: "not a directory"}}, "%s is not a directory", dir)
	}
	if !st.IsDir() {
		return im.runArchive(dir)
	}
	sf, err := openSnapshot(dir, im.opt.MaxFileBytes, im.opt.MaxSnapshotBytes)
	if err != nil {
		return fmt.Errorf("load %s: %w", dir, err)
	}
	defer sf.Close()
	if r.Layout, err = detectLayout(sf.FS()); err != nil {
		return im.reject([]catalog.Problem{{File: dir, Reason: err.Error()}}, "%s: %w", dir, err)
	}
	var files map[string][]byte
	var problems []catalog.Problem
	switch r.Layout {
	case CaptureLayout:
		files, problems, err = captureFiles(sf, r)
	default:
		files, r.Ignored, err = readSnapshotFiles(sf)
	}
	var fe *catalog.FileError
	if errors.As(err, &fe) {
		return im.reject([]catalog.Problem{problemOf(err)}, "%w", err)
	}
	if err != nil {
		return fmt.Errorf("load %s: %w", dir, err)
	}
	return im.process(files, problems)
}

// ImportFiles is Import for a snapshot held in memory (snapshot layout: paths
// such as "version.json", "en-US/weapons.json", "de-DE/weapons.json"), as sync
// builds it from an upstream's answers; source names it in the report. The
// files get the same checks as a directory's: the per-file and per-snapshot
// byte limits, strict UTF-8, bounded depth; a path the layout does not name is
// ignored and reported.
func ImportFiles(st store.Backend, source string, files map[string][]byte, opt Options) (*Report, error) {
	return importWith(st, source, opt, func(im *importer) error {
		im.r.Layout = SnapshotLayout
		kept, ps := im.limitFiles(files)
		return im.process(kept, ps)
	})
}

// limitFiles keeps the files the snapshot layout names, within the byte limits.
func (im *importer) limitFiles(files map[string][]byte) (map[string][]byte, []catalog.Problem) {
	known := snapshotNames()
	maxFile, remaining := limits(im.opt.MaxFileBytes, im.opt.MaxSnapshotBytes)
	kept := make(map[string][]byte, len(files))
	var ps []catalog.Problem
	for _, n := range slices.Sorted(maps.Keys(files)) {
		b := files[n]
		switch {
		case !known[n]:
			im.r.Ignored = append(im.r.Ignored, n)
		case int64(len(b)) > maxFile:
			ps = append(ps, catalog.Problem{File: n, Reason: fmt.Sprintf("larger than the per-file limit of %d bytes (raise it with --max-file-bytes)", maxFile)})
		case int64(len(b)) > remaining:
			ps = append(ps, catalog.Problem{File: n, Reason: "the snapshot exceeds its limit of bytes read (raise it with --max-snapshot-bytes)"})
		default:
			remaining -= int64(len(b))
			kept[n] = b
		}
	}
	return kept, ps
}

// process runs the stages after loading: checks, carry-over, validate, guard,
// diff, render, publish. The caller holds the store lock.
func (im *importer) process(files map[string][]byte, problems []catalog.Problem) error {
	r := im.r
	if err := im.checkpoint(); err != nil {
		return err
	}
	problems = append(problems, checkFiles(files, im.opt.MaxJSONDepth)...)
	if _, ok := files["version.json"]; !ok {
		problems = append(problems, catalog.Problem{File: "version.json", Reason: "missing: a snapshot needs its version record"})
	}
	if len(problems) > 0 {
		return im.reject(problems, "%s cannot be read", count(len(problems), "file"))
	}
	r.ManifestID = catalog.ManifestIDOf(files["version.json"])
	base, already, err := im.base()
	if err != nil || already {
		return err
	}
	replace := base.replace
	im.carryOver(files, base.files, base.ManifestID)
	base.files = nil // not held while the version renders
	if im.opt.Names != nil {
		maxFile, _ := limits(im.opt.MaxFileBytes, 0)
		if ps := applyNames(im.opt.Names, maxFile, files, r); len(ps) > 0 {
			return im.reject(ps, "%d name files cannot be read", len(ps))
		}
	}

	// Decoded a catalog and a locale at a time, as validated and rendered:
	// a version is never held decoded whole, only its files' bytes.
	snap, err := catalog.LoadLazy(files)
	if err != nil {
		return im.reject([]catalog.Problem{problemOf(err)}, "%w", err)
	}
	val, items, err := im.validate(snap)
	if err != nil {
		return err
	}
	contentHash := catalog.FilesHash(files)
	if replace && catalog.ManifestIDOf(files["version.json"]) == base.ManifestID {
		// Re-publishing the active version: the latest diff stays previous → it.
		base.ManifestID = base.Previous
	}
	// The files are stored now, by content; the snapshot reads them while
	// it renders.
	stored, err := im.st.PutFiles(files)
	defer func() {
		if r.Outcome != "published" {
			// What this import stored no version names: the store is left as
			// it was found.
			_ = im.st.Sweep()
		}
	}()
	if err != nil {
		return err
	}
	var old *edition.Edition
	if base.ManifestID != "" {
		if old, err = im.baseEdition(base.ManifestID); err != nil {
			r.note("the version before %s cannot be read (%v); no diff is made", r.ManifestID, err)
			old = nil
		}
	}
	ed, enc, err := im.render(snap, contentHash, val, old, items)
	if err != nil {
		return err
	}
	defer enc.Discard()
	id := ed.ManifestID
	r.ManifestID, r.Version = id, ed.Version.Version
	r.IndexBytes, r.StoredBytes, r.CopiedBytes = int64(len(enc.Index)), enc.Stored, enc.Copied

	// The diff is stamped with the version's publication, so a replica that
	// computes it again makes the same bytes.
	now := im.opt.Now()
	var diffBody []byte
	if old != nil {
		if diffBody, err = im.diff(old, ed, now); err != nil {
			return err
		}
	}
	if err := im.next(Publish, "%s into %s", id, im.st.Location()); err != nil {
		return err
	}
	r.Pruned, err = im.st.Publish(store.Publication{
		ManifestID: id, Version: r.Version, Branch: ed.Version.Branch,
		Stored: stored, Previous: r.Previous, DiffBody: diffBody,
		Index: enc.Index, Segments: enc.Segments, Segment: enc.Segment, Bulk: bulkFiles(ed),
		Retain: im.opt.Retain, Now: now, Replace: replace,
	})
	if err != nil {
		return err
	}
	r.Outcome = "published"
	return nil
}

// baseVersion is what an import starts from.
type baseVersion struct {
	store.Pointer                   // the version diffed against; zero in an empty store
	files         map[string][]byte // its files, carried over where the snapshot lacks them
	replace       bool              // the imported version is stored, and re-published (--force)
}

// base resolves the version this import diffs against and carries files over
// from; already says the imported version is stored already (the report's
// Outcome says so): nothing more to do.
func (im *importer) base() (b baseVersion, already bool, err error) {
	r := im.r
	var why string
	b.Pointer, why, err = store.ResolveIn(im.st)
	if catalog.IsManifestID(r.ManifestID) {
		if _, lerr := im.st.Lookup(r.ManifestID); lerr == nil {
			switch {
			case im.opt.Force:
				b.replace = true
				r.note("version %s is already stored; re-validating and re-publishing it (--force)", r.ManifestID)
			case !im.interrupted(r.ManifestID, b.Pointer):
				r.Outcome = "already stored"
				return b, true, nil
			default:
				r.note("version %s was left unpublished by an interrupted import; importing it again", r.ManifestID)
				if err := im.st.Discard(r.ManifestID); err != nil {
					return b, false, err
				}
				b.Pointer, why, err = store.ResolveIn(im.st)
			}
		}
	}
	switch {
	case errors.Is(err, store.ErrNotFound):
	case err != nil:
		return b, false, err
	default:
		if why != "" {
			r.note("the active pointer is not usable (%s); diffing against and carrying over from %s, the newest intact version", why, b.ManifestID)
		}
		if _, b.files, err = im.st.ReadVersion(b.ManifestID); err != nil {
			return b, false, fmt.Errorf("read active version: %w", err)
		}
	}
	return b, false, nil
}

// validate repairs and validates the snapshot, recording both in the report,
// and returns the validation and the number of items; a rejection is an
// error.
func (im *importer) validate(snap *catalog.Snapshot) (*catalog.Validation, int, error) {
	r := im.r
	if err := im.next(Validate, "%d catalogs, every locale", len(catalog.SourceCategories())); err != nil {
		return nil, 0, err
	}
	repairs := catalog.Repair(snap)
	r.NumRepairs, r.Repairs = len(repairs), capProblems(repairs)
	val, err := catalog.Validate(snap)
	var fe *catalog.FileError
	if errors.As(err, &fe) {
		return nil, 0, im.reject([]catalog.Problem{problemOf(err)}, "%w", err)
	}
	if err != nil {
		return nil, 0, err
	}
	r.Unknown = val.Unknown
	r.Fills = val.Fills
	if len(val.Rejections) > 0 {
		return nil, 0, im.reject(val.Rejections, "%s", count(len(val.Rejections), "problem"))
	}
	return val, val.Items, nil
}

// diff diffs ed against old, the version before it, stamped now, and
// returns the diff's body; a version that loses too many items of a catalog
// is rejected (ErrShrinkGuard) unless AllowShrink.
func (im *importer) diff(old, ed *edition.Edition, now time.Time) ([]byte, error) {
	r := im.r
	if err := im.next(Diff, "%s → %s", old.ManifestID, ed.ManifestID); err != nil {
		return nil, err
	}
	d, err := catalog.Diff(old, ed, now)
	if err != nil {
		return nil, err
	}
	r.Previous = old.ManifestID
	r.Summary = &d.Summary
	if ps := shrinkage(old, ed, im.opt.ShrinkLimit); len(ps) > 0 {
		if !im.opt.AllowShrink {
			lose := "lose"
			if len(ps) == 1 {
				lose = "loses"
			}
			return nil, im.reject(ps, "%w: %s %s too many items (publish anyway with --allow-shrink)", ErrShrinkGuard, count(len(ps), "catalog"), lose)
		}
		for _, p := range ps {
			r.note("allowed by --allow-shrink: %s %s", p.File, p.Reason)
		}
	}
	return catalog.DiffBody(d)
}

// render renders the snapshot a source category at a time, compressing and
// storing each part's new bodies into a new segment as soon as it is made and
// letting go of them, so an import holds one part's bodies at most. It
// returns the new version's edition as a server would read it, over the new
// segment and old's.
func (im *importer) render(snap *catalog.Snapshot, contentHash string, val *catalog.Validation, old *edition.Edition, items int) (*edition.Edition, *edition.Encoded, error) {
	r := im.r
	if err := im.next(Render, "%d items, every locale, compressed in gzip and brotli", items); err != nil {
		return nil, nil, err
	}
	enc, err := edition.NewEncoder(edition.Options{Effort: im.opt.Effort, Base: old, Dir: im.st.Staging()})
	if err != nil {
		return nil, nil, err
	}
	media := 0
	ropt := catalog.RenderOptions{Bulk: im.opt.Bulk, Rewrite: mediaRewriter(im.opt.MediaURL, &media)}
	rendered, err := catalog.RenderEach(snap, ropt, func(docs []*catalog.Doc, _ bool) error {
		if err := im.checkpoint(); err != nil {
			return err
		}
		if err := enc.Add(docs); err != nil {
			// Storing failed (a write, or a stored body read back for the
			// bulk files): the store's fault, not the snapshot's.
			return &storeError{fmt.Errorf("store the bodies: %w", err)}
		}
		for _, d := range docs {
			d.JSON = nil // stored: the edition reads it back from the segment
		}
		return nil
	})
	if err != nil {
		enc.Abort()
		var ce *checkpointError
		var se *storeError
		if errors.As(err, &ce) || errors.As(err, &se) {
			return nil, nil, err
		}
		return nil, nil, im.reject([]catalog.Problem{problemOf(err)}, "%w", err)
	}
	if media > 0 {
		r.note("%d media URLs point to the mirror", media)
	}
	rendered.ContentHash = contentHash
	var before []catalog.Unknown
	if old != nil {
		before = old.Unknown
	}
	rendered.Unknown = catalog.SinceFirstSeen(val.Unknown, before, rendered.ManifestID)
	r.Unknown = rendered.Unknown
	out, err := enc.Finish(rendered)
	if err != nil {
		return nil, nil, err
	}
	ed, err := edition.Decode(out.Index, func(sum string, size int64) (*blob.Segment, error) {
		if s := out.Segment; s != nil && s.Sum == sum {
			if s.Path == "" {
				return blob.Memory(sum, s.Mem), nil
			}
			return blob.Open(s.Path, sum, size, im.cache)
		}
		if old != nil {
			if s := old.Segment(sum); s != nil {
				return s, nil
			}
		}
		return im.st.Segment(sum, size, im.cache)
	})
	if err != nil {
		out.Discard()
		return nil, nil, fmt.Errorf("read back the new edition: %w", err)
	}
	return ed, out, nil
}

// bulkFiles describes ed's bulk files for its manifest.
func bulkFiles(ed *edition.Edition) map[string]store.BulkFile {
	fs := ed.BulkFiles()
	if fs == nil {
		return nil
	}
	out := make(map[string]store.BulkFile, len(fs))
	for _, f := range fs {
		out[f.Language] = store.BulkFile{SHA256: f.SHA256, Size: f.Size}
	}
	return out
}

// baseEdition reads the version an import diffs against: its stored edition,
// or, for a version stored without one (by an older refdata), its files
// rendered again.
func (im *importer) baseEdition(id string) (*edition.Edition, error) {
	_, index, err := im.st.ReadIndex(id, "")
	if err == nil {
		return edition.Decode(index, func(sum string, size int64) (*blob.Segment, error) {
			return im.st.Segment(sum, size, im.cache)
		})
	}
	_, files, ferr := im.st.ReadVersion(id)
	if ferr != nil {
		return nil, ferr
	}
	snap, rerr := catalog.LoadFiles(files)
	if rerr != nil {
		return nil, rerr
	}
	catalog.Repair(snap)
	// The fields the contract does not name are known only to validation.
	val, rerr := catalog.Validate(snap)
	if rerr != nil {
		return nil, rerr
	}
	rendered, rerr := catalog.RenderEach(snap, catalog.RenderOptions{Rewrite: mediaRewriter(im.opt.MediaURL, new(int))}, nil)
	if rerr != nil {
		return nil, rerr
	}
	rendered.ContentHash, rendered.Unknown = catalog.FilesHash(files), val.Unknown
	im.r.note("version %s has no usable stored edition (%v); rendered it again from its files", id, err)
	return edition.New(rendered), nil
}

// interrupted reports whether a stored version is the leftover of a publish
// that crashed before switching the pointer: newer than the active one, not it.
//
// After an operator's rollback (refdata activate) newer versions are kept
// aside on purpose: none is a leftover, and re-importing one is a no-op (use
// --force to publish it again).
func (im *importer) interrupted(id string, active store.Pointer) bool {
	if active.ManifestID == "" || active.ManifestID == id || active.Activated {
		return false
	}
	vs, err := im.st.Versions()
	if err != nil {
		return false
	}
	seq := map[string]int64{}
	for _, v := range vs {
		seq[v.ManifestID] = v.Seq
	}
	return seq[id] > seq[active.ManifestID]
}

// carryOver fills in the catalogs the snapshot lacks from the active version's
// files: the en-US file with its translations, and the string tables when the
// snapshot has none.
func (im *importer) carryOver(files, base map[string][]byte, baseID string) {
	var missing []string
	for _, c := range catalog.SourceCategories() {
		en := path.Join("en-US", c.File())
		if _, ok := files[en]; ok {
			continue
		}
		missing = append(missing, c.Name())
		for _, loc := range catalog.Locales {
			name := path.Join(loc, c.File())
			if b, ok := base[name]; ok {
				files[name] = b
			}
		}
	}
	isLocres := func(name string) bool { return strings.HasPrefix(name, "locres/") }
	if !slices.ContainsFunc(slices.Collect(maps.Keys(files)), isLocres) {
		missing = append(missing, "locres")
		for name, b := range base {
			if isLocres(name) {
				files[name] = b
			}
		}
	}
	if len(missing) == 0 {
		return
	}
	im.r.CarriedOver = missing
	if base != nil {
		im.r.CarriedFrom = baseID
	}
	if base == nil {
		im.r.note("not in the snapshot and no active version to carry over from, so empty: %s", strings.Join(missing, ", "))
		return
	}
	im.r.note("carried over from the active version %s (not in the snapshot): %s", baseID, strings.Join(missing, ", "))
}

// checkFiles finds every file that is not JSON, is truncated or has the wrong
// envelope, so a report lists them all rather than the first.
func checkFiles(files map[string][]byte, maxDepth int) []catalog.Problem {
	if maxDepth <= 0 {
		maxDepth = DefaultMaxJSONDepth
	}
	var ps []catalog.Problem
	for _, n := range slices.Sorted(maps.Keys(files)) {
		b := files[n]
		if why := checkJSONText(b, maxDepth); why != "" {
			ps = append(ps, catalog.Problem{File: n, Reason: why})
			continue
		}
		switch {
		case n == "version.json":
			v, err := envelope.Decode(b)
			if err != nil {
				ps = append(ps, *problemIn(n, err))
				continue
			}
			if _, ok := v.(map[string]any); !ok {
				ps = append(ps, catalog.Problem{File: n, Reason: "wrong envelope: the version record is not an object"})
			}
		case strings.HasPrefix(n, "locres/"):
			var t map[string]map[string]string
			if err := json.Unmarshal(b, &t); err != nil {
				ps = append(ps, catalog.Problem{File: n, Reason: "not a string table: " + envelope.JSONReason(err)})
			}
		default:
			if _, p := decodeItems(n, b); p != nil {
				ps = append(ps, *p)
			}
		}
	}
	return ps
}

func problemOf(err error) catalog.Problem {
	var fe *catalog.FileError
	if errors.As(err, &fe) {
		return catalog.Problem{File: fe.File, Reason: fe.Err.Error()}
	}
	return catalog.Problem{File: "(snapshot)", Reason: err.Error()}
}
