package builder

import (
	"time"
)

// StartInstead makes the child the program at path, with a shorter wait for
// its handshake, until the returned function restores them.
func StartInstead(path string) (restore func()) {
	exe, wait := executable, handshakeWait
	executable = func() (string, error) { return path, nil }
	handshakeWait = 300 * time.Millisecond
	return func() { executable, handshakeWait = exe, wait }
}

// PartLimit is the bound on a part read from a child for a plan of n bytes.
var PartLimit = partLimit

// SparePID is the process ID of the child waiting for the next build, 0 when
// none waits.
func SparePID() int {
	state.mu.Lock()
	defer state.mu.Unlock()
	if state.spare == nil {
		return 0
	}
	return state.spare.cmd.Process.Pid
}

// ServeChild is what a builder child does with its standard input and output.
var ServeChild = serveChild

// WidenAfter sets how long a child's build runs on its budget of procs,
// until the returned function restores it.
func WidenAfter(d time.Duration) (restore func()) {
	before := widenAfter
	widenAfter = d
	return func() { widenAfter = before }
}
