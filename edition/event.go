package edition

import (
	"encoding/json"
	"fmt"

	"github.com/refdata/refdata/gen"
	"github.com/refdata/refdata/representation"
)

// Event renders the Server-Sent Event of ed's activation (/v1/version/stream),
// with the counts of latest, /v1/diff/latest's body, when it leads to ed.
func Event(ed *Edition, latest *representation.Body) []byte {
	v := gen.VersionEvent{ManifestId: ed.ManifestID, Version: ed.Version.Version}
	var d struct {
		Data struct {
			FromVersion, ToVersion string
			Summary                gen.DiffSummary
			Categories             map[string]struct{ Added, Removed, Changed []json.RawMessage }
		}
	}
	var b []byte
	if latest != nil {
		b, _ = latest.JSON() // a diff a server made, in memory
	}
	if b != nil && json.Unmarshal(b, &d) == nil && d.Data.ToVersion == ed.ManifestID {
		v.Diff = &gen.VersionEventDiff{FromVersion: d.Data.FromVersion, Summary: d.Data.Summary, Categories: map[string]gen.DiffCount{}}
		for name, c := range d.Data.Categories {
			if n := (gen.DiffCount{Added: len(c.Added), Removed: len(c.Removed), Changed: len(c.Changed)}); n != (gen.DiffCount{}) {
				v.Diff.Categories[name] = n
			}
		}
	}
	data, _ := json.Marshal(v) // of strings and numbers: cannot fail
	return fmt.Appendf(nil, "id: %s\nevent: version\ndata: %s\n\n", ed.ManifestID, data)
}
