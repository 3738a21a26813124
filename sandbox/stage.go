package sandbox

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"runtime"
)

// InitArg0 is argv[0] of the re-executed init stage: PID 1 of the server's
// pid namespace, which builds the sandbox and then stays as the reaper.
const InitArg0 = "mcpsandbox-init"

// Descriptor numbers the stages receive their pipes on.
const (
	configFD = 3 // config JSON, read to EOF
	reportFD = 4 // init → supervisor: reports
)

// InitStage runs the init stage and never returns when this process was
// started as one; otherwise it returns at once.
func InitStage() {
	if os.Args[0] == InitArg0 {
		// One thread does the setup and forks the server: namespace changes
		// made with unshare apply to it only.
		runtime.LockOSThread()
		os.Exit(runInit())
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

// readConfig reads the stage's configuration from configFD and closes it.
func readConfig() (*initConfig, error) {
	f := os.NewFile(configFD, "config")
	defer f.Close()
	var cfg initConfig
	if err := json.NewDecoder(f).Decode(&cfg); err != nil {
		return nil, fmt.Errorf("reading the sandbox configuration: %v", err)
	}
	return &cfg, nil
}
