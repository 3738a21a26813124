package demo

import (
	"context"
	"encoding/json"
	"net"
	"os"
	"strings"
	"syscall"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// ProbeTool is the example server's tool that reports, from inside the
// server process, what it can see of its confinement and tries two things a
// confined server must not be able to do.
const ProbeTool = "probe"

// ProbeArgs names what the probe should try to reach on the host.
type ProbeArgs struct {
	ReadFile string `json:"read_file,omitempty"` // a host file the caller can read
	DialTCP  string `json:"dial_tcp,omitempty"`  // a host loopback address that accepts connections
}

// ProbeReport is what the server saw from inside.
type ProbeReport struct {
	PID        int               `json:"pid"`
	UID        int               `json:"uid"`
	GID        int               `json:"gid"`
	Hostname   string            `json:"hostname"`
	Namespaces map[string]string `json:"namespaces"` // "net" → "net:[4026531840]"
	Seccomp    string            `json:"seccomp"`    // /proc/self/status Seccomp: 0 off, 1 strict, 2 filter
	NoNewPrivs string            `json:"no_new_privs"`
	CapEff     string            `json:"cap_eff"`            // effective capabilities, hex
	Cgroup     string            `json:"cgroup"`             // /proc/self/cgroup
	Limits     CgroupLimits      `json:"limits"`             // as the server reads them from /sys/fs/cgroup
	NoFile     uint64            `json:"nofile"`             // RLIMIT_NOFILE soft limit
	Processes  int               `json:"processes"`          // pids visible in /proc
	AppArmor   string            `json:"apparmor,omitempty"` // the AppArmor label, where AppArmor runs
	Read       Attempt           `json:"read"`
	Dial       Attempt           `json:"dial"`
}

// Attempt is one thing the probe tried.
type Attempt struct {
	Target  string `json:"target"`
	Allowed bool   `json:"allowed"`
	Error   string `json:"error,omitempty"`
}

func addProbeTool(s *mcp.Server) {
	mcp.AddTool(s, &mcp.Tool{Name: ProbeTool,
		Description: "Reports uid, namespaces, seccomp, cgroup and limits as seen from inside, and tries to read read_file and connect to dial_tcp."},
		func(_ context.Context, _ *mcp.CallToolRequest, a ProbeArgs) (*mcp.CallToolResult, any, error) {
			r := probe(a)
			text, err := json.Marshal(r)
			if err != nil {
				return nil, nil, err
			}
			return textResult(string(text)), nil, nil
		})
}

func probe(a ProbeArgs) ProbeReport {
	r := ProbeReport{
		PID:        os.Getpid(),
		UID:        os.Getuid(),
		GID:        os.Getgid(),
		Namespaces: map[string]string{},
	}
	r.Hostname, _ = os.Hostname()
	for _, ns := range []string{"mnt", "pid", "net", "ipc", "uts", "cgroup", "user"} {
		if link, err := os.Readlink("/proc/self/ns/" + ns); err == nil {
			r.Namespaces[ns] = link
		}
	}
	status, _ := os.ReadFile("/proc/self/status")
	r.Seccomp = statusField(status, "Seccomp")
	r.NoNewPrivs = statusField(status, "NoNewPrivs")
	r.CapEff = statusField(status, "CapEff")
	if label, err := os.ReadFile("/proc/self/attr/apparmor/current"); err == nil {
		r.AppArmor = strings.TrimSpace(string(label))
	}
	cg, _ := os.ReadFile("/proc/self/cgroup")
	r.Cgroup = strings.TrimSpace(string(cg))
	r.Limits = readCgroupLimits(r.Cgroup)
	var lim syscall.Rlimit
	if syscall.Getrlimit(syscall.RLIMIT_NOFILE, &lim) == nil {
		r.NoFile = lim.Cur
	}
	if entries, err := os.ReadDir("/proc"); err == nil {
		for _, e := range entries {
			if e.Name()[0] >= '0' && e.Name()[0] <= '9' {
				r.Processes++
			}
		}
	}
	if a.ReadFile != "" {
		_, err := os.ReadFile(a.ReadFile)
		r.Read = attempt(a.ReadFile, err)
	}
	if a.DialTCP != "" {
		conn, err := net.DialTimeout("tcp", a.DialTCP, 2*time.Second)
		if err == nil {
			conn.Close()
		}
		r.Dial = attempt(a.DialTCP, err)
	}
	return r
}

func attempt(target string, err error) Attempt {
	if err != nil {
		return Attempt{Target: target, Error: err.Error()}
	}
	return Attempt{Target: target, Allowed: true}
}

// statusField returns the value of "Key:\tvalue" in /proc/self/status.
func statusField(status []byte, key string) string {
	for _, line := range strings.Split(string(status), "\n") {
		if v, ok := strings.CutPrefix(line, key+":"); ok {
			return strings.TrimSpace(v)
		}
	}
	return ""
}
