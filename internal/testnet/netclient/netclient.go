// Package netclient names the real network clients the egress tests run
// (Node's fetch, https and ws, Python's urllib, Go's net/http, curl, psql)
// and how each one is started against a URL, so the MCP test server's
// connect tool (testdata/egress/mcpnet) and the harness's unconfined runs
// start them alike. It is apart from package testnet because the test
// server links it alone, inside the sandbox, without the harness.
package netclient

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"os/exec"
	"path/filepath"
	"strings"
	"time"
)

// The clients, by the name the connect tool takes.
const (
	NodeFetch    = "node-fetch"    // Node's global fetch (undici)
	NodeHTTPS    = "node-https"    // Node's http.get / https.get
	NodeWS       = "node-ws"       // the ws package: three messages over one long-lived connection
	PythonURLLib = "python-urllib" // urllib.request.urlopen
	GoHTTP       = "go-http"       // net/http, a static binary (mcpnet get)
	Curl         = "curl"
	Psql         = "psql" // PostgreSQL's client, a non-HTTP protocol
)

// Names lists every client.
func Names() []string {
	return []string{NodeFetch, NodeHTTPS, NodeWS, PythonURLLib, GoHTTP, Curl, Psql}
}

// Timeout is each client's own bound on a connection, so a dropped
// connection fails the client instead of hanging it.
const Timeout = 15 * time.Second

// Kit is where the clients' programs and scripts are: absolute paths, for
// the sandbox reads no PATH.
type Kit struct {
	Dir    string // the scripts (fetch.cjs, https-get.cjs, ws.cjs, urllib_get.py) and node_modules/ws
	CA     string // PEM file of the CA the clients trust
	Node   string
	Python string
	Curl   string
	Psql   string
	Go     string // the mcpnet binary, which is the Go client as `mcpnet get URL`
}

// Flags registers the kit's fields as flags of fs (what Args passes).
func (k *Kit) Flags(fs *flag.FlagSet) {
	fs.StringVar(&k.Dir, "dir", "", "directory of the client scripts")
	fs.StringVar(&k.CA, "ca", "", "CA certificate (PEM) the clients trust")
	fs.StringVar(&k.Node, "node", "", "node")
	fs.StringVar(&k.Python, "python", "", "python3")
	fs.StringVar(&k.Curl, "curl", "", "curl")
	fs.StringVar(&k.Psql, "psql", "", "psql")
	fs.StringVar(&k.Go, "go", "", "the mcpnet binary (Go's net/http client)")
}

// Args is the kit as flags of `mcpnet serve`.
func (k *Kit) Args() []string {
	return []string{"--dir", k.Dir, "--ca", k.CA, "--node", k.Node, "--python", k.Python, "--curl", k.Curl, "--psql", k.Psql, "--go", k.Go}
}

// Command is client's command line against url, with the environment it
// runs in (nothing from the caller's: the CA and a fixed PATH).
func (k *Kit) Command(ctx context.Context, client, url string) (*exec.Cmd, error) {
	secs := fmt.Sprint(int(Timeout.Seconds()))
	var argv []string
	switch client {
	case NodeFetch:
		argv = []string{k.Node, filepath.Join(k.Dir, "fetch.cjs"), url}
	case NodeHTTPS:
		argv = []string{k.Node, filepath.Join(k.Dir, "https-get.cjs"), url}
	case NodeWS:
		argv = []string{k.Node, filepath.Join(k.Dir, "ws.cjs"), url}
	case PythonURLLib:
		argv = []string{k.Python, filepath.Join(k.Dir, "urllib_get.py"), url}
	case GoHTTP:
		argv = []string{k.Go, "get", url}
	case Curl:
		argv = []string{k.Curl, "-sS", "--fail-with-body", "--max-time", secs, "--cacert", k.CA, url}
	case Psql:
		argv = []string{k.Psql, "-X", "-A", "-t", "-v", "ON_ERROR_STOP=1", "-c", "select 'pg-ok ' || current_user", url}
	default:
		return nil, fmt.Errorf("no client %q: the clients are %s", client, strings.Join(Names(), ", "))
	}
	if argv[0] == "" {
		return nil, fmt.Errorf("client %s: its program was not given (see Kit)", client)
	}
	cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
	cmd.Env = []string{
		"PATH=/usr/local/bin:/usr/bin:/bin",
		"HOME=/tmp",
		"LC_ALL=C",
		"SSL_CERT_FILE=" + k.CA,
		"NODE_EXTRA_CA_CERTS=" + k.CA,
		"MCPNET_TIMEOUT_SECONDS=" + secs,
		"PGCONNECT_TIMEOUT=" + secs,
	}
	cmd.WaitDelay = time.Second
	return cmd, nil
}

// Result is what one client run showed.
type Result struct {
	Client    string `json:"client"`
	URL       string `json:"url"`
	Exit      int    `json:"exit"` // -1 when it did not start or was killed
	Stdout    string `json:"stdout"`
	Stderr    string `json:"stderr"`
	Error     string `json:"error,omitempty"` // why it did not start or finish
	ElapsedMS int64  `json:"elapsed_ms"`
}

// OK is whether the client exited 0.
func (r Result) OK() bool { return r.Exit == 0 && r.Error == "" }

func (r Result) String() string {
	return fmt.Sprintf("%s %s: exit %d in %dms %s\nstdout: %s\nstderr: %s", r.Client, r.URL, r.Exit, r.ElapsedMS, r.Error, r.Stdout, r.Stderr)
}

// Run runs client against url and waits for it, at most twice its own
// timeout.
func (k *Kit) Run(ctx context.Context, client, url string) Result {
	return k.RunVia(ctx, client, url, (*exec.Cmd).Start)
}

// RunVia is Run with the client started by start, which may change how
// (another namespace, a wrapper program) before starting it.
func (k *Kit) RunVia(ctx context.Context, client, url string, start func(*exec.Cmd) error) Result {
	r := Result{Client: client, URL: url, Exit: -1}
	ctx, cancel := context.WithTimeout(ctx, 2*Timeout)
	defer cancel()
	cmd, err := k.Command(ctx, client, url)
	if err != nil {
		r.Error = err.Error()
		return r
	}
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	began := time.Now()
	if err = start(cmd); err == nil {
		err = cmd.Wait()
	}
	r.ElapsedMS = time.Since(began).Milliseconds()
	r.Stdout, r.Stderr = stdout.String(), stderr.String()
	var ee *exec.ExitError
	switch {
	case ctx.Err() != nil:
		r.Error = "killed: no answer within " + (2 * Timeout).String()
	case errors.As(err, &ee):
		r.Exit = ee.ExitCode()
	case err != nil:
		r.Error = err.Error()
	default:
		r.Exit = 0
	}
	return r
}

// NameNotFound is whether r failed because its host name does not exist
// (NXDOMAIN), as each client words it; a timeout or a refusal is not.
func NameNotFound(r Result) bool {
	if r.OK() {
		return false
	}
	out := r.Stdout + r.Stderr
	for _, says := range []string{
		"ENOTFOUND",                           // node (getaddrinfo)
		"Name or service not known",           // glibc getaddrinfo: python, psql
		"No address associated with hostname", // glibc, a name without A records
		"no such host",                        // Go
		"Could not resolve host",              // curl
	} {
		if strings.Contains(out, says) {
			return true
		}
	}
	return false
}
