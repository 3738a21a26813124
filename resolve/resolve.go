package resolve

import (
	"errors"
	"fmt"
	"reflect"
	"slices"

	"github.com/mcpsandbox/mcpsandbox/internal/field"
	"github.com/mcpsandbox/mcpsandbox/launch"
	"github.com/mcpsandbox/mcpsandbox/policy"
)

// Request is what a caller resolves, in its own terms.
type Request struct {
	// Command is the server's launch line.
	Command []string
	// PolicyOnly resolves the policy without a launch line (Command is
	// then empty), as policy check reads a file: the server's arguments
	// are unknown (${ARG1} and the like yield nothing), its name and state
	// directory a stand-in's, and no command is required.
	PolicyOnly bool
	// Policy names the policy to start from: a file (policy.IsFile;
	// relative to Host.WorkDir) or a built-in; "" chooses the built-in
	// that Command selects.
	Policy string
	// Overrides holds the values the caller sets over the policy's, in the
	// fields that Given names; its list fields add to the policy's lists.
	Overrides policy.Policy
	Given     []string // fields of policy.Policy, e.g. "Memory"
	// Host is the machine as seen by whoever the server is started for.
	Host launch.Host
}

// Resolution is what a server will run under, and how it came about.
type Resolution struct {
	Policy policy.Policy   // what to apply; its Command is what to start
	Launch launch.Launch   // the launch line as read on the host
	Ref    string          // the policy file or built-in applied
	Chosen bool            // Ref was chosen from the launch line, not given; Launch.Choice.Why says why
	Chain  []string        // Ref and what it extends, in turn ("built-in NAME" or the file)
	Origin policy.Origin   // the fields a policy file set (not those given), and where
	Given  map[string]bool // the fields the caller's overrides set

	// Grants are Policy's ReadOnly and ReadWrite with who asked for each
	// (launch line, built-in, file, overrides) and what each stands in for.
	Grants []Grant

	Overrides policy.Policy // as the request gave them

	// NoApprovalDropped are the approval tiers (approve-tools globs, then
	// approve-annotated hints) that Policy.NoApproval took away, for the
	// caller to log.
	NoApprovalDropped []string

	// Host is the machine the resolution was made for (its environment
	// is what a passed variable's value is read from).
	Host launch.Host
}

// PolicyField names the policy reference in errors (field.Error.Field):
// run calls it --policy, the daemon its configuration's key.
const PolicyField = "Policy"

// Resolve makes the policy req asks for. Its errors are field errors
// (internal/field) for the caller to render in its own names: a policy
// file's are at FILE:LINE:COL (policy.FileError), one reading the
// reference itself names PolicyField. On an error the Resolution holds as
// much as was settled (the launch line, the reference).
func Resolve(req Request) (Resolution, error) {
	r := Resolution{
		Launch:    launch.Read(req.Command, launch.BuiltinMatches(), req.Host),
		Ref:       req.Policy,
		Overrides: req.Overrides,
		Given:     map[string]bool{},
		Host:      req.Host,
	}
	if r.Ref == "" {
		r.Ref, r.Chosen = r.Launch.Choice.Policy, true
	}
	for _, f := range req.Given {
		if _, ok := reflect.TypeFor[policy.Policy]().FieldByName(f); !ok || f == "Command" {
			return r, fmt.Errorf("resolve: %q is no field of a policy that can be given", f)
		}
		r.Given[f] = true
	}
	over := req.Overrides
	over.Command = slices.Clone(req.Command)
	if req.PolicyOnly {
		if len(req.Command) > 0 {
			return r, errors.New("resolve: a request for the policy only has no command")
		}
		over.Command = []string{r.Launch.Name} // validated as any command would be
	}
	p, origin, chain, err := withPolicy(r.Ref, req.Host.WorkDir, r.Given, over, r.Launch.Vars)
	r.Chain, r.Origin = chain, origin
	if req.PolicyOnly {
		p.Command = nil
	} else if err == nil {
		err = r.applyLaunch(&p, req.Overrides)
	}
	if err != nil {
		return r, err
	}
	r.NoApprovalDropped = dropTiers(&p)
	r.Policy = p
	return r, nil
}

// dropTiers empties p's approval tiers when p.NoApproval says so, and
// returns them: lists add to what a file extends, so only this takes a
// built-in's tier away.
func dropTiers(p *policy.Policy) []string {
	if !p.NoApproval {
		return nil
	}
	dropped := append(slices.Clone(p.ApproveTools), p.ApproveAnnotated...)
	p.ApproveTools, p.ApproveAnnotated = nil, nil
	return dropped
}

// applyLaunch adds to p what the launch line needs, its grants settled
// with the policy's (grants) into r.Grants.
func (r *Resolution) applyLaunch(p *policy.Policy, over policy.Policy) error {
	var given [2]int
	if r.Given["ReadOnly"] {
		given[0] = len(over.ReadOnly)
	}
	if r.Given["ReadWrite"] {
		given[1] = len(over.ReadWrite)
	}
	fromBuiltin, builtin := builtinItems(*p, r.Chain, given, r.Launch.Vars)
	gs, err := grants(*p, fromBuiltin, given, r.Chain[0], builtin, r.Launch)
	if err != nil {
		return err
	}
	r.Launch.Finish(p)
	p.ReadOnly, p.ReadWrite = nil, nil
	for _, g := range gs {
		if g.Writable {
			p.ReadWrite = append(p.ReadWrite, g.Path)
		} else {
			p.ReadOnly = append(p.ReadOnly, g.Path)
		}
	}
	r.Grants = gs
	return nil
}

// Why says why Ref was chosen from the launch line ("" when it was given).
func (r Resolution) Why() string {
	if !r.Chosen {
		return ""
	}
	return r.Launch.Choice.Why
}

// StateDir is the server's state directory when its policy turns it on.
func (r Resolution) StateDir() string {
	if !r.Policy.State || r.Policy.Unconfined {
		return ""
	}
	return r.Launch.StateDir
}

// FormerState is the state directory an earlier mcpsandbox gave the
// server under a name others shared, when its policy turns the state
// directory on and it has none of its own yet (launch.Former).
func (r Resolution) FormerState() launch.Former {
	if r.StateDir() == "" {
		return launch.Former{}
	}
	return r.Launch.FormerState()
}

// refError names the policy reference in an error of reading it.
func refError(ref string, err error) error {
	return &field.Error{Field: PolicyField, Value: ref, Err: err}
}
