//go:build !linux

package store

// exchange is renameat2's RENAME_EXCHANGE, which only Linux has: a replaced
// version is moved out, then the new one in.
func exchange(a, b string) (bool, error) { return false, nil }
