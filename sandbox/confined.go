package sandbox

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"os/exec"
	"sync"
	"syscall"
	"time"

	"github.com/mcpsandbox/mcpsandbox/internal/field"
	"github.com/mcpsandbox/mcpsandbox/sandbox/cgroups"
	"github.com/mcpsandbox/mcpsandbox/sandbox/internal/initstage"
	"github.com/mcpsandbox/mcpsandbox/sandbox/seccomp"
	"golang.org/x/sys/unix"
)

// setupTimeout bounds how long building the sandbox may take before Start
// gives up; it is far above the milliseconds setup really needs.
const setupTimeout = 30 * time.Second

func startConfined(spec Spec, log *slog.Logger) (Process, error) {
	p := &confinedProcess{log: log, done: make(chan struct{}), setupDone: make(chan struct{})}
	// The cgroup is created while the rest is resolved; awaitCgroup hands it
	// to p (on this goroutine) and must be called on every path, so that a
	// failed start deletes it.
	type made struct {
		cg  *cgroups.Group
		err error
	}
	cgroupMade := make(chan made, 1)
	go func() {
		cg, err := cgroups.New(spec.Name, cgroups.Limits{Memory: spec.Memory, Pids: spec.Pids, CPU: spec.CPU, CPUWeight: cpuWeight(spec)})
		cgroupMade <- made{cg, err}
	}()
	awaitCgroup := sync.OnceValue(func() error {
		m := <-cgroupMade
		if m.err != nil {
			return fmt.Errorf("sandbox: cgroup limits cannot be enforced: %w", m.err)
		}
		p.cg = m.cg
		cgroups.LogHome(log)
		return nil
	})
	fail := func(err error) (Process, error) {
		awaitCgroup()
		p.Close()
		return nil, err
	}

	if spec.Net == NetEgress && spec.Egress == nil {
		return fail(errNoEgress)
	}
	cfg, err := newInitConfig(spec)
	if err != nil {
		return fail(err)
	}
	if len(cfg.MaskedSockets) > 0 {
		log.Info("sandbox: unix sockets in the grants are masked: the server cannot connect to them", "name", spec.Name, "sockets", cfg.MaskedSockets)
	}
	if cfg.SocketSearchCut != "" {
		log.Warn("sandbox: the search for unix sockets in the grants stopped; sockets past it stay reachable", "name", spec.Name, "where", cfg.SocketSearchCut)
	}
	if cfg.Seccomp, err = seccomp.Program(spec.Seccomp, socketFamilies(cfg.Net, cfg.resolver), spec.SeccompLog); err != nil {
		return fail(fmt.Errorf("sandbox: seccomp cannot be enforced: %w", err))
	}
	if p.user, err = chooseUser(spec, cfg); err != nil {
		return fail(err)
	}
	cfg.UID, cfg.GID, cfg.UserName, cfg.UserNS = p.user.uid, p.user.gid, p.user.name, p.user.userns
	if err := checkNoFile(cfg); err != nil {
		return fail(err)
	}
	if err := prepareStateDirFor(cfg); err != nil {
		return fail(err)
	}
	if err := planBindOwners(cfg, spec.Seccomp == "default" && !spec.SeccompLog, log); err != nil {
		return fail(err)
	}
	// The init stage gets its own copy of the ruleset when it starts.
	if p.landlock, err = prepareLandlock(cfg, log); err != nil {
		return fail(err)
	}
	if p.landlock != nil {
		defer p.landlock.Close()
	}
	// Encoded before any process starts: a configuration the init stage
	// cannot take is refused here.
	if cfg.Etc, err = etcConfigFiles(cfg); err != nil {
		return fail(fmt.Errorf("sandbox: %w", err))
	}
	msg, err := cfg.Encode()
	if err != nil {
		return fail(fmt.Errorf("sandbox: %w", err))
	}

	// cgroup v2 starts the init stage inside its cgroup (CLONE_INTO_CGROUP),
	// so the cgroup comes first. On v1 the init stage boots meanwhile, and
	// its forking thread joins the cgroup (see ThreadJoinFiles) before it
	// forks the server.
	makeCgroup := awaitCgroup
	if cgroups.JoinedAtClone() {
		if err := awaitCgroup(); err != nil {
			return fail(err)
		}
		makeCgroup = nil
	}
	err = p.start(cfg, msg, makeCgroup)
	p.endSetup()
	if err != nil {
		return fail(err)
	}
	log.Debug("sandbox: server started", "name", spec.Name, "pid", p.Pid(), "net", cfg.Net.String(), "uid", cfg.UID, "userns", cfg.UserNS, "preforked", p.preforked, "landlock", cfg.Landlock != nil)
	return p, nil
}

// cpuWeight is the weight spec asks for, DefaultCPUWeight unless set.
func cpuWeight(spec Spec) uint64 {
	if spec.CPUWeight == 0 {
		return DefaultCPUWeight
	}
	return spec.CPUWeight
}

// confinedProcess is the supervisor's handle on one sandbox: the init stage
// (the reaper, PID 1 inside) and, through it, the server.
type confinedProcess struct {
	stage          *stageHandle
	preforked      bool // the init stage was pre-forked (initstage's zygote.c), not re-exec'd
	log            *slog.Logger
	stdin          io.WriteCloser
	stdout, stderr *os.File
	reports        *bufio.Reader
	reportFile     *os.File
	reportCh       chan initstage.Report
	setupDone      chan struct{} // closed once Start stops reading reports
	setupOnce      sync.Once
	cg             *cgroups.Group
	user           *sandboxUser
	landlock       *os.File // the server's Landlock ruleset, until the init stage has it

	done      chan struct{}
	exit      Exit
	closeOnce sync.Once
}

// stageHandle is the supervisor's hold on a running init stage.
type stageHandle struct {
	pid    int
	signal func(os.Signal) error
	wait   func() Exit
}

// start starts the init stage and sends it msg, cfg's configuration;
// makeCgroup, when not nil, creates the cgroup while the init stage boots
// and builds the root (cgroup v1).
func (p *confinedProcess) start(cfg *initConfig, msg *initstage.Message, makeCgroup func() error) error {
	cfgR, cfgW, err := os.Pipe()
	if err != nil {
		return err
	}
	defer cfgW.Close()
	repR, repW, err := os.Pipe()
	if err != nil {
		cfgR.Close()
		return err
	}
	p.reportFile = repR
	p.reports = bufio.NewReader(repR)

	child := &exec.Cmd{} // holds the init stage's ends of its stdio pipes
	p.stdin, p.stdout, p.stderr, err = attachPipes(child)
	if err != nil {
		cfgR.Close()
		repW.Close()
		return err
	}
	// With egress capture, where the init stage hands over its sockets.
	var egressConn *net.UnixConn
	var egressEnd *os.File
	if cfg.Egress != nil {
		if egressConn, egressEnd, err = initstage.EgressPair(); err != nil {
			cfgR.Close()
			repW.Close()
			closeChildEnds(child)
			return fmt.Errorf("sandbox: %w", err)
		}
		defer egressConn.Close()
	}
	err = p.launch(cfg, child, cfgR, repW, egressEnd)
	cfgR.Close()
	repW.Close()
	if egressEnd != nil {
		egressEnd.Close()
	}
	closeChildEnds(child)
	if err != nil {
		return err
	}
	p.reportCh = make(chan initstage.Report, 4)
	go p.readReports()
	go p.wait()

	// The configuration first: the init stage builds the root while the
	// cgroup is made, and waits for the cgroup part only to join it.
	if err := msg.Send(cfgW); err != nil {
		p.endSetup()
		p.Kill()
		<-p.done
		return fmt.Errorf("sandbox: sending the configuration to the init stage: %v (init stage: %v)", err, p.exit)
	}
	if makeCgroup != nil {
		if err := makeCgroup(); err != nil {
			p.endSetup()
			p.Kill()
			<-p.done
			return err
		}
	}
	// Configured before the cgroup part goes out: until it arrives the
	// init stage does not fork the server, so the server never runs
	// without its capture.
	var listeners *Listeners
	if egressConn != nil {
		l, err := p.startCapture(cfg, egressConn)
		if err != nil {
			p.endSetup()
			p.Kill()
			<-p.done
			return err
		}
		listeners = &l
	}
	// cgroup v1 has no CLONE_INTO_CGROUP: the init stage joins by itself.
	cfg.CgroupJoin = p.cg.ThreadJoinFiles()
	if p.cg.IntoFD() < 0 && len(cfg.CgroupJoin) == 0 {
		if err := p.cg.Add(p.stage.pid); err != nil {
			return fmt.Errorf("sandbox: moving the server into its cgroup: %w", err)
		}
	}
	cfg.CgroupView = nil
	for _, d := range p.cg.View() {
		cfg.CgroupView = append(cfg.CgroupView, initstage.CgroupDir(d))
	}
	// An init stage that refused the configuration is gone before it reads
	// this: the broken pipe is ignored and its report says why.
	cfg.EncodeCgroup().Send(cfgW)
	cfgW.Close()
	err = p.awaitStarted()
	if err != nil && listeners != nil {
		// Served by Egress, but for a server that never ran.
		listeners.close()
	}
	return err
}

// startCapture takes the init stage's egress sockets from conn, configures
// the server's network namespace with them and hands the listeners to the
// Egress function (capture.go). An error means the server must not start.
func (p *confinedProcess) startCapture(cfg *initConfig, conn *net.UnixConn) (Listeners, error) {
	socks, err := initstage.ReceiveSockets(conn, *cfg.Egress, time.Now().Add(setupTimeout))
	if errors.Is(err, initstage.ErrStageGone) {
		// It failed before the hand-over, and its report says why.
		if rerr := p.awaitStarted(); rerr != nil {
			return Listeners{}, rerr
		}
	}
	if err != nil {
		return Listeners{}, fmt.Errorf("sandbox: egress capture: %w", err)
	}
	defer socks.Close()
	l, err := openCapture(socks, cfg.capture)
	if err != nil {
		return Listeners{}, fmt.Errorf("sandbox: %w: the server was not started", err)
	}
	if err := cfg.egress(l); err != nil {
		l.close()
		return Listeners{}, fmt.Errorf("sandbox: egress capture: serving the listeners failed, so the server was not started: %w", err)
	}
	return l, nil
}

// launch starts the init stage with the given descriptors as its 0–4, 5
// (egress, when not nil) and 6 (the Landlock ruleset, when there is one):
// the pre-forked one when it has the namespaces cfg needs, else a fresh
// re-exec of this binary.
func (p *confinedProcess) launch(cfg *initConfig, child *exec.Cmd, cfgR, repW, egress *os.File) error {
	files := initstage.Files{Stdin: child.Stdin.(*os.File), Stdout: child.Stdout.(*os.File), Stderr: child.Stderr.(*os.File), Config: cfgR, Report: repW, Egress: egress, Landlock: p.landlock}
	cgroupFD := -1
	if p.cg != nil {
		cgroupFD = p.cg.IntoFD()
	}
	if z := initstage.TakeZygote(); z != nil {
		if z.Fits(&cfg.Config, cgroupFD) {
			a, err := z.Adopt(&cfg.Config, files)
			if err == nil {
				p.stage = &stageHandle{pid: a.Pid, signal: a.Signal, wait: func() Exit { return exitFromWait(a.Wait()) }}
				p.preforked = true
				return nil
			}
			p.log.Debug("sandbox: not using the pre-forked init stage", "err", err)
		}
		z.Discard()
	}
	cmd, err := initstage.Exec(&cfg.Config, files, cgroupFD)
	if err != nil {
		return startError(err, cfg)
	}
	p.stage = &stageHandle{pid: cmd.Process.Pid, signal: cmd.Process.Signal, wait: func() Exit {
		err := cmd.Wait()
		return exitFromState(cmd.ProcessState, err)
	}}
	return nil
}

// exitFromWait turns the pre-forked init stage's end into an Exit.
func exitFromWait(ws unix.WaitStatus, err error) Exit {
	switch {
	case err != nil:
		return Exit{Code: -1, SetupErr: err}
	case ws.Signaled():
		return Exit{Code: -1, Signal: ws.Signal()}
	}
	return Exit{Code: ws.ExitStatus()}
}

// startError turns a failed clone into advice.
func startError(err error, cfg *initConfig) error {
	fix := ""
	switch {
	case cfg.UserNS && (errors.Is(err, unix.EPERM) || errors.Is(err, unix.EACCES) || errors.Is(err, unix.ENOSPC)):
		fix = "user namespaces are unavailable to this user: {Doctor} says why; enable them (e.g. sysctl kernel.apparmor_restrict_unprivileged_userns=0 or user.max_user_namespaces>0) or run mcpsandbox as root"
	case errors.Is(err, unix.EPERM):
		fix = "creating namespaces was refused (inside a container without CAP_SYS_ADMIN?): {Doctor} says why"
	default:
		return fmt.Errorf("sandbox: starting the init stage: %w", err)
	}
	return &field.Error{Problem: "sandbox: starting the init stage", Err: err, Fix: fix}
}

// readReports forwards every report line until the init stage is gone.
func (p *confinedProcess) readReports() {
	defer close(p.reportCh)
	for {
		rep, err := initstage.ReadReport(p.reports)
		if err != nil {
			return
		}
		p.reportCh <- rep
	}
}

// awaitStarted waits for the init stage to report that the server's exec
// succeeded, or why setup failed.
func (p *confinedProcess) awaitStarted() error {
	timer := time.NewTimer(setupTimeout)
	defer timer.Stop()
	var rep initstage.Report
	var ok bool
	select {
	case rep, ok = <-p.reportCh:
	case <-timer.C:
		p.Kill()
		return fmt.Errorf("sandbox: setup did not finish within %s", setupTimeout)
	}
	p.endSetup()
	switch {
	case !ok:
		<-p.done
		return fmt.Errorf("sandbox: the init stage died before the server started (%v)", p.exit)
	case rep.Error != "":
		p.Kill()
		<-p.done
		return fmt.Errorf("sandbox: %w", rep.SetupError())
	case !rep.Started:
		p.Kill()
		return fmt.Errorf("sandbox: unexpected first report from the init stage: %+v", rep)
	}
	return nil
}

// endSetup lets wait consume reports; until then they belong to Start.
func (p *confinedProcess) endSetup() { p.setupOnce.Do(func() { close(p.setupDone) }) }

// wait turns the reaper's report of the server's end and the init stage's
// own status into Exit. The report pipe closes when the init stage is gone.
func (p *confinedProcess) wait() {
	ex := p.stage.wait()
	<-p.setupDone
	for rep := range p.reportCh {
		switch {
		case rep.Exited && rep.Signal != 0:
			ex = Exit{Code: -1, Signal: syscall.Signal(rep.Signal), DiskFull: rep.Full}
		case rep.Exited:
			ex = Exit{Code: rep.Code, DiskFull: rep.Full}
		case rep.Error != "":
			ex = Exit{Code: -1, SetupErr: rep.SetupError()}
		}
	}
	if p.cg != nil && p.cg.OOMKilled() {
		ex.OOMKilled = true
	}
	if p.cg != nil && p.cg.PidsLimitHit() {
		ex.PidsLimit = true
	}
	p.exit = ex
	close(p.done)
}

func (p *confinedProcess) Stdin() io.WriteCloser { return p.stdin }
func (p *confinedProcess) Stdout() io.Reader     { return p.stdout }
func (p *confinedProcess) Stderr() io.Reader     { return p.stderr }
func (p *confinedProcess) Pid() int              { return p.stage.pid }
func (p *confinedProcess) Done() <-chan struct{} { return p.done }

func (p *confinedProcess) Exit() Exit {
	<-p.done
	return p.exit
}

func (p *confinedProcess) Stats() Stats {
	if p.cg == nil {
		return Stats{}
	}
	return Stats(p.cg.Stats())
}

// Signal goes to the reaper, which forwards it to the server.
func (p *confinedProcess) Signal(sig os.Signal) error {
	select {
	case <-p.done:
		return os.ErrProcessDone
	default:
	}
	return p.stage.signal(sig)
}

// Kill takes down the whole sandbox: SIGKILL to PID 1 ends every process in
// the pid namespace, and the cgroup catches anything else.
func (p *confinedProcess) Kill() error {
	var err error
	if p.started() {
		if e := p.stage.signal(syscall.SIGKILL); e != nil && !errors.Is(e, os.ErrProcessDone) {
			err = e
		}
	}
	if p.cg != nil {
		if e := p.cg.Kill(); e != nil {
			err = e
		}
	}
	return err
}

func (p *confinedProcess) started() bool { return p.stage != nil }

// Close kills what is left, waits for it, then frees the cgroup and the
// pipes.
func (p *confinedProcess) Close() error {
	var err error
	p.closeOnce.Do(func() {
		p.Kill()
		if p.started() {
			<-p.done
		}
		if p.cg != nil {
			err = p.cg.Delete()
		}
		for _, f := range []*os.File{p.stdout, p.stderr, p.reportFile} {
			if f != nil {
				f.Close()
			}
		}
		if p.stdin != nil {
			p.stdin.Close()
		}
	})
	return err
}
