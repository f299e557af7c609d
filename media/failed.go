package media

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"
)

// FailedFile is the name of a Dir's record of the URLs a sync could not
// mirror for a reason the next pass would not change (a 404, a type not
// served, a file over the size cap, the host policy), so they are tried
// again after a backoff rather than at every pass: one JSON line per URL
// (Failure), written anew (a temporary file renamed over it) after each pass.
const FailedFile = "failed.jsonl"

// Failure is a URL not mirrored, remembered until Next.
type Failure struct {
	URL    string    `json:"url"`
	Class  string    `json:"class"`  // the sync's class of reason (refused, type, status, too big)
	Reason string    `json:"reason"` // the last attempt's
	Since  time.Time `json:"since"`  // the first failure
	At     time.Time `json:"at"`     // the last
	Tries  int       `json:"tries"`
	Next   time.Time `json:"next"` // not tried again before
	// Settings are what decided it, as the sync words them (the media hosts,
	// the size cap): under other settings it is tried at once.
	Settings string `json:"settings"`
}

// Failures reads the record of failures, by URL; none when there is no
// record. A line that is not a Failure is left out: its URL is tried at the
// next pass.
func (d *Dir) Failures() (map[string]Failure, error) {
	out := map[string]Failure{}
	b, err := os.ReadFile(filepath.Join(d.dir, FailedFile))
	if errors.Is(err, fs.ErrNotExist) {
		return out, nil
	}
	if err != nil {
		return nil, fmt.Errorf("media failures: %w", err)
	}
	sc := bufio.NewScanner(bytes.NewReader(b))
	sc.Buffer(nil, len(b)+1)
	for sc.Scan() {
		var f Failure
		if json.Unmarshal(sc.Bytes(), &f) == nil && f.URL != "" {
			out[f.URL] = f
		}
	}
	return out, nil
}

// WriteFailures replaces the record with failures, sorted by URL; none
// removes it. For the writer, as Put.
func (d *Dir) WriteFailures(failures []Failure) error {
	name := filepath.Join(d.dir, FailedFile)
	if len(failures) == 0 {
		if err := os.Remove(name); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("media failures: %w", err)
		}
		return nil
	}
	failures = slices.SortedFunc(slices.Values(failures), func(a, b Failure) int { return strings.Compare(a.URL, b.URL) })
	var b bytes.Buffer
	for _, f := range failures {
		line, err := json.Marshal(f)
		if err != nil {
			return err
		}
		b.Write(line)
		b.WriteByte('\n')
	}
	if err := writeAtomic(name, b.Bytes()); err != nil {
		return fmt.Errorf("media failures: %w", err)
	}
	return nil
}
