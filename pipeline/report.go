package pipeline

import (
	"fmt"
	"io"
	"maps"
	"slices"
	"strconv"
	"strings"

	"github.com/refdata/refdata/catalog"
	"github.com/refdata/refdata/gen"
)

// MaxListed caps each list of problems in a report; the counts stay exact.
const MaxListed = 25

// Report is what one import did and found.
type Report struct {
	Source     string
	Layout     Layout
	ManifestID string
	Version    string
	// Outcome is "published", "already stored", "rejected" or "failed".
	Outcome string

	Rejections    []catalog.Problem // capped at MaxListed
	NumRejections int
	// Unknown lists the fields openapi.yaml does not describe, once per
	// catalog and field: served as the upstream sent them, not an error.
	Unknown     []catalog.Unknown
	Repairs     []catalog.Problem // null array elements dropped
	NumRepairs  int
	Fills       map[catalog.Fill]int
	Notes       []string // carry-over, capture disagreements, fallbacks
	Ignored     []string // files the layout does not name
	CarriedOver []string // categories not in the snapshot: taken from CarriedFrom, else empty
	CarriedFrom string   // the version they were taken from; "" when there was none

	Previous string // the version diffed against
	Summary  *gen.DiffSummary
	// IndexBytes is the size of the edition index stored with the version;
	// StoredBytes, of the bodies it stored that no segment had (CopiedBytes
	// of them copied from segments the version mostly no longer needs).
	IndexBytes, StoredBytes, CopiedBytes int64
	Pruned                               []string
}

func (r *Report) note(format string, args ...any) {
	r.Notes = append(r.Notes, fmt.Sprintf(format, args...))
}

// count is "1 skin", "2 skins": a report says each count in its number.
func count(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return strconv.Itoa(n) + " " + noun + "s"
}

func capProblems(ps []catalog.Problem) []catalog.Problem {
	n := min(len(ps), MaxListed)
	return ps[:n:n]
}

// Write prints the report for people: outcome first, then every list with its
// count.
func (r *Report) Write(w io.Writer) {
	if r.Layout != "" {
		fmt.Fprintf(w, "import %s (%s layout): %s", r.Source, r.Layout, r.Outcome)
	} else {
		fmt.Fprintf(w, "import %s: %s", r.Source, r.Outcome)
	}
	if r.ManifestID != "" {
		fmt.Fprintf(w, " — manifestId %s", r.ManifestID)
		if r.Version != "" {
			fmt.Fprintf(w, " (version %s)", r.Version)
		}
	}
	fmt.Fprintln(w)
	if r.Outcome == "already stored" {
		fmt.Fprintf(w, "  version %s is already in the store; nothing to do\n", r.ManifestID)
	}
	list := func(title string, n int, ps []catalog.Problem) {
		if n == 0 {
			return
		}
		fmt.Fprintf(w, "  %s: %d\n", title, n)
		for _, p := range ps {
			fmt.Fprintf(w, "    %s\n", p)
		}
		if n > len(ps) {
			fmt.Fprintf(w, "    … and %d more\n", n-len(ps))
		}
	}
	list("rejected because of", r.NumRejections, r.Rejections)
	for _, n := range r.Notes {
		fmt.Fprintf(w, "  note: %s\n", n)
	}
	if len(r.Ignored) > 0 {
		fmt.Fprintf(w, "  ignored files (not part of the layout): %s\n", strings.Join(r.Ignored, ", "))
	}
	if len(r.Unknown) > 0 {
		fmt.Fprintf(w, "  fields the contract does not describe (served as sent): %d\n", len(r.Unknown))
		for _, u := range r.Unknown {
			fmt.Fprintf(w, "    %s\n", u)
		}
	}
	list("null array elements removed", r.NumRepairs, r.Repairs)
	if len(r.Fills) > 0 {
		fills := map[string]int{}
		for f, n := range r.Fills {
			fills[fmt.Sprintf("%s.%s=%v", f.Schema, f.Field, f.Value)] += n
		}
		fmt.Fprintf(w, "  defaults filled for fields the source lacks (or has as null text):")
		for _, k := range slices.Sorted(maps.Keys(fills)) {
			fmt.Fprintf(w, " %s ×%d;", k, fills[k])
		}
		fmt.Fprintln(w)
	}
	if r.Summary != nil {
		fmt.Fprintf(w, "  diff %s → %s: %d added, %d removed, %d changed\n", r.Previous, r.ManifestID,
			r.Summary.TotalAdded, r.Summary.TotalRemoved, r.Summary.TotalChanged)
	}
	if r.IndexBytes > 0 {
		fmt.Fprintf(w, "  stored: an index of %d bytes, %d bytes of bodies no version had (%d of them moved from old segments)\n", r.IndexBytes, r.StoredBytes, r.CopiedBytes)
	}
	if len(r.Pruned) > 0 {
		fmt.Fprintf(w, "  pruned by retention: %s\n", strings.Join(r.Pruned, ", "))
	}
}
