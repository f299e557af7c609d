//go:build !linux

package representation

// setIdlePriority: only Linux's SCHED_IDLE is used; elsewhere the child runs at
// normal priority, still a process of its own (no shared collector or locks).
func setIdlePriority() {}
