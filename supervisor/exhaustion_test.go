package supervisor_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpsandbox/mcpsandbox/internal/testenv"
	"github.com/mcpsandbox/mcpsandbox/policy"
	"github.com/mcpsandbox/mcpsandbox/supervisor"
)

const exhaustionDeadline = 2 * time.Minute

// TestExhaustionRestarts runs the hostile server's bombs through the
// supervisor under the default confinement: each must end in a restart with
// the reason in the log, while the host's session carries on and every host
// request gets exactly one answer. Each runs inside an outer cgroup limit,
// so a confinement bug cannot take the machine down (root, or a user with a
// delegated cgroup v2, may set one).
func TestExhaustionRestarts(t *testing.T) {
	hostile := testenv.BuildHostile(t)
	for _, bomb := range []struct {
		tool string
		// memory and pids override the defaults (1 GiB, 256): a smaller
		// memory limit keeps the memory bomb light on a shared machine.
		memory policy.ByteSize
		// reason is what the exit event says; logged must all be in the log.
		reason string
		logged []string
	}{
		{tool: "membomb", memory: 256 * policy.MiB, reason: "out of memory", logged: []string{"out of memory", "restarted"}},
		{tool: "forkbomb", reason: "pids limit", logged: []string{"pids limit", "forkbomb: fork failed", "restarted"}},
		{tool: "fill_tmp", reason: "exited with status 3", logged: []string{"no space left on device", "exited with status 3", "restarted"}},
	} {
		t.Run(bomb.tool, func(t *testing.T) {
			requireConfinement(t)
			pol := policy.Default()
			pol.Command = []string{hostile}
			if bomb.memory > 0 {
				pol.Memory = bomb.memory
			}
			testenv.OuterLimit(t, int64(pol.Memory)+512<<20, pol.Pids+512)

			s := startExhaustionSession(t, pol)
			before := s.instance(t)
			_, err := s.sess.CallTool(s.ctx, &mcp.CallToolParams{Name: bomb.tool, Arguments: map[string]any{}})
			var werr *jsonrpc.Error
			if !errors.As(err, &werr) || werr.Code != supervisor.CodeServerCrashed {
				t.Fatalf("%s: got %v, want the JSON-RPC error %d (server crashed, restarting)", bomb.tool, err, supervisor.CodeServerCrashed)
			}
			exited := s.waitEvent(t, supervisor.EventExited)
			if !strings.Contains(exited.Reason, bomb.reason) {
				t.Errorf("exit reason %q does not say %q", exited.Reason, bomb.reason)
			}
			s.waitEvent(t, supervisor.EventReady)

			// The session continues on a new server process.
			if after := s.instance(t); after == before {
				t.Errorf("instance %s answered before and after the %s: no restart happened", after, bomb.tool)
			}
			res, err := s.sess.CallTool(s.ctx, &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"text": "still here"}})
			if err != nil || res.IsError {
				t.Fatalf("echo after the restart: %v %+v", err, res)
			}

			s.end(t)
			if left := testenv.ProcessesRunning(hostile); len(left) > 0 {
				t.Errorf("processes of the bombed server outlived it: %v", left)
			}
			for _, want := range bomb.logged {
				if !s.log.Contains(want) {
					t.Errorf("the log does not say %q:\n%s", want, s.log.String())
				}
			}
			s.host.checkOneAnswerEach(t)
		})
	}
}

// exhaustionSession is a host connected through supervisor.Run.
type exhaustionSession struct {
	ctx     context.Context
	sess    *mcp.ClientSession
	host    *hostRecorder
	log     *testenv.LogCapture
	events  chan supervisor.Event
	outcome chan supervisor.Outcome
	hostIn  *io.PipeWriter
}

func startExhaustionSession(t *testing.T, pol policy.Policy) *exhaustionSession {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), exhaustionDeadline)
	t.Cleanup(cancel)
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	s := &exhaustionSession{
		ctx:     ctx,
		host:    newHostRecorder(),
		log:     testenv.NewLogCapture(t),
		events:  make(chan supervisor.Event, 256),
		outcome: make(chan supervisor.Outcome, 1),
		hostIn:  inW,
	}
	opts := supervisor.Options{
		Name:    "hostile",
		Policy:  pol,
		HostIn:  inR,
		HostOut: s.host.responses(outW),
		Log:     slog.New(slog.NewTextHandler(s.log, &slog.HandlerOptions{Level: slog.LevelDebug})),
		Events: func(e supervisor.Event) {
			select {
			case s.events <- e:
			default: // the test stopped reading; it has what it needs
			}
		},
	}
	go func() {
		out, err := supervisor.Run(ctx, opts)
		if err != nil {
			t.Errorf("supervisor.Run: %v", err)
		}
		outR.Close()
		s.outcome <- out
	}()
	client := mcp.NewClient(&mcp.Implementation{Name: "exhaustion-test", Version: "0"}, nil)
	sess, err := client.Connect(ctx, &mcp.IOTransport{Reader: outR, Writer: s.host.requests(inW)}, nil)
	if err != nil {
		t.Fatalf("initialize through the supervisor: %v\nlog:\n%s", err, s.log.String())
	}
	s.sess = sess
	return s
}

// instance asks the server which process it is.
func (s *exhaustionSession) instance(t *testing.T) string {
	t.Helper()
	res, err := s.sess.CallTool(s.ctx, &mcp.CallToolParams{Name: "instance", Arguments: map[string]any{}})
	if err != nil || res.IsError || len(res.Content) != 1 {
		t.Fatalf("instance: %v %+v\nlog:\n%s", err, res, s.log.String())
	}
	return res.Content[0].(*mcp.TextContent).Text
}

func (s *exhaustionSession) waitEvent(t *testing.T, kind supervisor.EventKind) supervisor.Event {
	t.Helper()
	for {
		select {
		case e := <-s.events:
			if e.Kind == supervisor.EventStopped {
				t.Fatalf("the server stopped for good: %s\nlog:\n%s", e.Reason, s.log.String())
			}
			if e.Kind == kind {
				return e
			}
		case <-s.ctx.Done():
			t.Fatalf("no %s event before the deadline\nlog:\n%s", kind, s.log.String())
		}
	}
}

// end disconnects the host and waits for supervisor.Run to return.
func (s *exhaustionSession) end(t *testing.T) {
	t.Helper()
	s.sess.Close()
	s.hostIn.Close()
	select {
	case out := <-s.outcome:
		if out.Failed || out.Restarts != 1 {
			t.Errorf("outcome %+v, want exit code 0 after exactly one restart", out)
		}
	case <-s.ctx.Done():
		t.Fatalf("supervisor.Run did not return after the host left\nlog:\n%s", s.log.String())
	}
}

// hostRecorder counts, per JSON-RPC id, the requests the host sent and the
// responses it got.
type hostRecorder struct {
	mu        sync.Mutex
	sent, got map[string]int
}

func newHostRecorder() *hostRecorder {
	return &hostRecorder{sent: map[string]int{}, got: map[string]int{}}
}

func (h *hostRecorder) requests(w io.WriteCloser) io.WriteCloser {
	return &lineTap{w: w, each: func(m wireMessage) {
		if m.Method != "" && m.ID != nil {
			h.count(h.sent, m.ID)
		}
	}}
}

func (h *hostRecorder) responses(w io.WriteCloser) io.Writer {
	return &lineTap{w: w, each: func(m wireMessage) {
		if m.Method == "" && m.ID != nil {
			h.count(h.got, m.ID)
		}
	}}
}

func (h *hostRecorder) count(m map[string]int, id json.RawMessage) {
	h.mu.Lock()
	m[string(id)]++
	h.mu.Unlock()
}

func (h *hostRecorder) checkOneAnswerEach(t *testing.T) {
	t.Helper()
	h.mu.Lock()
	defer h.mu.Unlock()
	testenv.CheckOneAnswerEach(t, h.sent, h.got)
}

type wireMessage struct {
	ID     json.RawMessage `json:"id"`
	Method string          `json:"method"`
}

// lineTap passes bytes through and hands each complete line, decoded, to each.
type lineTap struct {
	w    io.WriteCloser
	buf  []byte
	each func(wireMessage)
}

func (l *lineTap) Write(p []byte) (int, error) {
	l.buf = append(l.buf, p...)
	for {
		i := bytes.IndexByte(l.buf, '\n')
		if i < 0 {
			break
		}
		var m wireMessage
		if json.Unmarshal(l.buf[:i], &m) == nil {
			l.each(m)
		}
		l.buf = l.buf[i+1:]
	}
	return l.w.Write(p)
}

func (l *lineTap) Close() error { return l.w.Close() }
