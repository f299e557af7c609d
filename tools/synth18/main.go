// Command synth18 writes a SYNTHETIC 18-locale variant of a snapshot, for measuring
// memory and start-up with every locale translated (BENCHMARKS.md). Every text
// field of every item gets a translation in each of the 17 other locales: the
// en-US text with a locale marker, so every localized body differs from en-US.
// The output is marked synthetic and is not sample data; do not ship it.
//
//	go run ./tools/synth18 -from fixtures/versions/15_… -out /tmp/synth18
package main

import (
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
	flag.Parse()
	if *from == "" || *out == "" {
		log.Fatal("usage: synth18 -from SNAPSHOT -out DIR")
	}
	if err := run(*from, *out); err != nil {
		log.Fatal(err)
	}
}

func run(from, out string) error {
	// Copy the en-US snapshot as it is; the original's partial translations are replaced.
	if err := filepath.WalkDir(from, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, _ := filepath.Rel(from, path)
		if len(rel) > 5 && rel[:5] != "en-US" && rel != "version.json" && rel[:6] != "locres" {
			return nil
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
