package field

import (
	"errors"
	"fmt"
	"strings"
	"testing"
)

func flags(f string) string { return "--" + strings.ToLower(f) }

func TestRenderNamesFieldsTheCallersWay(t *testing.T) {
	e := &Error{Field: "NoFile", Value: "5000", Problem: "exceeds the hard limit 1024", Fix: "lower {NoFile} or raise the hard limit"}
	if got, want := e.Error(), "NoFile 5000: exceeds the hard limit 1024: lower NoFile or raise the hard limit"; got != want {
		t.Errorf("Error() = %q, want %q", got, want)
	}
	if got, want := e.Render(flags), "--nofile 5000: exceeds the hard limit 1024: lower --nofile or raise the hard limit"; got != want {
		t.Errorf("Render(flags) = %q, want %q", got, want)
	}
}

func TestRenderOmitsTheHeadWhenTheTextNamesTheField(t *testing.T) {
	e := &Error{Field: "Command", Problem: "no server command: put it {Command}", Fix: "e.g. node server.js"}
	after := func(string) string { return "after --" }
	if got, want := e.Render(after), "no server command: put it after --: e.g. node server.js"; got != want {
		t.Errorf("Render = %q, want %q", got, want)
	}
}

func TestRewriteRendersWrappedErrorsInAMessage(t *testing.T) {
	inner := &Error{Field: "User", Value: "bob", Problem: "unknown user", Fix: "drop {User}"}
	cause := &Error{Field: "Seccomp", Value: "x.json", Err: inner}
	wrapped := fmt.Errorf("sandbox setup failed: %w", errors.Join(errors.New("plain"), cause))
	got := Rewrite("restart failed: "+wrapped.Error(), wrapped, flags)
	want := "restart failed: sandbox setup failed: plain\n--seccomp x.json: --user bob: unknown user: drop --user"
	if got != want {
		t.Errorf("Rewrite = %q\nwant      %q", got, want)
	}
	if !errors.As(wrapped, new(*Error)) {
		t.Error("errors.As does not find the *Error in the chain")
	}
	if Message(nil, flags) != "" || Message(errors.New("x {User}"), flags) != "x {User}" {
		t.Error("Message must leave errors that are not *Error as they are")
	}
}

func TestHostFactsHaveNoFieldHead(t *testing.T) {
	e := &Error{Problem: "user namespaces are unavailable", Fix: "{Doctor} says why"}
	doctor := func(f string) string {
		if f == Doctor {
			return "`mcpsandbox doctor`"
		}
		return f
	}
	if got, want := e.Render(doctor), "user namespaces are unavailable: `mcpsandbox doctor` says why"; got != want {
		t.Errorf("Render = %q, want %q", got, want)
	}
}

// Text rendered with Keep renders later as if rendered at once.
func TestKeepDefersRendering(t *testing.T) {
	e := fmt.Errorf("starting: %w", &Error{Field: "NoFile", Value: "5000", Problem: "exceeds the hard limit 1024", Fix: "lower {NoFile}; {Doctor} says more"})
	kept := Message(e, Keep)
	if got, want := Refs(kept, flags), Message(e, flags); got != want {
		t.Errorf("Refs(Message(e, Keep)) = %q, want %q", got, want)
	}
	if strings.Contains(Refs(kept, flags), "NoFile") {
		t.Errorf("a kept reference was not rendered: %q", Refs(kept, flags))
	}
}
