package sandbox

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"golang.org/x/sys/unix"

	"github.com/mcpsandbox/mcpsandbox/internal/pathrule"
	"github.com/mcpsandbox/mcpsandbox/sandbox/internal/initstage"
)

// A server granted the directory its own program lies in (`run --rw DIR --
// DIR/bin/server`, a script in a granted project) could rewrite that
// program on the host: the next start, and the user later, unconfined,
// would run what it wrote. So the program the server starts from, and an
// interpreter's script (Spec.Script), are pinned inside the sandbox: each
// directory on the way to them within a writable grant, each symlink
// followed and the file itself become mount points of the sandbox's own
// mount namespace, which the kernel never lets a process inside rename or
// remove (EBUSY), and the file and symlinks are mounted read-only. The
// grant's other files stay as writable as granted.

// programFiles are the files the server's program is read from, as it
// names them: the executable found (symlinks unresolved) and the script,
// relative to the working directory dir.
func programFiles(spec Spec, found, dir string) []string {
	files := []string{found}
	if script := spec.Script; script != "" {
		if !filepath.IsAbs(script) {
			script = filepath.Join(dir, script) // where the interpreter, started there, finds it
		}
		files = append(files, script)
	}
	return files
}

// pinHops bounds the symlinks followed on the way to one program file, as
// the kernel's own lookup does (ELOOP after 40).
const pinHops = 40

// programPins are the places to pin for the program files paths (absolute,
// as the server names them, symlinks unresolved), in the order the init
// stage mounts them: parents first.
func programPins(paths []string, binds []initstage.Bind) ([]string, error) {
	w := pinWalk{binds: binds, seen: map[string]bool{}}
	for _, p := range paths {
		if err := w.walk(p); err != nil {
			return nil, err
		}
	}
	return w.pins, nil
}

type pinWalk struct {
	binds []initstage.Bind
	seen  map[string]bool
	pins  []string
}

// walk resolves p one component at a time, as the kernel will inside,
// noting each place a grant lets the server change.
func (w *pinWalk) walk(p string) error {
	cur, rest, hops := "/", splitPath(p), 0
	for len(rest) > 0 {
		name := rest[0]
		rest = rest[1:]
		if name == ".." {
			cur = filepath.Dir(cur)
			continue
		}
		next := filepath.Join(cur, name)
		fi, err := os.Lstat(next)
		if err != nil {
			return nil // the start names what is missing
		}
		w.note(next, fi.IsDir())
		if fi.Mode()&os.ModeSymlink == 0 {
			cur = next
			continue
		}
		if hops++; hops > pinHops {
			return fmt.Errorf("server program %s: more than %d symlinks on the way", p, pinHops)
		}
		target, err := os.Readlink(next)
		if err != nil {
			return fmt.Errorf("server program %s: %w", p, err)
		}
		if filepath.IsAbs(target) {
			cur = "/"
		}
		rest = append(splitPath(target), rest...)
	}
	return nil
}

// note pins path when the server could change it: it lies within a
// writable grant and is not a grant's own mount point, which already is
// one (but for a file granted writable by itself, which must become
// read-only).
func (w *pinWalk) note(path string, dir bool) {
	if w.seen[path] {
		return
	}
	writable := false
	for _, b := range w.binds {
		if b.Path == path && (dir || !b.Writable) {
			return
		}
		if b.Writable && pathrule.Within(path, b.Path) {
			writable = true
		}
	}
	if writable {
		w.seen[path] = true
		w.pins = append(w.pins, path)
	}
}

func splitPath(p string) []string {
	var parts []string
	for _, s := range strings.Split(p, "/") {
		if s != "" && s != "." {
			parts = append(parts, s)
		}
	}
	return parts
}

// ProgramID is what a server's program files were when it first started
// (ProgramOf). A hard link to the program elsewhere in a writable grant,
// or another server sharing the grant, could still change it; a later
// start of the same Spec checks it first (Unchanged) and refuses to run
// what changed.
type ProgramID struct{ files []programFile }

type programFile struct {
	path, real string
	st         unix.Stat_t
}

// ProgramOf notes spec's program files as they are now; those it cannot
// find are left to the start to report.
func ProgramOf(spec Spec) ProgramID {
	var id ProgramID
	if len(spec.Args) == 0 {
		return id
	}
	found, _, err := resolveExecutable(spec.Args[0])
	if err != nil {
		return id
	}
	for _, p := range programFiles(spec, found, spec.Dir) {
		if !filepath.IsAbs(p) {
			continue // a script relative to the sandbox's own HOME
		}
		f := programFile{path: p}
		if f.real, err = filepath.EvalSymlinks(p); err == nil && unix.Stat(f.real, &f.st) == nil {
			id.files = append(id.files, f)
		}
	}
	return id
}

// Unchanged says which program file is no longer what ProgramOf found.
func (id ProgramID) Unchanged() error {
	for _, f := range id.files {
		var what string
		real, err := filepath.EvalSymlinks(f.path)
		var st unix.Stat_t
		switch {
		case err != nil:
			what = "it is gone: " + err.Error()
		case real != f.real:
			what = "it now leads to " + real + ", not " + f.real
		case unix.Stat(real, &st) != nil:
			what = "it cannot be read"
		case st.Dev != f.st.Dev || st.Ino != f.st.Ino:
			what = "another file took its place"
		case st.Size != f.st.Size || st.Mtim != f.st.Mtim || st.Ctim != f.st.Ctim || st.Mode != f.st.Mode:
			what = "it was written to or its mode changed"
		default:
			continue
		}
		return fmt.Errorf("the server's program %s changed on the host since mcpsandbox started it (%s): a server may not rewrite its own program, so it is not run again; if you changed it, start mcpsandbox again", f.path, what)
	}
	return nil
}
