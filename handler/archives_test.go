package handler

import (
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/refdata/refdata/edition"
)

// countingExporter hands out one small file per version and counts the reads.
type countingExporter struct {
	mu    sync.Mutex
	reads map[string]int
}

func (c *countingExporter) Snapshot(id string) (*edition.Snapshot, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.reads[id]++
	return &edition.Snapshot{ManifestID: id, Files: map[string][]byte{"version.json": []byte(`{"manifestId":"` + id + `"}`)}}, nil
}

// TestArchivesKeepTheLastTwo: an archive is made once however many ask for it,
// and the server keeps only the keepArchives asked for last (a third evicts the
// one asked for longest ago, so memory stays bounded).
func TestArchivesKeepTheLastTwo(t *testing.T) {
	t.Parallel()
	ex := &countingExporter{reads: map[string]int{}}
	var a archives
	fetch := func(id string) *archive {
		if arc := a.get(id); arc != nil {
			return arc
		}
		arc, err := a.make(ex, id, id)
		if err != nil {
			t.Fatal(err)
		}
		return arc
	}
	var wg sync.WaitGroup
	got := make([]*archive, 8)
	for i := range got {
		wg.Add(1)
		go func() { defer wg.Done(); got[i] = fetch("AAAAAAAAAAAAAAAA") }()
	}
	wg.Wait()
	for _, arc := range got[1:] {
		if arc != got[0] {
			t.Fatal("concurrent exports of one version got different archives")
		}
	}
	if n := ex.reads["AAAAAAAAAAAAAAAA"]; n != 1 {
		t.Fatalf("8 concurrent exports read the version %d times, want once", n)
	}
	if a.get("aaaaaaaaaaaaaaaa") != got[0] {
		t.Error("the archive is not found by its manifest ID in lower case")
	}
	fetch("BBBBBBBBBBBBBBBB")
	fetch("AAAAAAAAAAAAAAAA") // asked for again: now the newer of the two
	fetch("CCCCCCCCCCCCCCCC") // evicts B, asked for longest ago
	if len(a.recent) != keepArchives {
		t.Fatalf("%d archives kept, want %d", len(a.recent), keepArchives)
	}
	var kept []string
	for _, arc := range a.recent {
		kept = append(kept, arc.manifestID)
	}
	if want := "CCCCCCCCCCCCCCCC AAAAAAAAAAAAAAAA"; strings.Join(kept, " ") != want {
		t.Errorf("kept %s, want %s", kept, want)
	}
	fetch("BBBBBBBBBBBBBBBB")
	if got, want := fmt.Sprint(ex.reads), "map[AAAAAAAAAAAAAAAA:1 BBBBBBBBBBBBBBBB:2 CCCCCCCCCCCCCCCC:1]"; got != want {
		t.Errorf("reads %s, want %s", got, want)
	}
}
