package seccomp

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"runtime"
	"slices"
	"strconv"
	"strings"

	libseccomp "github.com/seccomp/libseccomp-golang"
	"golang.org/x/sys/unix"

	"github.com/mcpsandbox/mcpsandbox/internal/field"
)

// dockerProfile is a Docker/OCI seccomp profile (the JSON of Docker's
// default.json and of OCI's linux.seccomp). Semantics follow Docker's and
// runc's, with the sandbox's facts: the server holds no capabilities, and
// only the native architecture is filtered (architectures/archMap are read
// but other arches are always killed). "flags" and "listenerPath" are
// ignored: TSYNC is always used, and no seccomp agent exists.
type dockerProfile struct {
	DefaultAction   string          `json:"defaultAction"`
	DefaultErrnoRet *uint           `json:"defaultErrnoRet"`
	Architectures   []string        `json:"architectures"`
	ArchMap         []dockerArchMap `json:"archMap"`
	Flags           []string        `json:"flags"`
	ListenerPath    string          `json:"listenerPath"`
	Syscalls        []dockerSyscall `json:"syscalls"`

	path          string
	data          []byte
	offsets       []int64 // where each Syscalls entry starts in data
	defaultDenies bool    // the default action refuses (not allow or log)
}

type dockerArchMap struct {
	Architecture     string   `json:"architecture"`
	SubArchitectures []string `json:"subArchitectures"`
}

type dockerSyscall struct {
	Name     string       `json:"name"` // older single-name form
	Names    []string     `json:"names"`
	Action   string       `json:"action"`
	ErrnoRet *uint        `json:"errnoRet"`
	Args     []dockerArg  `json:"args"`
	Includes dockerFilter `json:"includes"`
	Excludes dockerFilter `json:"excludes"`
}

type dockerArg struct {
	Index    uint   `json:"index"`
	Value    uint64 `json:"value"`
	ValueTwo uint64 `json:"valueTwo"`
	Op       string `json:"op"`
}

type dockerFilter struct {
	Arches    []string `json:"arches"`
	Caps      []string `json:"caps"`
	MinKernel string   `json:"minKernel"`
}

func readDockerProfile(path string) (*dockerProfile, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, &field.Error{Field: "Seccomp", Value: strconv.Quote(path), Problem: `is neither "default" nor a readable Docker/OCI seccomp profile`, Err: err}
	}
	p := &dockerProfile{path: path, data: data}
	if err := json.Unmarshal(data, p); err != nil {
		var syn *json.SyntaxError
		var typ *json.UnmarshalTypeError
		switch {
		case errors.As(err, &syn):
			return nil, fmt.Errorf("%s: invalid JSON: %s", p.at(syn.Offset-1), syn.Error())
		case errors.As(err, &typ):
			return nil, fmt.Errorf("%s: %s must be a %s, not a JSON %s", p.at(typ.Offset-1), typ.Field, typ.Type, typ.Value)
		}
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if p.DefaultAction == "" {
		return nil, fmt.Errorf("%s: defaultAction is missing; a Docker/OCI seccomp profile needs one, e.g. \"defaultAction\": \"SCMP_ACT_ERRNO\"", path)
	}
	p.offsets = syscallEntryOffsets(data)
	return p, nil
}

// build turns the profile into a filter for the native architecture.
func (p *dockerProfile) build(logDenials bool) (*builder, error) {
	def, err := dockerAction(p.DefaultAction, p.DefaultErrnoRet)
	if err != nil {
		return nil, fmt.Errorf("%s: defaultAction: %w", p.path, err)
	}
	switch def.SetReturnCode(0) {
	case libseccomp.ActAllow, libseccomp.ActLog:
	default:
		p.defaultDenies = true
	}
	b, err := newBuilder(def, logDenials)
	if err != nil {
		return nil, err
	}
	kernel := kernelVersion()
	for i := range p.Syscalls {
		if err := p.addRule(b, i, kernel); err != nil {
			b.release()
			return nil, err
		}
	}
	return b, nil
}

func (p *dockerProfile) addRule(b *builder, i int, kernel [2]int) error {
	sc := &p.Syscalls[i]
	names := sc.Names
	if sc.Name != "" {
		names = append([]string{sc.Name}, names...)
	}
	where := fmt.Sprintf("%s: syscalls[%d]", p.entryAt(i), i)
	if len(names) == 0 {
		return fmt.Errorf("%s: no syscall names; add \"names\": [...]", where)
	}
	where += " (" + strings.Join(names, ", ") + ")"
	act, err := dockerAction(sc.Action, sc.ErrnoRet)
	if err != nil {
		return fmt.Errorf("%s: %w", where, err)
	}
	act = b.denied(act)
	conds, err := dockerConditions(sc.Args)
	if err != nil {
		return fmt.Errorf("%s: %w", where, err)
	}
	var nrs []libseccomp.ScmpSyscall
	for _, name := range names {
		// Unknown names (newer or older kernels, other arches) are skipped,
		// as Docker does; known ones still count for the ENOSYS threshold.
		if nr, _, native := b.resolve(name); native {
			nrs = append(nrs, nr)
		}
	}
	apply, err := sc.appliesHere(kernel)
	if err != nil {
		return fmt.Errorf("%s: %w", where, err)
	}
	if !apply || act == b.def {
		return nil // libseccomp refuses rules that repeat the default action
	}
	for _, nr := range nrs {
		for _, c := range conds {
			if err := b.f.AddRuleConditional(nr, act, c); err != nil {
				name, _ := nr.GetName()
				return fmt.Errorf("%s: rule for %s: %w", where, name, err)
			}
		}
	}
	return nil
}

// appliesHere reports whether the rule's includes/excludes select it for a
// capability-less process on this architecture and kernel.
func (sc *dockerSyscall) appliesHere(kernel [2]int) (bool, error) {
	in, ex := sc.Includes, sc.Excludes
	if len(in.Caps) > 0 {
		return false, nil // the server has no capabilities
	}
	if len(in.Arches) > 0 && !slices.Contains(in.Arches, runtime.GOARCH) {
		return false, nil
	}
	if slices.Contains(ex.Arches, runtime.GOARCH) {
		return false, nil
	}
	for _, f := range []struct {
		v       string
		include bool
	}{{in.MinKernel, true}, {ex.MinKernel, false}} {
		if f.v == "" {
			continue
		}
		min, err := parseKernelVersion(f.v)
		if err != nil {
			return false, fmt.Errorf("minKernel %q: want MAJOR.MINOR, e.g. \"5.6\"", f.v)
		}
		atLeast := kernel[0] > min[0] || (kernel[0] == min[0] && kernel[1] >= min[1])
		if atLeast != f.include {
			return false, nil
		}
	}
	return true, nil
}

// kernelVersion is the running kernel's MAJOR.MINOR ({0,0} if unreadable,
// which makes every minKernel rule inapplicable).
func kernelVersion() [2]int {
	var u unix.Utsname
	if unix.Uname(&u) != nil {
		return [2]int{}
	}
	v, _ := parseKernelVersion(unix.ByteSliceToString(u.Release[:]))
	return v
}

// parseKernelVersion reads "MAJOR.MINOR" from a release like "6.1.0-18-amd64".
func parseKernelVersion(s string) ([2]int, error) {
	var v [2]int
	if _, err := fmt.Sscanf(s, "%d.%d", &v[0], &v[1]); err != nil {
		return [2]int{}, err
	}
	return v, nil
}
