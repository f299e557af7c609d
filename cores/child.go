package cores

import (
	"fmt"
	"io"
	"os"
	"os/exec"
)

// StartChild starts exe (this executable, or a test's stand-in) as a child
// process that works beside the server: env=1 added to this process's
// environment tells it which (it puts itself at IdlePriority), its standard
// input and output are pipes to it, its standard error is this process's.
func StartChild(exe, env string) (cmd *exec.Cmd, in io.WriteCloser, out io.ReadCloser, err error) {
	cmd = exec.Command(exe)
	cmd.Env = append(os.Environ(), env+"=1")
	cmd.Stderr = os.Stderr
	if in, err = cmd.StdinPipe(); err != nil {
		return nil, nil, nil, err
	}
	if out, err = cmd.StdoutPipe(); err != nil {
		return nil, nil, nil, err
	}
	growPipe(in)
	growPipe(out)
	if err := cmd.Start(); err != nil {
		return nil, nil, nil, fmt.Errorf("start %s: %w", exe, err)
	}
	return cmd, in, out, nil
}
