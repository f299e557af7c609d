//go:build !linux

package cores

// IdlePriority: only Linux's SCHED_IDLE is used; elsewhere a child runs at
// normal priority, still a process of its own (no shared collector or locks).
func IdlePriority() {}

func setIdle(int) {}
