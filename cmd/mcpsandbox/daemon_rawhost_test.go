package main

import (
	"bufio"
	"encoding/json"
	"io"
	"os/exec"
	"syscall"
	"testing"
	"time"

	"github.com/mcpsandbox/mcpsandbox/internal/testenv"
)

// rawHost is a host speaking JSON-RPC lines to a command's stdio itself,
// with no SDK between: it sees every answer, however many come to an id.
type rawHost struct {
	t      *testing.T
	cmd    *exec.Cmd
	in     io.WriteCloser
	lines  chan []byte // stdout's lines; closed at EOF
	stderr *testenv.LogCapture
}

// rawAnswer is a response as a host reads it.
type rawAnswer struct {
	ID     json.RawMessage `json:"id"`
	Result json.RawMessage `json:"result"`
	Error  *struct {
		Code    int    `json:"code"`
		Message string `json:"message"`
		Data    struct {
			Reason string `json:"reason"`
			Kind   string `json:"kind"`
		} `json:"data"`
	} `json:"error"`
}

// startRawHost runs argv as uid (and its gid; -1: the test's own).
func startRawHost(t *testing.T, uid int, argv ...string) *rawHost {
	t.Helper()
	h := &rawHost{t: t, cmd: exec.Command(argv[0], argv[1:]...), lines: make(chan []byte, 64), stderr: testenv.NewLogCapture(t)}
	if uid >= 0 {
		h.cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: uint32(uid), Gid: uint32(uid)}}
		h.cmd.Env = []string{"HOME=/", "PATH=/usr/bin:/bin"}
		h.cmd.Dir = "/"
	}
	h.cmd.Stderr = h.stderr
	var err error
	if h.in, err = h.cmd.StdinPipe(); err != nil {
		t.Fatal(err)
	}
	out, err := h.cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := h.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() {
		r := bufio.NewReader(out)
		for {
			line, err := r.ReadBytes('\n')
			if len(line) > 0 {
				h.lines <- line
			}
			if err != nil {
				close(h.lines)
				return
			}
		}
	}()
	t.Cleanup(func() {
		h.in.Close()
		if h.cmd.ProcessState == nil {
			h.cmd.Process.Kill()
			h.cmd.Wait()
		}
	})
	return h
}

func (h *rawHost) send(line string) {
	h.t.Helper()
	if _, err := io.WriteString(h.in, line+"\n"); err != nil {
		h.t.Fatalf("writing to %s: %v", h.cmd.Path, err)
	}
}

// next reads the next answer.
func (h *rawHost) next() rawAnswer {
	h.t.Helper()
	select {
	case line, ok := <-h.lines:
		if !ok {
			h.t.Fatalf("%s ended its output; stderr:\n%s", h.cmd.Path, h.stderr)
		}
		return h.parse(line)
	case <-time.After(e2eWait):
		h.t.Fatalf("%s answered nothing within %v", h.cmd.Path, e2eWait)
	}
	return rawAnswer{}
}

func (h *rawHost) parse(line []byte) rawAnswer {
	h.t.Helper()
	var a rawAnswer
	if err := json.Unmarshal(line, &a); err != nil {
		h.t.Fatalf("%s wrote %q: %v", h.cmd.Path, line, err)
	}
	return a
}

// closeAndRead closes the host's side and reads every answer still to
// come, then the command's exit status.
func (h *rawHost) closeAndRead() ([]rawAnswer, int) {
	h.t.Helper()
	h.in.Close()
	var answers []rawAnswer
	deadline := time.After(e2eWait)
	for {
		select {
		case line, ok := <-h.lines:
			if !ok {
				h.cmd.Wait()
				return answers, h.cmd.ProcessState.ExitCode()
			}
			answers = append(answers, h.parse(line))
		case <-deadline:
			h.t.Fatalf("%s did not end within %v of its stdin closing", h.cmd.Path, e2eWait)
		}
	}
}
