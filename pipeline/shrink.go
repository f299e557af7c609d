package pipeline

import (
	"fmt"

	"github.com/refdata/refdata/catalog"
)

// shrinkage is the shrink guard: one problem per catalog that the new edition
// empties, or from which it removes more than limit of the active edition's items.
// A valid but gutted snapshot is what an upstream outage looks like, and
// publishing it would tell every client to delete its data.
func shrinkage(old, next catalog.Items, limit float64) []catalog.Problem {
	var ps []catalog.Problem
	for _, c := range catalog.Categories() {
		before := old.UUIDs(c)
		if len(before) == 0 {
			continue
		}
		after := next.UUIDs(c)
		kept := make(map[catalog.UUID]bool, len(after))
		for _, u := range after {
			kept[u] = true
		}
		removed := 0
		for _, u := range before {
			if !kept[u] {
				removed++
			}
		}
		share := float64(removed) / float64(len(before))
		switch {
		case len(after) == 0:
			ps = append(ps, catalog.Problem{File: c.Name(), Reason: fmt.Sprintf("emptied: %d items → 0", len(before))})
		case share > limit:
			ps = append(ps, catalog.Problem{File: c.Name(), Reason: fmt.Sprintf("removes %d of %d items (%.0f%%, more than the %.0f%% allowed): %d → %d",
				removed, len(before), share*100, limit*100, len(before), len(after))})
		}
	}
	return ps
}
