//go:build linux

package store

import (
	"errors"
	"os"

	"golang.org/x/sys/unix"
)

// exchange swaps directories a and b in one step (renameat2's
// RENAME_EXCHANGE): a crash leaves each name holding one whole copy. False,
// with nothing changed, where the filesystem cannot.
func exchange(a, b string) (bool, error) {
	err := unix.Renameat2(unix.AT_FDCWD, a, unix.AT_FDCWD, b, unix.RENAME_EXCHANGE)
	switch {
	case err == nil:
		return true, nil
	case errors.Is(err, unix.EINVAL), errors.Is(err, unix.ENOSYS), errors.Is(err, unix.EOPNOTSUPP):
		return false, nil
	}
	return false, &os.LinkError{Op: "exchange", Old: a, New: b, Err: err}
}
