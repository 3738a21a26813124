package sandbox

import (
	"bufio"
	"encoding/json"
	"fmt"
)

// InitArg0 is argv[0] of the re-executed init stage: PID 1 of the server's
// pid namespace, which builds the sandbox and then stays as the reaper. The
// init stage is C (init_main.c), run by this package's ELF constructor
// (zygote.c) before the Go runtime starts: any binary that links this
// package can be re-executed as one.
const InitArg0 = "mcpsandbox-init"

// report is one line from the init stage (init_main.c) to the supervisor.
type report struct {
	Error   string `json:"error,omitempty"`   // setup failed; the server never ran
	Started bool   `json:"started,omitempty"` // the server's exec succeeded
	Exited  bool   `json:"exited,omitempty"`  // the server ended as Code/Signal say
	Code    int    `json:"code,omitempty"`
	Signal  int    `json:"signal,omitempty"`
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
