package main

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/refdata/refdata/catalog"
	"github.com/refdata/refdata/fixtures"
	"github.com/refdata/refdata/pipeline"
	"github.com/refdata/refdata/representation"
	"github.com/refdata/refdata/store"
)

// sampleComplete marks a sample store every embedded version was imported into.
const sampleComplete = "SAMPLE-COMPLETE"

// sampleOptions is how the sample store is made: serve's are the embedded
// versions whole, compressed at Best, in the user's cache directory.
type sampleOptions struct {
	effort representation.Effort
	// trimmed makes it of the trimmed versions (fixtures.Files), and dir, when
	// set, keeps it there: the tests' sample, made in seconds where the whole
	// one takes minutes under the race detector, beside no other binary's.
	trimmed bool
	dir     string
}

// sampleStore is the embedded sample data as a file store, served as any
// store is: made once, by importing the embedded versions, in the user's
// cache directory (else the temporary one), and kept there for the binary
// that made it. The first start of a binary makes it (some seconds, while the
// server answers 503 with Retry-After); later ones open it at once. A store
// another binary made is removed.
func sampleStore(ctx context.Context, opt sampleOptions, logger *slog.Logger) (string, error) {
	base, key, err := sampleKey(opt)
	if err != nil {
		return "", err
	}
	dir := filepath.Join(base, "sample-"+key)
	if _, err := os.Stat(filepath.Join(dir, sampleComplete)); err == nil {
		return dir, nil
	}
	start := time.Now()
	logger.Info("making the embedded sample data's store, once for this binary", "dir", dir)
	tmp, err := os.MkdirTemp(base, "sample-"+key+".tmp-")
	if err != nil {
		return "", fmt.Errorf("sample store: %w", err)
	}
	defer os.RemoveAll(tmp) // gone once renamed
	st, err := store.Open(tmp)
	if err != nil {
		return "", fmt.Errorf("sample store: %w", err)
	}
	for _, v := range fixtures.Versions() {
		files, err := fixtures.Files(v, opt.trimmed)
		if err != nil {
			return "", err
		}
		// Published at its build date, as the data says: every server of
		// this binary makes the same diffs.
		at, _ := time.Parse(time.RFC3339, buildDate(files))
		rep, err := pipeline.ImportFiles(st, "embedded "+filepath.Base(v), files, pipeline.Options{
			Context: ctx, Effort: opt.effort, Now: func() time.Time { return at }, Bulk: true,
		})
		if err != nil {
			return "", fmt.Errorf("sample store: %w (%s)", err, rep.Outcome)
		}
	}
	if err := os.WriteFile(filepath.Join(tmp, sampleComplete), nil, 0o644); err != nil {
		return "", fmt.Errorf("sample store: %w", err)
	}
	if err := os.Rename(tmp, dir); err != nil {
		if _, serr := os.Stat(filepath.Join(dir, sampleComplete)); serr == nil {
			return dir, nil // another process made it meanwhile
		}
		return "", fmt.Errorf("sample store: %w", err)
	}
	logger.Info("made the embedded sample data's store", "dir", dir, "duration_seconds", time.Since(start).Seconds())
	removeOtherSamples(base, dir, logger)
	return dir, nil
}

// sampleKey is where sample stores are kept and this binary's: the sha256 of
// the executable and the options, so a rebuilt binary (its rendering may
// have changed) makes its own. The place is opt.dir when set, else systemd's
// CacheDirectory= when the unit has one, else the user's cache directory, else
// the temporary one.
func sampleKey(opt sampleOptions) (base, key string, err error) {
	base, err = opt.dir, nil
	if base == "" {
		base = os.Getenv("CACHE_DIRECTORY")
	}
	if base == "" {
		if base, err = os.UserCacheDir(); err == nil {
			base = filepath.Join(base, "refdata")
		}
	}
	if err == nil {
		err = os.MkdirAll(base, 0o755)
	}
	if err != nil {
		base = filepath.Join(os.TempDir(), "refdata-cache")
		if err = os.MkdirAll(base, 0o755); err != nil {
			return "", "", fmt.Errorf("sample store: no cache directory: %w", err)
		}
	}
	exe, err := os.Executable()
	if err != nil {
		return "", "", fmt.Errorf("sample store: %w", err)
	}
	f, err := os.Open(exe)
	if err != nil {
		return "", "", fmt.Errorf("sample store: %w", err)
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return "", "", fmt.Errorf("sample store: %w", err)
	}
	fmt.Fprintf(h, "%+v %v", opt.effort, opt.trimmed)
	return base, hex.EncodeToString(h.Sum(nil))[:16], nil
}

// removeOtherSamples removes the sample stores of other binaries.
func removeOtherSamples(base, keep string, logger *slog.Logger) {
	entries, _ := os.ReadDir(base)
	for _, e := range entries {
		p := filepath.Join(base, e.Name())
		if strings.HasPrefix(e.Name(), "sample-") && p != keep && !strings.Contains(e.Name(), ".tmp-") {
			if err := os.RemoveAll(p); err != nil && !errors.Is(err, os.ErrNotExist) {
				logger.Warn("could not remove an old sample store", "dir", p, "err", err)
			}
		}
	}
}

// buildDate is a snapshot's version record's buildDate, "" when unreadable.
func buildDate(files map[string][]byte) string {
	snap, err := catalog.LoadFiles(map[string][]byte{"version.json": files["version.json"]})
	if err != nil {
		return ""
	}
	d, _ := snap.Version["buildDate"].(string)
	return d
}
