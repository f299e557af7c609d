package mirror

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"sync/atomic"

	"golang.org/x/sync/errgroup"

	"github.com/refdata/refdata/catalog"
	"github.com/refdata/refdata/envelope"
	"github.com/refdata/refdata/pipeline"
	"github.com/refdata/refdata/upstream"
)

// fetched is one snapshot as answered by the upstream, spooled to a
// temporary directory in the snapshot layout (docs/pipeline.md): the answers
// are written as they arrive, so a fetch holds one catalog's at a time, not
// the version's. close removes it.
type fetched struct {
	dir         string // the snapshot directory
	root        string // the temporary directory holding it
	version     []byte // version.json as sent
	manifestID  string
	etag        string
	contentHash string   // catalog.ContentHash of the snapshot's files
	bytes       int64    // the snapshot's files together
	lacking     []string // catalogs the upstream answers 404 for
	notes       []string
}

func (f *fetched) close() {
	if f != nil {
		_ = os.RemoveAll(f.root)
	}
}

// skinsPath is the endpoint whose skins are authoritative over the copies
// nested in /v1/weapons (the capture rule, docs/pipeline.md).
const skinsPath = "weapons/skins"

// locresPath stands for /v1/locres/{locale}, the string tables only another
// refdata serves.
const locresPath = "locres"

// spool writes files under a directory, each once, and hashes each as it
// writes it: what the content hash needs, without reading them back.
type spool struct {
	dir string

	mu    sync.Mutex
	sums  map[string]string // name → sha256, hex
	bytes int64
}

func (s *spool) write(name string, b []byte) error {
	p := filepath.Join(s.dir, filepath.FromSlash(name))
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		return fmt.Errorf("spool %s: %w", name, err)
	}
	if err := os.WriteFile(p, b, 0o644); err != nil {
		return fmt.Errorf("spool %s: %w", name, err)
	}
	sum := sha256.Sum256(b)
	s.mu.Lock()
	defer s.mu.Unlock()
	s.sums[name] = hex.EncodeToString(sum[:])
	s.bytes += int64(len(b))
	return nil
}

// fetchSnapshot fetches the version record (unless v, just read, has its body)
// and every catalog in every locale: with ?language=all when all is set, else
// one request per locale; progress is told each answer. The answers are
// written as they arrive under a new directory in spoolDir ("": the system's
// temporary directory), and may not exceed budget together (the import's
// --max-snapshot-bytes; 0: its default); then each catalog's, one at a time,
// becomes its snapshot files beside them.
func fetchSnapshot(ctx context.Context, c *upstream.Client, v *upstream.Version, all bool, budget int64, progress func(step string, done, total int), spoolDir string) (_ *fetched, err error) {
	orDefault(&budget, pipeline.DefaultMaxSnapshotBytes)
	if v == nil || v.Body == nil {
		if v, err = c.Version(ctx, ""); err != nil {
			return nil, fetchFailed(fmt.Errorf("version: %w", err))
		}
	}
	root, err := os.MkdirTemp(spoolDir, "refdata-sync-")
	if err != nil {
		return nil, failed(ReasonStore, fmt.Errorf("a directory for the fetch: %w", err))
	}
	f := &fetched{root: root, dir: filepath.Join(root, "snapshot"), version: v.Body, manifestID: v.ManifestID, etag: v.ETag}
	defer func() {
		if err != nil {
			f.close()
		}
	}()
	answers := &spool{dir: filepath.Join(root, "answers"), sums: map[string]string{}}
	snap := &spool{dir: f.dir, sums: map[string]string{}}
	if err := snap.write("version.json", v.Body); err != nil {
		return nil, failed(ReasonStore, err)
	}
	cats := catalog.SourceCategories()
	lead, langs := "en-US", catalog.Locales[:]
	if all {
		lead, langs = "all", []string{"all"}
	}
	total := (len(cats)+1)*len(langs) + 1 // an estimate until the first round is in
	var done atomic.Int64
	tick := func() {
		if progress != nil {
			progress("fetch", int(done.Add(1)), total)
		}
	}
	tick()

	// The answers on disk by endpoint and language; a catalog is lacking when
	// en-US (or all) is 404.
	type key struct{ name, lang string }
	file := func(k key) string { return strings.ReplaceAll(k.name, "/", "-") + "." + k.lang + ".json" }
	var mu sync.Mutex
	have := map[key]bool{}
	fetchAll := func(reqs []key) error {
		g, gctx := errgroup.WithContext(ctx)
		for _, k := range reqs {
			g.Go(func() error {
				var b []byte
				var err error
				if k.name == locresPath {
					b, err = c.Table(gctx, k.lang)
				} else {
					b, err = c.Catalog(gctx, k.name, k.lang)
				}
				tick()
				if errors.Is(err, upstream.ErrNoCatalog) {
					return nil
				}
				if err != nil {
					return fetchFailed(err)
				}
				mu.Lock()
				budget -= int64(len(b))
				over := budget < 0
				mu.Unlock()
				if over {
					return fmt.Errorf("the upstream's answers exceed the snapshot limit of bytes read (raise it with --max-snapshot-bytes)")
				}
				if err := answers.write(file(k), b); err != nil {
					return failed(ReasonStore, err)
				}
				mu.Lock()
				have[k] = true
				mu.Unlock()
				return nil
			})
		}
		return g.Wait()
	}
	// First en-US (or all) of every catalog; then, per locale, only the catalogs
	// the upstream has: a catalog it lacks costs one request, not 18. Only
	// en-US skins are authoritative; language=all has no locres/all.
	first := []key{{skinsPath, lead}, {locresPath, "en-US"}}
	for _, cat := range cats {
		first = append(first, key{cat.Name(), lead})
	}
	if err := fetchAll(first); err != nil {
		return nil, err
	}
	var rest []key
	for _, k := range first[1:] {
		others := langs
		if k.name == locresPath {
			others = catalog.Locales[:]
		}
		if have[k] {
			for _, lang := range others {
				if lang != k.lang {
					rest = append(rest, key{k.name, lang})
				}
			}
		}
	}
	total = len(first) + len(rest) + 1
	if err := fetchAll(rest); err != nil {
		return nil, err
	}
	if progress != nil {
		progress("fetch", total, total)
	}

	// read is an answer as sent, removed from the spool once read: the
	// snapshot's files replace the answers, so the fetch's disk use stays
	// about the version's size.
	read := func(k key) ([]byte, bool, error) {
		if !have[k] {
			return nil, false, nil
		}
		p := filepath.Join(answers.dir, file(k))
		b, err := os.ReadFile(p)
		if err != nil {
			return nil, false, failed(ReasonStore, fmt.Errorf("spool: %w", err))
		}
		_ = os.Remove(p)
		return b, true, nil
	}
	// localized gives one catalog's answer per locale; from language=all, one
	// per locale picked from the one answer, decoded once.
	localized := func(name string) (func(lang string) ([]byte, bool, error), error) {
		if !all {
			return func(lang string) ([]byte, bool, error) { return read(key{name, lang}) }, nil
		}
		b, ok, err := read(key{name, "all"})
		if err != nil || !ok {
			return func(string) ([]byte, bool, error) { return nil, false, nil }, err
		}
		data, err := envelope.Decode(b)
		if err != nil {
			return nil, fmt.Errorf("%s?language=all: %w", name, err)
		}
		return func(lang string) ([]byte, bool, error) {
			lb, err := envelope.Marshal(upstream.PickLocale(data, lang, catalog.Locales[:]))
			return lb, err == nil, err
		}, nil
	}

	for _, cat := range cats {
		byLang, err := localized(cat.Name())
		if err != nil {
			return nil, err
		}
		en, ok, err := byLang("en-US")
		if err != nil {
			return nil, err
		}
		if !ok {
			f.lacking = append(f.lacking, cat.Name())
			continue
		}
		raw := en // partials compare like with like: each locale's answer of this endpoint
		if cat == catalog.Weapons {
			skins, err := localized(skinsPath)
			if err != nil {
				return nil, err
			}
			sb, ok, err := skins("en-US")
			if err != nil {
				return nil, err
			}
			if ok {
				wb, notes, err := pipeline.WeaponsWithSkins(en, sb)
				if err != nil {
					return nil, err
				}
				en = wb
				f.notes = append(f.notes, notes...)
			}
		}
		if err := snap.write(path.Join("en-US", cat.File()), en); err != nil {
			return nil, failed(ReasonStore, err)
		}
		tr := &translator{en: raw}
		var untranslated []string
		for _, lang := range catalog.Locales {
			if lang == "en-US" {
				continue
			}
			lb, ok, err := byLang(lang)
			if err != nil {
				return nil, err
			}
			if !ok {
				untranslated = append(untranslated, lang)
				continue
			}
			p, err := tr.partialFile(lb)
			if err != nil {
				return nil, fmt.Errorf("%s in %s: %w", cat.Name(), lang, err)
			}
			if p != nil {
				if err := snap.write(path.Join(lang, cat.File()), p); err != nil {
					return nil, failed(ReasonStore, err)
				}
			}
		}
		if len(untranslated) > 0 {
			f.notes = append(f.notes, fmt.Sprintf("%s: the upstream has no %v (404); en-US text is served there", cat.Name(), untranslated))
		}
	}
	if have[key{locresPath, "en-US"}] {
		for _, lang := range catalog.Locales {
			b, ok, err := read(key{locresPath, lang})
			if err != nil {
				return nil, err
			}
			if ok {
				if err := snap.write(path.Join("locres", lang+".json"), b); err != nil {
					return nil, failed(ReasonStore, err)
				}
			}
		}
	} else {
		f.lacking = append(f.lacking, "locres")
	}
	sort.Strings(f.lacking)
	f.contentHash, f.bytes = catalog.ContentHash(snap.sums), snap.bytes
	return f, nil
}
