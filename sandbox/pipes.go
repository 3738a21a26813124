package sandbox

import (
	"errors"
	"io"
	"os"
	"os/exec"
	"syscall"
)

// attachPipes gives cmd three fresh pipes and returns the parent's ends.
// os.Pipe is used instead of cmd.StdoutPipe so that Wait does not close the
// read ends while the supervisor is still draining them.
func attachPipes(cmd *exec.Cmd) (stdin io.WriteCloser, stdout, stderr *os.File, err error) {
	inR, inW, err := os.Pipe()
	if err != nil {
		return nil, nil, nil, err
	}
	outR, outW, err := os.Pipe()
	if err != nil {
		inR.Close()
		inW.Close()
		return nil, nil, nil, err
	}
	errR, errW, err := os.Pipe()
	if err != nil {
		inR.Close()
		inW.Close()
		outR.Close()
		outW.Close()
		return nil, nil, nil, err
	}
	cmd.Stdin, cmd.Stdout, cmd.Stderr = inR, outW, errW
	return inW, outR, errR, nil
}

// closeChildEnds closes the parent's copies of the child's pipe ends, so that
// EOF arrives when the child's side is gone.
func closeChildEnds(cmd *exec.Cmd) {
	for _, f := range []any{cmd.Stdin, cmd.Stdout, cmd.Stderr} {
		if c, ok := f.(*os.File); ok {
			c.Close()
		}
	}
}

// exitFromState turns a wait result into an Exit.
func exitFromState(st *os.ProcessState, err error) Exit {
	if st == nil {
		return Exit{Code: -1, SetupErr: err}
	}
	if ws, ok := st.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		return Exit{Code: -1, Signal: ws.Signal()}
	}
	var ee *exec.ExitError
	if err != nil && !errors.As(err, &ee) {
		return Exit{Code: -1, SetupErr: err}
	}
	return Exit{Code: st.ExitCode()}
}
