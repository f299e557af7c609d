package impl

import (
	"errors"

	"github.com/refdata/refdata/catalog"
)

// ErrNotFound is returned by a Repository when a version or diff does not exist.
var ErrNotFound = errors.New("not found")

// NotFound returns an error that wraps ErrNotFound and reads as msg alone, so the
// message a client sees is the explanation.
func NotFound(msg string) error { return notFound(msg) }

type notFound string

func (e notFound) Error() string        { return string(e) }
func (e notFound) Is(target error) bool { return target == ErrNotFound }

// Repository is the data the handlers serve.
type Repository interface {
	// Active returns the edition being served; never nil. Handlers call it once per
	// request, so a request never mixes two versions.
	Active() *catalog.Edition
	// LatestDiff returns the diff between the previous version and the active one.
	// Returns an error wrapping ErrNotFound when there is none; any other error means
	// the stored diff is unreadable.
	LatestDiff() (*catalog.Body, error)
	// Diff returns the diff between two retained versions, by manifest ID. Returns an
	// error wrapping ErrNotFound when either version is not retained.
	Diff(from, to string) (*catalog.Body, error)
}

// Static serves one edition that never changes, without diffs: the embedded sample
// data, or a test's.
type Static struct{ Edition *catalog.Edition }

// Active returns the edition.
func (s Static) Active() *catalog.Edition { return s.Edition }

// LatestDiff always reports that there is no diff.
func (s Static) LatestDiff() (*catalog.Body, error) {
	return nil, NotFound("the active version was not imported after another one, so it has no diff")
}

// Diff knows only the one version.
func (s Static) Diff(from, to string) (*catalog.Body, error) {
	for _, v := range []string{from, to} {
		if v != s.Edition.ManifestID {
			return nil, NotFound("version " + v + " is not retained; /v1/version names the active one")
		}
	}
	return nil, NotFound("the embedded sample data has one version, so there is no diff")
}
