package refdata_test

import (
	"bufio"
	"os"
	"os/exec"
	"slices"
	"strings"
	"testing"
)

const module = "github.com/refdata/refdata"

// TestDependencyDirection holds every package's imports of this module to the
// graph written in docs/architecture.md: an import the graph does not allow, or
// a package it does not name, fails.
func TestDependencyDirection(t *testing.T) {
	allowed := readGraph(t, "docs/architecture.md")
	out, err := exec.Command("go", "list", "-f", `{{.ImportPath}}{{range .Imports}} {{.}}{{end}}`, "./...").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	seen := 0
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		fields := strings.Fields(line)
		pkg := short(fields[0])
		deps, ok := allowed[pkg]
		if !ok {
			t.Errorf("package %s is not in docs/architecture.md: say what it owns and may import", pkg)
			continue
		}
		seen++
		for _, imp := range fields[1:] {
			if imp != module && !strings.HasPrefix(imp, module+"/") {
				continue
			}
			if !slices.Contains(deps, short(imp)) {
				t.Errorf("%s imports %s, which docs/architecture.md does not allow", pkg, short(imp))
			}
		}
	}
	if seen < 10 {
		t.Errorf("only %d packages checked", seen)
	}
}

func short(importPath string) string {
	if importPath == module {
		return "."
	}
	return strings.TrimPrefix(importPath, module+"/")
}

// readGraph parses the ```deps block: "pkg: dep dep …", text in parentheses
// being a comment.
func readGraph(t *testing.T, name string) map[string][]string {
	t.Helper()
	f, err := os.Open(name)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	graph := map[string][]string{}
	in := false
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		switch {
		case line == "```deps":
			in = true
		case in && line == "```":
			in = false
		case in && line != "":
			pkg, deps, ok := strings.Cut(line, ":")
			if !ok {
				t.Fatalf("%s: %q is not pkg: deps", name, line)
			}
			if i := strings.Index(deps, "("); i >= 0 {
				deps = deps[:i]
			}
			graph[strings.TrimSpace(pkg)] = strings.Fields(deps)
		}
	}
	if len(graph) == 0 {
		t.Fatalf("%s has no deps block", name)
	}
	return graph
}
