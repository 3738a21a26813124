package sandbox

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"runtime"

	"golang.org/x/sys/unix"
)

// InitArg0 is argv[0] of the re-executed init stage: PID 1 of the server's
// pid namespace, which builds the sandbox and then stays as the reaper.
const InitArg0 = "mcpsandbox-init"

// Descriptor numbers the stages receive their pipes on.
const (
	configFD = 3 // supervisor → init: config, then its cgroup part (JSON lines)
	reportFD = 4 // init → supervisor: reports
)

// InitStage runs the init stage and never returns when this process was
// started as one; otherwise it returns at once.
func InitStage() {
	if os.Args[0] == InitArg0 || isZygote() {
		// One thread does the setup and forks the server: namespace changes
		// made with unshare apply to it only.
		runtime.LockOSThread()
		var pre *preparedRoot
		if isZygote() {
			// Build while waiting to be adopted; in a user namespace only
			// once the adopter has mapped the ids (files need an owner).
			if !zygoteUserNS() {
				pre = prepareRoot()
			}
			if !receiveStageFDs() {
				os.Exit(0) // not adopted: nothing to report to anyone
			}
		}
		os.Exit(runInit(pre))
	}
}

// report is one line from the init stage to the supervisor.
type report struct {
	Error   string `json:"error,omitempty"`   // setup failed; the server never ran
	Started bool   `json:"started,omitempty"` // the server's exec succeeded
	Exited  bool   `json:"exited,omitempty"`  // the server ended as Code/Signal say
	Code    int    `json:"code,omitempty"`
	Signal  int    `json:"signal,omitempty"`
}

type reportWriter struct{ w io.Writer }

func (r reportWriter) send(rep report) {
	b, _ := json.Marshal(rep)
	r.w.Write(append(b, '\n'))
}

// readReport reads the next report; io.EOF when the init stage is gone.
func readReport(r *bufio.Reader) (report, error) {
	line, err := r.ReadBytes('\n')
	if err != nil {
		if len(line) == 0 {
			return report{}, err
		}
	}
	var rep report
	if err := json.Unmarshal(line, &rep); err != nil {
		return report{}, fmt.Errorf("sandbox: garbled report from the init stage: %q", line)
	}
	return rep, nil
}

// configReader reads the supervisor's messages on configFD: the
// configuration, then its cgroup part (cgroupPart), one JSON line each.
// Plain blocking reads on this locked thread: an os.File would park it on
// the netpoller and wait for the scheduler to hand it back.
type configReader struct{ buf []byte }

// next decodes the next line into v.
func (r *configReader) next(v any) error {
	chunk := make([]byte, 16<<10)
	for {
		if i := bytes.IndexByte(r.buf, '\n'); i >= 0 {
			line := r.buf[:i]
			r.buf = r.buf[i+1:]
			return json.Unmarshal(line, v)
		}
		n, err := unix.Read(configFD, chunk)
		switch {
		case err == unix.EINTR:
			continue
		case err == unix.EAGAIN: // the supervisor's end left it non-blocking
			unix.Poll([]unix.PollFd{{Fd: configFD, Events: unix.POLLIN}}, -1)
			continue
		case err != nil:
			return err
		case n == 0:
			return io.ErrUnexpectedEOF
		}
		r.buf = append(r.buf, chunk[:n]...)
	}
}

// readConfig reads the configuration, which comes first.
func (r *configReader) readConfig() (*initConfig, error) {
	var cfg initConfig
	if err := r.next(&cfg); err != nil {
		return nil, fmt.Errorf("reading the sandbox configuration: %v", err)
	}
	return &cfg, nil
}

// readCgroup completes cfg with its cgroup part, which the supervisor sends
// once the cgroup exists, and closes configFD.
func (r *configReader) readCgroup(cfg *initConfig) error {
	defer unix.Close(configFD)
	var part cgroupPart
	if err := r.next(&part); err != nil {
		return fmt.Errorf("reading the sandbox's cgroup: %v", err)
	}
	cfg.CgroupJoin, cfg.CgroupView = part.Join, part.View
	return nil
}
