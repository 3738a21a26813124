package sandbox

import (
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"os"
	"slices"
	"strings"
	"sync"

	llsys "github.com/landlock-lsm/go-landlock/landlock/syscall"
	"golang.org/x/sys/unix"

	"github.com/mcpsandbox/mcpsandbox/internal/field"
	"github.com/mcpsandbox/mcpsandbox/internal/pathrule"
	"github.com/mcpsandbox/mcpsandbox/sandbox/internal/initstage"
)

// Landlock (DESIGN §9) is defense in depth behind the namespaces, for what
// they leave open: a server may not make FIFOs, sockets or device nodes in
// its grants (a FIFO planted there blocks the host program that opens it),
// only in the sandbox's own tmpfs; and, where the kernel scopes them, it
// cannot reach abstract unix sockets or signal processes outside its
// sandbox, which matters where it shares the host's network namespace
// (NetHost). Other file access stays unhandled: the mount namespace is
// the wall for it.
//
// The supervisor creates each server's ruleset, its handled rights and
// scopes chosen by the kernel's ABI; the init stage adds the rules that
// name places inside and applies it to the server right before seccomp
// (initstage's init_landlock.c). A kernel without Landlock is no error;
// a kernel with it gets it, and any other failure stops the start.
const (
	// landlockFSABI is the first ABI whose filesystem rules are used: ABI 1
	// refuses every rename and link across directories to a restricted
	// process (no LANDLOCK_ACCESS_FS_REFER to allow them), which servers
	// and their package managers do all the time.
	landlockFSABI = 2
	// landlockScopeABI scopes abstract unix sockets and signals (6.12).
	landlockScopeABI = 6
)

// landlockSpecialFiles are the rights a server has only beneath the
// sandbox's own tmpfs: making FIFOs and sockets there (devices nowhere: it
// has no CAP_MKNOD, and a whiteout has no use in a server).
const (
	landlockSpecialFiles = llsys.AccessFSMakeFifo | llsys.AccessFSMakeSock | llsys.AccessFSMakeChar | llsys.AccessFSMakeBlock
	landlockPrivateGrant = llsys.AccessFSMakeFifo | llsys.AccessFSMakeSock | llsys.AccessFSRefer
)

// landlockSupport is what this kernel offers.
type landlockSupport struct {
	ABI int   // 0: no Landlock (not built in, or not in the boot's lsm= list)
	Err error // asking failed for another reason: no server starts
}

// hostLandlock asks the kernel once.
var hostLandlock = sync.OnceValue(func() landlockSupport {
	abi, err := llsys.LandlockGetABIVersion()
	switch {
	case errors.Is(err, unix.ENOSYS) || errors.Is(err, unix.EOPNOTSUPP):
		return landlockSupport{}
	case err != nil:
		return landlockSupport{Err: landlockFailure("landlock_create_ruleset(LANDLOCK_CREATE_RULESET_VERSION)", err)}
	}
	return landlockSupport{ABI: abi}
})

// landlockFailure explains a Landlock call that failed other than with
// "not supported".
func landlockFailure(call string, err error) error {
	fix := "report it with `mcpsandbox doctor`'s output"
	if errors.Is(err, unix.EPERM) || errors.Is(err, unix.EACCES) {
		fix = "a seccomp filter or LSM policy around mcpsandbox (a container's?) refuses the landlock_* system calls: allow them"
	}
	return &field.Error{Problem: "sandbox: Landlock: " + call, Err: err, Fix: fix}
}

// landlockAttr is the ruleset a server gets under abi: zero when there is
// nothing to apply.
func landlockAttr(abi int) llsys.RulesetAttr {
	var a llsys.RulesetAttr
	if abi >= landlockFSABI {
		// REFER is refused by any ruleset that handles file access (the
		// kernel's "initially denied"): handled so that it can be granted.
		a.HandledAccessFS = landlockSpecialFiles | llsys.AccessFSRefer
	}
	if abi >= landlockScopeABI {
		a.Scoped = llsys.ScopeAbstractUnixSocket | llsys.ScopeSignal
	}
	return a
}

// landlockRules are the rules the init stage adds for cfg under abi; nil
// when there is no ruleset.
func landlockRules(abi int, cfg *initConfig) *initstage.Landlock {
	a := landlockAttr(abi)
	if a == (llsys.RulesetAttr{}) {
		return nil
	}
	l := &initstage.Landlock{}
	if a.HandledAccessFS != 0 {
		l.RootAccess = llsys.AccessFSRefer
		l.PrivateAccess = landlockPrivateGrant
		l.Places, _ = landlockPlaces(cfg)
	}
	return l
}

// landlockPlaces are the sandbox's own tmpfs, where a server may make FIFOs
// and sockets: /tmp, /dev/shm, HOME and cfg's tmpfs. A rule covers all
// beneath its place, mounts included, and Landlock has no rule that takes
// away: so a place that holds a writable grant is left out, and withheld
// names the grant for each.
func landlockPlaces(cfg *initConfig) (places []string, withheld map[string]string) {
	var candidates []string
	for _, m := range rootMounts {
		if m.scratch {
			candidates = append(candidates, m.path)
		}
	}
	candidates = append(candidates, cfg.Tmpfs...)
	for _, p := range candidates {
		grant := ""
		for _, b := range cfg.Binds {
			if b.Writable && pathrule.Within(b.Path, p) {
				grant = b.Path
				break
			}
		}
		if grant == "" {
			places = append(places, p)
			continue
		}
		if withheld == nil {
			withheld = map[string]string{}
		}
		withheld[p] = grant
	}
	return places, withheld
}

// prepareLandlock creates the server's ruleset and sets the rules the init
// stage adds to it; nil (and no rules) where the kernel has no Landlock to
// use. The caller hands the ruleset to the init stage and closes it.
func prepareLandlock(cfg *initConfig, log *slog.Logger) (*os.File, error) {
	s := hostLandlock()
	if s.Err != nil {
		return nil, s.Err
	}
	if cfg.Net == NetHost && s.ABI < landlockScopeABI {
		warnNetHostUnscoped(log, s.ABI)
	}
	rules := landlockRules(s.ABI, cfg)
	if rules == nil {
		return nil, nil
	}
	attr := landlockAttr(s.ABI)
	fd, err := llsys.LandlockCreateRuleset(&attr, 0)
	if err != nil {
		return nil, landlockFailure(fmt.Sprintf("creating the server's ruleset (ABI %d): landlock_create_ruleset", s.ABI), err)
	}
	cfg.Landlock = rules
	return os.NewFile(uintptr(fd), "landlock-ruleset"), nil
}

var netHostWarned sync.Once

// warnNetHostUnscoped says, once per process, what host networking leaves
// open without Landlock's scoping.
func warnNetHostUnscoped(log *slog.Logger, abi int) {
	netHostWarned.Do(func() {
		log.Warn(netHostUnscopedMessage(abi, os.Geteuid() == 0), "net", NetHost.String())
	})
}

func netHostUnscopedMessage(abi int, root bool) string {
	open := "the host's abstract unix sockets (D-Bus, X11, ssh and gpg agents, ...)"
	if !root {
		open += "; signals to host processes of your uid that it gets hold of (through a pidfd it is passed; its pid namespace hides the rest)"
	}
	return "sandbox: NOT CONFINED under host networking: without Landlock scoping (" + landlockABIName(abi) +
		"; scoping needs ABI 6, Linux 6.12 or later) the server can reach " + open
}

// landlockABIName is abi as the messages name it.
func landlockABIName(abi int) string {
	if abi == 0 {
		return "this kernel has no Landlock"
	}
	return fmt.Sprintf("this kernel has Landlock ABI %d", abi)
}

// landlockCoverage says in one line what Landlock adds on this kernel, for
// doctor.
func landlockCoverage(abi int) string {
	switch {
	case abi == 0:
		return "none: no Landlock (not built in, or not in the boot's lsm= list)"
	case abi < landlockFSABI:
		return fmt.Sprintf("ABI %d: not used (it refuses renames across directories, which servers need)", abi)
	case abi < landlockScopeABI:
		return fmt.Sprintf("ABI %d: filesystem only: FIFOs and sockets only in the sandbox's own tmpfs, never in grants", abi)
	}
	return fmt.Sprintf("ABI %d: scoping and filesystem: no abstract unix sockets or signals outside the sandbox; FIFOs and sockets only in the sandbox's own tmpfs, never in grants", abi)
}

// landlockOpen is what stays open on a kernel of abi for want of Landlock,
// under host networking or not; empty when nothing does.
func landlockOpen(abi int, netHost bool) []string {
	var open []string
	if abi < landlockFSABI {
		open = append(open, "a server can make FIFOs and sockets in its writable grants (a FIFO there blocks the host program that opens it)")
	}
	if netHost && abi < landlockScopeABI {
		open = append(open, "under host networking, a server can reach the host's abstract unix sockets")
	}
	return open
}

// describeLandlock says what Landlock does here for cfg with network net,
// for Describe.
func describeLandlock(cfg *initConfig, net Network) ([]string, error) {
	s := hostLandlock()
	if s.Err != nil {
		return []string{"cannot be used here: the start would fail"}, s.Err
	}
	lines := []string{landlockCoverage(s.ABI)}
	if rules := landlockRules(s.ABI, cfg); rules != nil && rules.PrivateAccess != 0 {
		places, withheld := landlockPlaces(cfg)
		lines = append(lines, "FIFOs and sockets can be made in: "+strings.Join(places, ", "))
		for _, p := range slices.Sorted(maps.Keys(withheld)) {
			lines = append(lines, fmt.Sprintf("not in %s: the writable grant %s lies beneath it", p, withheld[p]))
		}
	}
	for _, o := range landlockOpen(s.ABI, net == NetHost) {
		lines = append(lines, "open: "+o)
	}
	return lines, nil
}
