package cgroups

import (
	"errors"
	"syscall"

	"github.com/mcpsandbox/mcpsandbox/internal/field"
)

const fixDoctor = "{" + field.Doctor + "} shows what this host supports"

// limitsError says which part of the cgroup confinement cannot be enforced
// and how to fix that.
type limitsError struct {
	Missing string
	Fix     string
	Err     error // underlying cause, may be nil
}

func (e *limitsError) Error() string { return e.Render(field.Plain) }

// Render names the settings and the host check in Fix the caller's way.
func (e *limitsError) Render(name field.Namer) string {
	msg := "cgroups: cannot enforce limits: " + e.Missing
	if e.Err != nil {
		msg += " (" + e.Err.Error() + ")"
	}
	return msg + "; fix: " + field.Refs(e.Fix, name)
}

func (e *limitsError) Unwrap() error { return e.Err }

// creationError turns a failure to create or configure a cgroup below dir
// into a diagnosis.
func creationError(dir string, err error) error {
	var ce *limitsError
	if errors.As(err, &ce) {
		return err
	}
	switch {
	case errors.Is(err, syscall.EACCES), errors.Is(err, syscall.EPERM):
		return &limitsError{
			Missing: "no permission to create a cgroup beneath " + dir,
			Fix: "run mcpsandbox as root, or (cgroup v2) as a systemd service with Delegate=yes, or " +
				"`systemd-run --user --scope -p Delegate=yes mcpsandbox ...`; " + fixDoctor,
			Err: err,
		}
	case errors.Is(err, syscall.EROFS):
		return &limitsError{
			Missing: "the cgroup filesystem is read-only at " + dir,
			Fix: "give mcpsandbox a writable cgroup subtree (containers: run with a delegated cgroup, " +
				"e.g. docker --cgroupns=private with cgroup v2); " + fixDoctor,
			Err: err,
		}
	}
	return &limitsError{Missing: "creating a cgroup beneath " + dir + " failed", Fix: fixDoctor, Err: err}
}
