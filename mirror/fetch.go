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
func fetchSnapshot(ctx context.Context, c *upstream.Client, v *upstream.Version, all bool, budget int64, progress func(step string, done, total int)) (*fetched, error) {
	orDefault(&budget, pipeline.DefaultMaxSnapshotBytes)
	if v == nil || v.Body == nil {
		var err error
		if v, err = c.Version(ctx, ""); err != nil {
			return nil, fetchFailed(fmt.Errorf("version: %w", err))
		}
	}
	f := &fetched{files: map[string][]byte{"version.json": v.Body}, manifestID: v.ManifestID, etag: v.ETag}
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

	// bodies[name][lang] as sent; a catalog is lacking when en-US (or all) is 404.
	type key struct{ name, lang string }
	var mu sync.Mutex
	bodies := map[key][]byte{}
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
				defer mu.Unlock()
				if budget -= int64(len(b)); budget < 0 {
					return fmt.Errorf("the upstream's answers exceed the snapshot limit of bytes read (raise it with --max-snapshot-bytes)")
				}
				bodies[k] = b
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
		if _, ok := bodies[k]; ok {
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

	// Per-locale answers for one catalog; from language=all, one per locale picked.
	localized := func(name string) (map[string][]byte, error) {
		out := map[string][]byte{}
		if !all {
			for _, lang := range langs {
				if b, ok := bodies[key{name, lang}]; ok {
					out[lang] = b
				}
			}
			return out, nil
		}
		b, ok := bodies[key{name, "all"}]
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

	for _, cat := range cats {
		byLang, err := localized(cat.Name())
		if err != nil {
			return nil, err
		}
		en, ok := byLang["en-US"]
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
			if sb, ok := skins["en-US"]; ok {
				wb, notes, err := pipeline.WeaponsWithSkins(en, sb)
				if err != nil {
					return nil, err
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
				return nil, fmt.Errorf("%s in %s: %w", cat.Name(), lang, err)
			}
			if p != nil {
				f.files[path.Join(lang, cat.File())] = p
			}
		}
		if len(untranslated) > 0 {
			f.notes = append(f.notes, fmt.Sprintf("%s: the upstream has no %v (404); en-US text is served there", cat.Name(), untranslated))
		}
	}
	if _, ok := bodies[key{locresPath, "en-US"}]; ok {
		for _, lang := range catalog.Locales {
			if b, ok := bodies[key{locresPath, lang}]; ok {
				f.files[path.Join("locres", lang+".json")] = b
			}
		}
	} else {
		f.lacking = append(f.lacking, "locres")
	}
	sort.Strings(f.lacking)
	f.contentHash = catalog.FilesHash(f.files)
	return f, nil
}
