package cores

import (
	"os"
	"strconv"
	"syscall"
	"unsafe"
)

// schedIdle is Linux's SCHED_IDLE policy: the thread runs only when no other
// wants the CPU, and a waking thread of any other policy preempts it at once.
const schedIdle = 5

// IdlePriority puts every thread of the process under SCHED_IDLE, for a
// child process that works beside a server (representation's compression,
// builder's editions); threads started later inherit it from the thread that
// starts them. Twice, for a thread the runtime started during the first pass.
// Unprivileged processes may lower their own priority; a failure leaves the
// child at normal priority, which is still a process of its own.
func IdlePriority() {
	for range 2 {
		tasks, err := os.ReadDir("/proc/self/task")
		if err != nil {
			return
		}
		for _, t := range tasks {
			if tid, err := strconv.Atoi(t.Name()); err == nil {
				setIdle(tid)
			}
		}
	}
}

// setIdle puts one thread (a process's first thread: its PID) under
// SCHED_IDLE; a refusal leaves it as it was.
func setIdle(tid int) {
	var param struct{ priority int32 }
	_, _, _ = syscall.RawSyscall(syscall.SYS_SCHED_SETSCHEDULER, uintptr(tid), schedIdle, uintptr(unsafe.Pointer(&param)))
}
