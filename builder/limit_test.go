package builder_test

import (
	"io"
	"testing"

	"github.com/refdata/refdata/builder"
	"github.com/refdata/refdata/catalog"
	"github.com/refdata/refdata/fixtures"
)

type counter int64

func (c *counter) Write(b []byte) (int, error) { *c += counter(len(b)); return len(b), nil }

// partSize is the bytes of the part a child sends for files after prev.
func partSize(t *testing.T, files map[string][]byte, prev *catalog.Edition) (plan, part int64) {
	t.Helper()
	p := catalog.PlanBuild(files, prev)
	for _, b := range p.Files {
		plan += int64(len(b))
	}
	ed, err := catalog.BuildPart(p)
	if err != nil {
		t.Fatal(err)
	}
	var n counter
	if err := catalog.WritePart(io.Writer(&n), ed, p); err != nil {
		t.Fatal(err)
	}
	return plan, int64(n)
}

// TestPartLimit: the bound on what the server reads from a child leaves at
// least twice the room a whole version's part takes (no previous edition:
// every body new, gzip and language=all included), on the full sample data.
func TestPartLimit(t *testing.T) {
	if testing.Short() {
		t.Skip("the full sample data's ratio: make stress")
	}
	for _, v := range fixtures.Versions() {
		files, err := fixtures.Files(v, false)
		if err != nil {
			t.Fatal(err)
		}
		plan, part := partSize(t, files, nil)
		t.Logf("%s: plan %d bytes, part %d bytes (%.1f×)", v, plan, part, float64(part)/float64(plan))
		if 2*part > builder.PartLimit(plan) {
			t.Errorf("%s: a part of %d bytes for %d bytes of files; the limit is %d", v, part, plan, builder.PartLimit(plan))
		}
	}
}
