package main

import (
	"context"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/refdata/refdata/fixtures"
	"github.com/refdata/refdata/store"
	"github.com/refdata/refdata/upstream/upstreamtest"
)

// TestSyncActivateForce: the commands as main wires them. sync --once twice
// (14, then 15), activate 14 (a rollback: /v1/diff/latest then compares 15 →
// 14), a sync that finds 15 unchanged leaves the rollback alone, and
// import --force of the stored 15 re-publishes it.
func TestSyncActivateForce(t *testing.T) {
	var vs []upstreamtest.Version
	for _, dir := range fixtures.Versions() {
		v, err := upstreamtest.FromSnapshot(fixtures.FS, dir)
		if err != nil {
			t.Fatal(err)
		}
		vs = append(vs, v)
	}
	up := upstreamtest.New(vs...)
	hs := httptest.NewServer(up)
	defer hs.Close()
	data := t.TempDir()
	cmd := func(want int, args ...string) string {
		t.Helper()
		var out, errOut strings.Builder
		if got := run(context.Background(), args, &out, &errOut); got != want {
			t.Fatalf("refdata %v: exit %d, want %d\n%s%s", args, got, want, out.String(), errOut.String())
		}
		return out.String()
	}
	active := func() store.Pointer {
		st, _ := store.Open(data)
		p, _, err := st.Active()
		if err != nil {
			t.Fatal(err)
		}
		return p
	}
	id14, id15 := vs[0].Name, vs[1].Name
	sync := []string{"sync", "--from", hs.URL, "--data", data, "--once", "--contact", "https://example.org/ops"}
	if out := cmd(0, sync...); !strings.Contains(out, "published "+id14) {
		t.Fatalf("first sync: %s", out)
	}
	up.Publish(1)
	cmd(0, sync...)
	if p := active(); p.ManifestID != id15 || p.Previous != id14 {
		t.Fatalf("after syncing 15: %+v", p)
	}
	cmd(0, "activate", "--data", data, id14)
	if p := active(); p.ManifestID != id14 || p.Previous != id15 {
		t.Fatalf("after activate: %+v, want %s with previous %s", p, id14, id15)
	}
	st, _ := store.Open(data)
	if _, err := st.ReadDiff(id15, id14); err != nil {
		t.Fatalf("no diff 15 → 14 for /v1/diff/latest: %v", err)
	}
	if out := cmd(0, sync...); !strings.Contains(out, "unchanged") {
		t.Fatalf("sync after a rollback: %s", out)
	}
	if p := active(); p.ManifestID != id14 {
		t.Fatalf("a sync undid the rollback: %+v", p)
	}
	cmd(1, "activate", "--data", data, "0123456789ABCDEF")
	cmd(1, "activate", "--data", data, "../etc")

	// import --force of the stored 15 (an export-like copy of its directory).
	if out := cmd(0, "import", "--data", data, st.Dir()+"/versions/"+id15); !strings.Contains(out, "already stored") {
		t.Fatalf("import of a stored version: %s", out)
	}
	cmd(0, "import", "--force", "--data", data, st.Dir()+"/versions/"+id15)
	if p := active(); p.ManifestID != id15 {
		t.Fatalf("import --force did not re-publish 15: %+v", p)
	}
}
