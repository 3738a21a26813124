package sandbox

import (
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
)

// unconfinedProcess runs with the caller's rights in its own process group,
// so the whole tree can still be signalled at shutdown.
type unconfinedProcess struct {
	cmd            *exec.Cmd
	stdin          io.WriteCloser
	stdout, stderr *os.File
	done           chan struct{}
	exit           Exit
	closeOnce      sync.Once
}

func startUnconfined(spec Spec, log *slog.Logger) (Process, error) {
	path, err := lookPathIn(spec.Args[0], spec.Inherit)
	if err != nil {
		return nil, fmt.Errorf("server command %q: %w", spec.Args[0], err)
	}
	cmd := exec.Command(path, spec.Args[1:]...)
	cmd.Args[0] = spec.Args[0]
	cmd.Env = append(slices.Clone(spec.Inherit), spec.Env...)
	cmd.Dir = spec.Dir
	// Setsid gives a process group to kill; Pdeathsig takes the server down
	// if the supervisor is SIGKILLed.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true, Pdeathsig: syscall.SIGKILL}
	p := &unconfinedProcess{cmd: cmd, done: make(chan struct{})}
	p.stdin, p.stdout, p.stderr, err = attachPipes(cmd)
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("start %s: %w", spec.Args[0], err)
	}
	closeChildEnds(cmd)
	go p.wait()
	return p, nil
}

func (p *unconfinedProcess) wait() {
	err := p.cmd.Wait()
	p.exit = exitFromState(p.cmd.ProcessState, err)
	close(p.done)
}

func (p *unconfinedProcess) Stdin() io.WriteCloser { return p.stdin }
func (p *unconfinedProcess) Stdout() io.Reader     { return p.stdout }
func (p *unconfinedProcess) Stderr() io.Reader     { return p.stderr }
func (p *unconfinedProcess) Pid() int              { return p.cmd.Process.Pid }
func (p *unconfinedProcess) Done() <-chan struct{} { return p.done }
func (p *unconfinedProcess) Exit() Exit            { <-p.done; return p.exit }
func (p *unconfinedProcess) Stats() Stats          { return Stats{} }

func (p *unconfinedProcess) Signal(sig os.Signal) error { return p.cmd.Process.Signal(sig) }

// Kill signals the whole process group; children that left the group are
// out of reach without a cgroup, which is what confinement adds.
func (p *unconfinedProcess) Kill() error {
	err := syscall.Kill(-p.cmd.Process.Pid, syscall.SIGKILL)
	if err == syscall.ESRCH {
		return nil
	}
	return err
}

func (p *unconfinedProcess) Close() error {
	p.closeOnce.Do(func() {
		p.Kill()
		<-p.done
		p.stdin.Close()
		p.stdout.Close()
		p.stderr.Close()
	})
	return nil
}

// lookPathIn finds prog as exec.LookPath does, but in the PATH of env (the
// last PATH= in it) rather than this process's.
func lookPathIn(prog string, env []string) (string, error) {
	if strings.Contains(prog, "/") {
		return exec.LookPath(prog)
	}
	path := ""
	for _, kv := range env {
		if v, ok := strings.CutPrefix(kv, "PATH="); ok {
			path = v
		}
	}
	for _, dir := range filepath.SplitList(path) {
		if !filepath.IsAbs(dir) {
			continue // as exec.LookPath refuses a relative result
		}
		p := filepath.Join(dir, prog)
		if st, err := os.Stat(p); err == nil && st.Mode().IsRegular() && st.Mode()&0o111 != 0 {
			return p, nil
		}
	}
	return "", &exec.Error{Name: prog, Err: exec.ErrNotFound}
}
