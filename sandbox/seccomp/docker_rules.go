package seccomp

// The actions and argument comparisons of a Docker/OCI profile, in
// libseccomp's terms.

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	libseccomp "github.com/seccomp/libseccomp-golang"
	"golang.org/x/sys/unix"
)

// dockerConditions returns the alternatives (each a list of conditions that
// must all hold). As in runc: args on distinct indexes form one rule; when
// an index repeats, each arg becomes its own rule.
func dockerConditions(args []dockerArg) ([][]libseccomp.ScmpCondition, error) {
	if len(args) == 0 {
		return [][]libseccomp.ScmpCondition{nil}, nil
	}
	var all []libseccomp.ScmpCondition
	seen := map[uint]bool{}
	repeated := false
	for j, a := range args {
		op, ok := dockerOps[a.Op]
		if !ok {
			return nil, fmt.Errorf("args[%d]: unknown op %q; use one of %s", j, a.Op, strings.Join(sortedKeys(dockerOps), ", "))
		}
		if a.Index > 5 {
			return nil, fmt.Errorf("args[%d]: index %d is out of range; syscalls have arguments 0 to 5", j, a.Index)
		}
		values := []uint64{a.Value}
		if op == libseccomp.CompareMaskedEqual {
			values = append(values, a.ValueTwo) // value is the mask
		}
		c, err := libseccomp.MakeCondition(a.Index, op, values...)
		if err != nil {
			return nil, fmt.Errorf("args[%d]: %w", j, err)
		}
		repeated = repeated || seen[a.Index]
		seen[a.Index] = true
		all = append(all, c)
	}
	if !repeated {
		return [][]libseccomp.ScmpCondition{all}, nil
	}
	alts := make([][]libseccomp.ScmpCondition, len(all))
	for j, c := range all {
		alts[j] = []libseccomp.ScmpCondition{c}
	}
	return alts, nil
}

var dockerOps = map[string]libseccomp.ScmpCompareOp{
	"SCMP_CMP_NE":        libseccomp.CompareNotEqual,
	"SCMP_CMP_LT":        libseccomp.CompareLess,
	"SCMP_CMP_LE":        libseccomp.CompareLessOrEqual,
	"SCMP_CMP_EQ":        libseccomp.CompareEqual,
	"SCMP_CMP_GE":        libseccomp.CompareGreaterEqual,
	"SCMP_CMP_GT":        libseccomp.CompareGreater,
	"SCMP_CMP_MASKED_EQ": libseccomp.CompareMaskedEqual,
}

var dockerActions = map[string]libseccomp.ScmpAction{
	"SCMP_ACT_KILL":         libseccomp.ActKillThread,
	"SCMP_ACT_KILL_THREAD":  libseccomp.ActKillThread,
	"SCMP_ACT_KILL_PROCESS": libseccomp.ActKillProcess,
	"SCMP_ACT_TRAP":         libseccomp.ActTrap,
	"SCMP_ACT_ERRNO":        libseccomp.ActErrno,
	"SCMP_ACT_TRACE":        libseccomp.ActTrace,
	"SCMP_ACT_ALLOW":        libseccomp.ActAllow,
	"SCMP_ACT_LOG":          libseccomp.ActLog,
}

// dockerAction parses an action; ERRNO and TRACE carry errnoRet (EPERM when
// absent).
func dockerAction(name string, errnoRet *uint) (libseccomp.ScmpAction, error) {
	if name == "SCMP_ACT_NOTIFY" {
		return 0, errors.New("SCMP_ACT_NOTIFY needs a seccomp agent, which mcpsandbox does not run; use SCMP_ACT_ERRNO or SCMP_ACT_LOG")
	}
	act, ok := dockerActions[name]
	if !ok {
		return 0, fmt.Errorf("unknown action %q; use one of %s", name, strings.Join(sortedKeys(dockerActions), ", "))
	}
	code := uint(unix.EPERM)
	if errnoRet != nil {
		code = *errnoRet
	}
	if code > 4095 {
		return 0, fmt.Errorf("errnoRet %d is not an errno (1 to 4095)", code)
	}
	return act.SetReturnCode(int16(code)), nil
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}
