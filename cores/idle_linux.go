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
			tid, err := strconv.Atoi(t.Name())
			if err != nil {
				continue
			}
			var param struct{ priority int32 }
			_, _, _ = syscall.RawSyscall(syscall.SYS_SCHED_SETSCHEDULER, uintptr(tid), schedIdle, uintptr(unsafe.Pointer(&param)))
		}
	}
}

// pipeSize is what growPipe asks for: Linux's largest for an unprivileged
// process (/proc/sys/fs/pipe-max-size, 1 MB by default).
const pipeSize = 1 << 20

// fSetPipeSize is fcntl's F_SETPIPE_SZ.
const fSetPipeSize = 1031

// growPipe makes p's pipe (an end exec.Cmd made) hold pipeSize bytes instead
// of the default 64 KB, so a child's tens of megabytes cross in a sixteenth of
// the reads and writes, each a wake-up of the other side. Through SyscallConn:
// File.Fd would put the pipe in blocking mode. A failure leaves the default.
func growPipe(p any) {
	f, ok := p.(interface {
		SyscallConn() (syscall.RawConn, error)
	})
	if !ok {
		return
	}
	c, err := f.SyscallConn()
	if err != nil {
		return
	}
	_ = c.Control(func(fd uintptr) {
		_, _, _ = syscall.Syscall(syscall.SYS_FCNTL, fd, fSetPipeSize, pipeSize)
	})
}
