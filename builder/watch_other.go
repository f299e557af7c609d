//go:build !linux

package builder

// A watch is a no-op where the child runs at normal priority (cores.IdlePriority
// is Linux's): it is not starved by the server.
type watch struct{}

func newWatch(int) *watch { return &watch{} }

func (*watch) starved() bool { return false }
