package cgroups

import (
	"errors"
	"fmt"
	"os"
	"os/user"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
)

// v1MakeDirs creates the server cgroup's directory in each used controller,
// in order, so that a failure names the controller it happened in
// (cgroup1.New, which runs next, accepts directories that exist). On
// failure it removes what it made.
func v1MakeDirs(mounts v1Mounts, used []string, dirs map[string]string) error {
	for _, c := range used {
		if err := os.MkdirAll(dirs[c], 0o755); err != nil {
			removeV1Dirs(dirs)
			return v1MkdirError(mounts, used, c, dirs[c], err)
		}
	}
	return nil
}

func removeV1Dirs(dirs map[string]string) {
	for _, d := range dirs {
		os.Remove(d)
	}
}

// v1MkdirError diagnoses a failed mkdir of dir in controller c. Refused
// permission without root means nobody delegated c to this user: the fix
// gives the commands that do.
func v1MkdirError(mounts v1Mounts, used []string, c, dir string, err error) error {
	var pe *os.PathError
	if errors.As(err, &pe) {
		dir = pe.Path // MkdirAll names the component it could not create
	}
	denied := errors.Is(err, syscall.EACCES) || errors.Is(err, syscall.EPERM)
	if !denied || os.Geteuid() == 0 {
		return creationError(filepath.Dir(dir), err)
	}
	return &limitsError{
		Missing: fmt.Sprintf("no permission to create a cgroup beneath %s for the cgroup v1 %s controller", filepath.Dir(dir), c),
		Fix:     v1DelegationFix(mounts, used),
		Err:     err,
	}
}

// v1DelegationFix says how root delegates the used controllers to this
// user (a cgroup per controller that the user owns, as systemd's
// Delegate=yes does) and how the user then moves into them.
func v1DelegationFix(mounts v1Mounts, used []string) string {
	name, owner := v1Owner()
	loop, dir := v1DelegateLoop(mounts, used, "mcpsandbox-"+name)
	return fmt.Sprintf("a server cgroup here needs the cgroup v1 controllers %s delegated to user %s (what systemd's Delegate=yes does): "+
		"as root run `%s; do mkdir -p %s && chown -R %s %s; done`, "+
		"then in the shell that starts the MCP host (or mcpsandbox) run `%s; do echo $$ > %s/cgroup.procs; done`; "+
		"or run mcpsandbox as root; %s",
		strings.Join(used, ", "), name, loop, dir, owner, dir, loop, dir, fixDoctor)
}

// v1Owner names this process's user, and user:group for chown: names where
// they exist and are safe in a shell command, else the numeric ids (a bare
// "uid:" fails for a uid without a passwd entry).
func v1Owner() (name, owner string) {
	uid, gid := strconv.Itoa(os.Geteuid()), strconv.Itoa(os.Getegid())
	name, group := uid, gid
	if u, err := user.LookupId(uid); err == nil && shellWord(u.Username) {
		name = u.Username
	}
	if g, err := user.LookupGroupId(gid); err == nil && shellWord(g.Name) {
		group = g.Name
	}
	return name, name + ":" + group
}

func shellWord(s string) bool {
	return s != "" && s[0] != '-' && strings.IndexFunc(s, func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-' || r == '_' || r == '.')
	}) < 0
}

// v1DelegateLoop is the head of a shell loop over the delegated cgroups and
// the directory its body uses: by controller where all are mounted side by
// side (the usual /sys/fs/cgroup/<controller>), else by directory.
func v1DelegateLoop(mounts v1Mounts, used []string, name string) (loop, dir string) {
	root := filepath.Dir(mounts[used[0]])
	same := true
	dirs := make([]string, len(used))
	for i, c := range used {
		// Where containerd reaches c (see v1Subsystem), not the mount's
		// own name, which may list co-mounted controllers.
		dirs[i] = filepath.Join(filepath.Dir(mounts[c]), c, name)
		same = same && filepath.Dir(mounts[c]) == root
	}
	if same {
		return "for c in " + strings.Join(used, " "), filepath.Join(root, "$c", name)
	}
	return "for d in " + strings.Join(dirs, " "), "$d"
}
