package follow_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/refdata/refdata/catalog"
	"github.com/refdata/refdata/upstream/upstreamtest"
)

// fromCaptures makes one stand-in version per capture directory (NN_*) under
// root, in order: each file served as it is, in every locale (the captures
// are en-US only), at the path its name gives (skins.json at
// /v1/weapons/skins, agents.json at /v1/agents).
func fromCaptures(t *testing.T, root string) []upstreamtest.Version {
	t.Helper()
	dirs, _ := filepath.Glob(filepath.Join(root, "[0-9][0-9]_*"))
	var vs []upstreamtest.Version
	for _, dir := range dirs {
		entries, err := os.ReadDir(dir)
		if err != nil {
			t.Fatalf("read capture %s: %v", dir, err)
		}
		v := upstreamtest.Version{Catalogs: map[string]map[string][]byte{}}
		for _, e := range entries {
			name := e.Name()
			if e.IsDir() || !strings.HasSuffix(name, ".json") {
				continue
			}
			b, err := os.ReadFile(filepath.Join(dir, name))
			if err != nil {
				t.Fatal(err)
			}
			if name == "version.json" {
				v.Record = b
				continue
			}
			v.Catalogs[capturePath(name)] = map[string][]byte{"*": b}
		}
		if v.Record == nil {
			t.Fatalf("capture %s has no version.json", dir)
		}
		v.Name = catalog.ManifestIDOf(v.Record)
		vs = append(vs, v)
	}
	return vs
}

func capturePath(file string) string {
	base := strings.TrimSuffix(file, ".json")
	switch base {
	case "skins", "skinchromas", "skinlevels":
		return "weapons/" + base
	}
	for _, c := range catalog.SourceCategories() {
		if c.File() == file {
			return c.Name()
		}
	}
	return strings.ReplaceAll(base, "-", "/")
}
