package initstage

import (
	"bufio"
	"encoding/json"
	"fmt"

	"github.com/mcpsandbox/mcpsandbox/internal/field"
)

// Report is one line from the init stage (init_main.c) to the supervisor.
type Report struct {
	Error   string `json:"error,omitempty"`   // setup failed; the server never ran (settings as {Field})
	Started bool   `json:"started,omitempty"` // the server's exec succeeded
	Exited  bool   `json:"exited,omitempty"`  // the server ended as Code/Signal say
	Code    int    `json:"code,omitempty"`
	Signal  int    `json:"signal,omitempty"`
	Full    string `json:"full,omitempty"` // a writable place whose file system was full when a failed server ended
}

// SetupError is a report's Error as an error whose {Field} references the
// caller renders.
func (r Report) SetupError() error { return &field.Error{Problem: r.Error} }

// ReadReport reads the next report; io.EOF when the init stage is gone.
func ReadReport(r *bufio.Reader) (Report, error) {
	line, err := r.ReadBytes('\n')
	if err != nil {
		if len(line) == 0 {
			return Report{}, err
		}
	}
	var rep Report
	if err := json.Unmarshal(line, &rep); err != nil {
		return Report{}, fmt.Errorf("sandbox: garbled report from the init stage: %q", line)
	}
	return rep, nil
}
