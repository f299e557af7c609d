package cores

import "syscall"

// pipeSize is what growPipe asks for: Linux's largest for an unprivileged
// process (/proc/sys/fs/pipe-max-size, 1 MB by default).
const pipeSize = 1 << 20

// fcntl's F_SETPIPE_SZ and F_GETPIPE_SZ.
const (
	fSetPipeSize = 1031
	fGetPipeSize = 1032
)

// growPipe makes p's pipe (an end exec.Cmd made) hold pipeSize bytes instead
// of the default 64 KB, so a child's tens of megabytes cross in a sixteenth of
// the reads and writes, each a wake-up of the other side. A failure leaves the
// default.
func growPipe(p any) { _, _ = pipeFcntl(p, fSetPipeSize, pipeSize) }

// pipeFcntl calls fcntl(cmd, arg) on p's descriptor, through SyscallConn:
// File.Fd would put the pipe in blocking mode. ok is false when p has no
// descriptor to give or the call failed.
func pipeFcntl(p any, cmd, arg uintptr) (r uintptr, ok bool) {
	f, isConn := p.(interface {
		SyscallConn() (syscall.RawConn, error)
	})
	if !isConn {
		return 0, false
	}
	c, err := f.SyscallConn()
	if err != nil {
		return 0, false
	}
	var errno syscall.Errno
	if err := c.Control(func(fd uintptr) { r, _, errno = syscall.Syscall(syscall.SYS_FCNTL, fd, cmd, arg) }); err != nil || errno != 0 {
		return 0, false
	}
	return r, true
}
