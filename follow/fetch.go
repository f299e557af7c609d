package follow

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
	ft := &fetcher{
		c: c, all: all, budget: budget, progress: progress,
		answers: &spool{dir: filepath.Join(root, "answers"), sums: map[string]string{}},
		snap:    &spool{dir: f.dir, sums: map[string]string{}},
		have:    map[answerKey]bool{},
		out:     f,
	}
	if err := ft.snap.write("version.json", v.Body); err != nil {
		return nil, failed(ReasonStore, err)
	}
	cats := catalog.SourceCategories()
	if err := ft.fetchAnswers(ctx, cats); err != nil {
		return nil, err
	}
	for _, cat := range cats {
		if err := ft.writeCatalog(cat); err != nil {
			return nil, err
		}
	}
	if err := ft.writeLocres(); err != nil {
		return nil, err
	}
	sort.Strings(f.lacking)
	f.contentHash, f.bytes = catalog.ContentHash(ft.snap.sums), ft.snap.bytes
	return f, nil
}

// answerKey is an answer on disk by endpoint and language; a catalog is
// lacking when en-US (or all) is 404.
type answerKey struct{ name, lang string }

func (k answerKey) file() string {
	return strings.ReplaceAll(k.name, "/", "-") + "." + k.lang + ".json"
}

// fetcher is one fetchSnapshot under way: it spools the upstream's answers,
// then turns them into the snapshot's files in out.
type fetcher struct {
	c        *upstream.Client
	all      bool // ?language=all
	progress func(step string, done, total int)
	answers  *spool // as sent, removed once read
	snap     *spool // the snapshot's files
	out      *fetched

	done  atomic.Int64
	total int // set between rounds, read by their requests

	mu     sync.Mutex
	budget int64 // bytes the answers may still take
	have   map[answerKey]bool
}

func (ft *fetcher) tick() {
	if ft.progress != nil {
		ft.progress("fetch", int(ft.done.Add(1)), ft.total)
	}
}

// fetchAnswers spools every answer of the snapshot. First en-US (or all) of
// every catalog; then, per locale, only the catalogs the upstream has: a
// catalog it lacks costs one request, not 18. Only en-US skins are
// authoritative; language=all has no locres/all.
func (ft *fetcher) fetchAnswers(ctx context.Context, cats []catalog.Category) error {
	lead, langs := "en-US", catalog.Locales[:]
	if ft.all {
		lead, langs = "all", []string{"all"}
	}
	ft.total = (len(cats)+1)*len(langs) + 1 // an estimate until the first round is in
	ft.tick()
	first := []answerKey{{skinsPath, lead}, {locresPath, "en-US"}}
	for _, cat := range cats {
		first = append(first, answerKey{cat.Name(), lead})
	}
	if err := ft.fetchAll(ctx, first); err != nil {
		return err
	}
	var rest []answerKey
	for _, k := range first[1:] {
		others := langs
		if k.name == locresPath {
			others = catalog.Locales[:]
		}
		if ft.have[k] {
			for _, lang := range others {
				if lang != k.lang {
					rest = append(rest, answerKey{k.name, lang})
				}
			}
		}
	}
	ft.total = len(first) + len(rest) + 1
	if err := ft.fetchAll(ctx, rest); err != nil {
		return err
	}
	if ft.progress != nil {
		ft.progress("fetch", ft.total, ft.total)
	}
	return nil
}

// fetchAll requests reqs at once and spools each answer; a 404 is no answer.
func (ft *fetcher) fetchAll(ctx context.Context, reqs []answerKey) error {
	g, gctx := errgroup.WithContext(ctx)
	for _, k := range reqs {
		g.Go(func() error {
			var b []byte
			var err error
			if k.name == locresPath {
				b, err = ft.c.Table(gctx, k.lang)
			} else {
				b, err = ft.c.Catalog(gctx, k.name, k.lang)
			}
			ft.tick()
			if errors.Is(err, upstream.ErrNoCatalog) {
				return nil
			}
			if err != nil {
				return fetchFailed(err)
			}
			return ft.keep(k, b)
		})
	}
	return g.Wait()
}

// keep spools an answer within the budget.
func (ft *fetcher) keep(k answerKey, b []byte) error {
	ft.mu.Lock()
	ft.budget -= int64(len(b))
	over := ft.budget < 0
	ft.mu.Unlock()
	if over {
		return fmt.Errorf("the upstream's answers exceed the snapshot limit of bytes read (raise it with --max-snapshot-bytes)")
	}
	if err := ft.answers.write(k.file(), b); err != nil {
		return failed(ReasonStore, err)
	}
	ft.mu.Lock()
	ft.have[k] = true
	ft.mu.Unlock()
	return nil
}

// read is an answer as sent, removed from the spool once read: the
// snapshot's files replace the answers, so the fetch's disk use stays
// about the version's size.
func (ft *fetcher) read(k answerKey) ([]byte, bool, error) {
	if !ft.have[k] {
		return nil, false, nil
	}
	p := filepath.Join(ft.answers.dir, k.file())
	b, err := os.ReadFile(p)
	if err != nil {
		return nil, false, failed(ReasonStore, fmt.Errorf("spool: %w", err))
	}
	_ = os.Remove(p)
	return b, true, nil
}

// localized gives one catalog's answer per locale; from language=all, one
// per locale picked from the one answer, decoded once.
func (ft *fetcher) localized(name string) (func(lang string) ([]byte, bool, error), error) {
	if !ft.all {
		return func(lang string) ([]byte, bool, error) { return ft.read(answerKey{name, lang}) }, nil
	}
	b, ok, err := ft.read(answerKey{name, "all"})
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

// writeCatalog writes one catalog's snapshot files: en-US whole, each other
// locale as its partial; a catalog without en-US is lacking.
func (ft *fetcher) writeCatalog(cat catalog.Category) error {
	byLang, err := ft.localized(cat.Name())
	if err != nil {
		return err
	}
	en, ok, err := byLang("en-US")
	if err != nil {
		return err
	}
	if !ok {
		ft.out.lacking = append(ft.out.lacking, cat.Name())
		return nil
	}
	raw := en // partials compare like with like: each locale's answer of this endpoint
	if cat == catalog.Weapons {
		if en, err = ft.withSkins(en); err != nil {
			return err
		}
	}
	if err := ft.snap.write(path.Join("en-US", cat.File()), en); err != nil {
		return failed(ReasonStore, err)
	}
	tr := &translator{en: raw}
	var untranslated []string
	for _, lang := range catalog.Locales {
		if lang == "en-US" {
			continue
		}
		lb, ok, err := byLang(lang)
		if err != nil {
			return err
		}
		if !ok {
			untranslated = append(untranslated, lang)
			continue
		}
		p, err := tr.partialFile(lb)
		if err != nil {
			return fmt.Errorf("%s in %s: %w", cat.Name(), lang, err)
		}
		if p != nil {
			if err := ft.snap.write(path.Join(lang, cat.File()), p); err != nil {
				return failed(ReasonStore, err)
			}
		}
	}
	if len(untranslated) > 0 {
		ft.out.notes = append(ft.out.notes, fmt.Sprintf("%s: the upstream has no %v (404); en-US text is served there", cat.Name(), untranslated))
	}
	return nil
}

// withSkins is the en-US weapons answer with the skins of /v1/weapons/skins
// in place of its nested copies, when the upstream has that endpoint.
func (ft *fetcher) withSkins(en []byte) ([]byte, error) {
	skins, err := ft.localized(skinsPath)
	if err != nil {
		return nil, err
	}
	sb, ok, err := skins("en-US")
	if err != nil || !ok {
		return en, err
	}
	wb, notes, err := pipeline.WeaponsWithSkins(en, sb)
	if err != nil {
		return nil, err
	}
	ft.out.notes = append(ft.out.notes, notes...)
	return wb, nil
}

// writeLocres writes the string tables, lacking when en-US is 404.
func (ft *fetcher) writeLocres() error {
	if !ft.have[answerKey{locresPath, "en-US"}] {
		ft.out.lacking = append(ft.out.lacking, "locres")
		return nil
	}
	for _, lang := range catalog.Locales {
		b, ok, err := ft.read(answerKey{locresPath, lang})
		if err != nil {
			return err
		}
		if ok {
			if err := ft.snap.write(path.Join("locres", lang+".json"), b); err != nil {
				return failed(ReasonStore, err)
			}
		}
	}
	return nil
}
