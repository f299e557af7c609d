// Command synth18 writes a SYNTHETIC 18-locale variant of a snapshot, for measuring
// memory and start-up with every locale translated (BENCHMARKS.md). Every text
// field of every item gets a translation in each of the 17 other locales: the
// en-US text with a locale marker, so every localized body differs from en-US.
// The output is marked synthetic and is not sample data; do not ship it.
//
// With -scale K every catalog has K times the items: each item of the source
// and K-1 copies of it, whose own UUIDs (and the references to them inside
// the copy) are fresh, derived from the original's so that two versions
// scaled alike keep their items' identities and their diff (the public API
// has about four times the sample's items today).
//
//	go run ./tools/synth18 -from fixtures/versions/15_… -out /tmp/synth18
//	go run ./tools/synth18 -scale 4 -from fixtures/versions/14_… -out /tmp/s4-14
package main

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"flag"
	"fmt"
	"io/fs"
	"log"
	"os"
	"path/filepath"

	"github.com/refdata/refdata/catalog"
)

// textFields are the localized fields of the contract.
var textFields = map[string]bool{
	"displayName": true, "displayNameSingular": true, "shortDisplayName": true,
	"description": true, "titleText": true, "tierName": true, "divisionName": true,
	"categoryText": true, "narrativeDescription": true, "tacticalDescription": true,
	"regionName": true, "superRegionName": true,
}

func main() {
	from := flag.String("from", "", "snapshot directory to translate (snapshot layout)")
	out := flag.String("out", "", "directory to write the synthetic snapshot to")
	scale := flag.Int("scale", 1, "K: every catalog gets K times the items, the copies with fresh UUIDs")
	flag.Parse()
	if *from == "" || *out == "" || *scale < 1 {
		log.Fatal("usage: synth18 [-scale K] -from SNAPSHOT -out DIR")
	}
	if err := run(*from, *out, *scale); err != nil {
		log.Fatal(err)
	}
}

func run(from, out string, scale int) error {
	// Copy the en-US snapshot as it is; the original's partial translations are replaced.
	if err := filepath.WalkDir(from, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, _ := filepath.Rel(from, path)
		if len(rel) > 5 && rel[:5] != "en-US" && rel != "version.json" && rel[:6] != "locres" {
			return nil
		}
		if len(rel) > 5 && rel[:5] == "en-US" && scale > 1 {
			return nil // written scaled below
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		return write(filepath.Join(out, rel), b)
	}); err != nil {
		return fmt.Errorf("copy %s: %w", from, err)
	}
	for _, c := range catalog.SourceCategories() {
		raw, err := os.ReadFile(filepath.Join(from, "en-US", c.File()))
		if err != nil {
			return err
		}
		var env struct{ Data []any }
		if err := json.Unmarshal(raw, &env); err != nil {
			return fmt.Errorf("%s: %w", c.File(), err)
		}
		if scale > 1 {
			env.Data = scaled(env.Data, scale)
			b, err := json.Marshal(map[string]any{"status": 200, "data": env.Data})
			if err != nil {
				return err
			}
			if err := write(filepath.Join(out, "en-US", c.File()), b); err != nil {
				return err
			}
		}
		for _, loc := range catalog.Locales {
			if loc == "en-US" {
				continue
			}
			items := make([]any, len(env.Data))
			for i, it := range env.Data {
				items[i] = translate(it, loc)
			}
			b, err := json.Marshal(items)
			if err != nil {
				return err
			}
			if err := write(filepath.Join(out, loc, c.File()), b); err != nil {
				return err
			}
		}
	}
	return write(filepath.Join(out, "SYNTHETIC.md"), []byte("Synthetic 18-locale variant made by tools/synth18 for measurements. Not real data; not sample data.\n"))
}

func write(path string, b []byte) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	return os.WriteFile(path, b, 0o644)
}

// translate copies an item, marking every text field with the locale.
func translate(v any, loc string) any {
	switch x := v.(type) {
	case map[string]any:
		m := make(map[string]any, len(x))
		for k, vv := range x {
			if s, ok := vv.(string); ok && textFields[k] && s != "" {
				m[k] = s + " [" + loc + "]"
				continue
			}
			m[k] = translate(vv, loc)
		}
		return m
	case []any:
		s := make([]any, len(x))
		for i, vv := range x {
			s[i] = translate(vv, loc)
		}
		return s
	default:
		return v
	}
}

// scaled is items followed by scale-1 copies of each, in that order.
func scaled(items []any, scale int) []any {
	out := append(make([]any, 0, len(items)*scale), items...)
	for k := 1; k < scale; k++ {
		for _, it := range items {
			own := map[string]string{}
			ownUUIDs(it, own)
			for u := range own {
				own[u] = freshUUID(u, k)
			}
			out = append(out, renamed(it, own, k))
		}
	}
	return out
}

// ownUUIDs collects the values of the "uuid" fields inside v.
func ownUUIDs(v any, into map[string]string) {
	switch x := v.(type) {
	case map[string]any:
		for k, vv := range x {
			if s, ok := vv.(string); ok && k == "uuid" {
				into[s] = ""
			}
			ownUUIDs(vv, into)
		}
	case []any:
		for _, vv := range x {
			ownUUIDs(vv, into)
		}
	}
}

// renamed copies v with the UUIDs of rename replaced and its names marked
// with the copy's number, so copies do not share their text.
func renamed(v any, rename map[string]string, k int) any {
	switch x := v.(type) {
	case map[string]any:
		m := make(map[string]any, len(x))
		for key, vv := range x {
			if s, ok := vv.(string); ok {
				if r, ok := rename[s]; ok {
					m[key] = r
					continue
				}
				if textFields[key] && s != "" {
					m[key] = fmt.Sprintf("%s %d", s, k+1)
					continue
				}
			}
			m[key] = renamed(vv, rename, k)
		}
		return m
	case []any:
		s := make([]any, len(x))
		for i, vv := range x {
			s[i] = renamed(vv, rename, k)
		}
		return s
	default:
		return v
	}
}

// freshUUID is copy k's UUID for u: the same for every version scaled alike.
func freshUUID(u string, k int) string {
	sum := sha256.Sum256([]byte(fmt.Sprintf("%s#%d", u, k)))
	h := hex.EncodeToString(sum[:16])
	return h[0:8] + "-" + h[8:12] + "-" + h[12:16] + "-" + h[16:20] + "-" + h[20:32]
}
