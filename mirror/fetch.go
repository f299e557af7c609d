package mirror

import (
	"context"
	"errors"
	"fmt"
	"path"
	"sort"
	"sync"
	"sync/atomic"

	"golang.org/x/sync/errgroup"

	"github.com/refdata/refdata/catalog"
	"github.com/refdata/refdata/envelope"
	"github.com/refdata/refdata/pipeline"
	"github.com/refdata/refdata/upstream"
)

// fetched is one snapshot as answered by the upstream, in the snapshot layout.
type fetched struct {
	files       map[string][]byte
	manifestID  string
	etag        string
	contentHash string   // catalog.ContentHash of files
	lacking     []string // catalogs the upstream answers 404 for
	notes       []string
}

// skinsPath is the endpoint whose skins are authoritative over the copies
// nested in /v1/weapons (the capture rule, docs/pipeline.md).
const skinsPath = "weapons/skins"

// locresPath stands for /v1/locres/{locale}, the string tables only another
// refdata serves.
const locresPath = "locres"

// fetchSnapshot fetches the version record (unless v, just read, has its body)
// and every catalog in every locale: with ?language=all when all is set, else
// one request per locale; progress is told each answer. The answers are held
// until the snapshot is built, so together they may not exceed budget (the
// import's --max-snapshot-bytes; 0: its default).
func fetchSnapshot(ctx context.Context, c *upstream.Client, v *upstream.Version, all bool, budget int64, progress func(done, total int)) (*fetched, error) {
	orDefault(&budget, pipeline.DefaultMaxSnapshotBytes)
	if v == nil || v.Body == nil {
		var err error
		if v, err = c.Version(ctx, ""); err != nil {
			return nil, fetchFailed(fmt.Errorf("version: %w", err))
		}
	}
	f := &fetched{files: map[string][]byte{"version.json": v.Body}, manifestID: v.ManifestID, etag: v.ETag}
	lead, langs := "en-US", catalog.Locales[:]
	if all {
		lead, langs = "all", []string{"all"}
	}
	fe := &fetcher{c: c, budget: budget, progress: progress, answers: answers{}}
	if err := fe.fetchAll(ctx, lead, langs); err != nil {
		return nil, err
	}
	for _, cat := range catalog.SourceCategories() {
		if err := f.addCatalog(cat, fe.answers, all, langs); err != nil {
			return nil, err
		}
	}
	f.addTables(fe.answers)
	sort.Strings(f.lacking)
	f.contentHash = catalog.FilesHash(f.files)
	return f, nil
}

// answerKey names one answer of the upstream: a catalog's, or the string
// tables' (locresPath), in a language.
type answerKey struct{ name, lang string }

// answers are the upstream's answers as sent; a catalog is lacking when its
// en-US (or all) answer is not there (404).
type answers map[answerKey][]byte

// fetcher fetches answers at once, within budget bytes in all, telling
// progress of each.
type fetcher struct {
	c        *upstream.Client
	progress func(done, total int)
	total    int // an estimate until the first round is in
	done     atomic.Int64

	mu      sync.Mutex // guards budget and answers while fetching
	budget  int64
	answers answers
}

func (fe *fetcher) tick() {
	if fe.progress != nil {
		fe.progress(int(fe.done.Add(1)), fe.total)
	}
}

// fetchAll fetches lead (en-US or all) of every catalog and the string
// tables first; then, per locale, only the catalogs the upstream has: a
// catalog it lacks costs one request, not 18. Only en-US skins are
// authoritative; language=all has no locres/all.
func (fe *fetcher) fetchAll(ctx context.Context, lead string, langs []string) error {
	cats := catalog.SourceCategories()
	fe.total = (len(cats)+1)*len(langs) + 1
	fe.tick() // the version record
	first := []answerKey{{skinsPath, lead}, {locresPath, "en-US"}}
	for _, cat := range cats {
		first = append(first, answerKey{cat.Name(), lead})
	}
	if err := fe.fetch(ctx, first); err != nil {
		return err
	}
	var rest []answerKey
	for _, k := range first[1:] {
		others := langs
		if k.name == locresPath {
			others = catalog.Locales[:]
		}
		if _, ok := fe.answers[k]; ok {
			for _, lang := range others {
				if lang != k.lang {
					rest = append(rest, answerKey{k.name, lang})
				}
			}
		}
	}
	fe.total = len(first) + len(rest) + 1
	if err := fe.fetch(ctx, rest); err != nil {
		return err
	}
	if fe.progress != nil {
		fe.progress(fe.total, fe.total)
	}
	return nil
}

// fetch fetches reqs at once into fe.answers; one the upstream lacks (404)
// is left out.
func (fe *fetcher) fetch(ctx context.Context, reqs []answerKey) error {
	g, gctx := errgroup.WithContext(ctx)
	for _, k := range reqs {
		g.Go(func() error {
			var b []byte
			var err error
			if k.name == locresPath {
				b, err = fe.c.Table(gctx, k.lang)
			} else {
				b, err = fe.c.Catalog(gctx, k.name, k.lang)
			}
			fe.tick()
			if errors.Is(err, upstream.ErrNoCatalog) {
				return nil
			}
			if err != nil {
				return fetchFailed(err)
			}
			fe.mu.Lock()
			defer fe.mu.Unlock()
			if fe.budget -= int64(len(b)); fe.budget < 0 {
				return fmt.Errorf("the upstream's answers exceed the snapshot limit of bytes read (raise it with --max-snapshot-bytes)")
			}
			fe.answers[k] = b
			return nil
		})
	}
	return g.Wait()
}

// localized is one catalog's answer per locale: as answered in each of
// langs, or, from language=all (all), one per locale picked.
func (a answers) localized(name string, all bool, langs []string) (map[string][]byte, error) {
	out := map[string][]byte{}
	if !all {
		for _, lang := range langs {
			if b, ok := a[answerKey{name, lang}]; ok {
				out[lang] = b
			}
		}
		return out, nil
	}
	b, ok := a[answerKey{name, "all"}]
	if !ok {
		return out, nil
	}
	data, err := envelope.Decode(b)
	if err != nil {
		return nil, fmt.Errorf("%s?language=all: %w", name, err)
	}
	for _, lang := range catalog.Locales {
		lb, err := envelope.Marshal(upstream.PickLocale(data, lang, catalog.Locales[:]))
		if err != nil {
			return nil, err
		}
		out[lang] = lb
	}
	return out, nil
}

// addCatalog adds a catalog's files from its answers (localized): the en-US
// file, the weapons' with the skins' answer authoritative over their nested
// copies, and each other locale's partial file; a catalog without an en-US
// answer is lacking.
func (f *fetched) addCatalog(cat catalog.Category, a answers, all bool, langs []string) error {
	byLang, err := a.localized(cat.Name(), all, langs)
	if err != nil {
		return err
	}
	en, ok := byLang["en-US"]
	if !ok {
		f.lacking = append(f.lacking, cat.Name())
		return nil
	}
	raw := en // partials compare like with like: each locale's answer of this endpoint
	if cat == catalog.Weapons {
		skins, err := a.localized(skinsPath, all, langs)
		if err != nil {
			return err
		}
		if sb, ok := skins["en-US"]; ok {
			wb, notes, err := pipeline.WeaponsWithSkins(en, sb)
			if err != nil {
				return err
			}
			en = wb
			f.notes = append(f.notes, notes...)
		}
	}
	f.files[path.Join("en-US", cat.File())] = en
	tr := &translator{en: raw}
	var untranslated []string
	for _, lang := range catalog.Locales {
		if lang == "en-US" {
			continue
		}
		lb, ok := byLang[lang]
		if !ok {
			untranslated = append(untranslated, lang)
			continue
		}
		p, err := tr.partialFile(lb)
		if err != nil {
			return fmt.Errorf("%s in %s: %w", cat.Name(), lang, err)
		}
		if p != nil {
			f.files[path.Join(lang, cat.File())] = p
		}
	}
	if len(untranslated) > 0 {
		f.notes = append(f.notes, fmt.Sprintf("%s: the upstream has no %v (404); en-US text is served there", cat.Name(), untranslated))
	}
	return nil
}

// addTables adds the string tables the upstream answered; they are lacking
// without en-US.
func (f *fetched) addTables(a answers) {
	if _, ok := a[answerKey{locresPath, "en-US"}]; !ok {
		f.lacking = append(f.lacking, "locres")
		return
	}
	for _, lang := range catalog.Locales {
		if b, ok := a[answerKey{locresPath, lang}]; ok {
			f.files[path.Join("locres", lang+".json")] = b
		}
	}
}
