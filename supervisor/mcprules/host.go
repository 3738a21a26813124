package mcprules

import (
	"errors"
	"fmt"
)

// The errors Host.Request returns besides ctx's: a rule tells a host that
// went away (deny, "host-gone") from one that answered with an error.
var (
	// ErrHostGone: the host closed its side before it answered.
	ErrHostGone = errors.New("the host went away before it answered")
	// ErrTooManyAsks: too many of mcpsandbox's own requests already await
	// the host's answer; this one was not sent.
	ErrTooManyAsks = errors.New("too many of mcpsandbox's own requests await the host's answer")
)

// HostError is the host's error response to one of mcpsandbox's requests.
type HostError struct {
	Code    int
	Message string
}

func (e *HostError) Error() string {
	return fmt.Sprintf("the host answered with error %d: %s", e.Code, e.Message)
}
