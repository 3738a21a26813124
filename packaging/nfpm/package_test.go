package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// The .deb and .rpm as `make package` builds them: their files, conffiles and scripts,
// an install into a scratch root and a purge out of it, and lintian.
func TestPackagesInstallIntoScratchRootsAndPurgeClean(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the package (a full build of mcpsandbox)")
	}
	for _, tool := range []string{"dpkg", "dpkg-deb", "objdump", "gzip"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("no %s", tool)
		}
	}
	out := t.TempDir()
	cmd := exec.Command("./scripts/package.sh")
	cmd.Dir = "../.."
	cmd.Env = append(os.Environ(), "OUT="+out, "FORMATS=deb rpm", "VERSION=v1.2.3", "SOURCE_DATE_EPOCH=1790000000")
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("scripts/package.sh: %v\n%s", err, b)
	}
	deb := filepath.Join(out, "mcpsandbox_1.2.3-1_amd64.deb")
	t.Run("rpm", func(t *testing.T) { checkRPM(t, filepath.Join(out, "mcpsandbox-1.2.3-1.x86_64.rpm")) })

	contents := run(t, "dpkg-deb", "-c", deb)
	for _, want := range []string{
		"-rwxr-xr-x root/root", "./usr/bin/mcpsandbox\n",
		"./usr/lib/systemd/system/mcpsandbox.service\n", "./usr/lib/systemd/user/mcpsandbox.service\n",
		"./etc/apparmor.d/usr.bin.mcpsandbox\n", "./etc/mcpsandbox/daemon.json\n",
		"./usr/share/man/man1/mcpsandbox.1.gz\n", "./usr/share/man/man1/mcpsandbox-service.1.gz\n", "./usr/share/man/man1/mcpsandbox-run.1.gz\n",
		"./usr/share/doc/mcpsandbox/copyright\n", "./usr/share/doc/mcpsandbox/changelog.Debian.gz\n",
	} {
		if !strings.Contains(contents, want) {
			t.Errorf("the .deb has no %q:\n%s", want, contents)
		}
	}
	if got := run(t, "dpkg-deb", "-f", deb, "Depends"); !strings.Contains(got, "libc6 (>= 2.") || !strings.Contains(got, "libseccomp2 (>= 2.5)") {
		t.Errorf("Depends: %s", got)
	}
	control := t.TempDir()
	run(t, "dpkg-deb", "-e", deb, control)
	conffiles, _ := os.ReadFile(filepath.Join(control, "conffiles"))
	if got := strings.Fields(string(conffiles)); !slices.Equal(got, []string{"/etc/apparmor.d/usr.bin.mcpsandbox", "/etc/mcpsandbox/daemon.json"}) {
		t.Errorf("conffiles: %q", got)
	}
	for _, script := range []string{"postinst", "prerm", "postrm"} {
		fi, err := os.Stat(filepath.Join(control, script))
		if err != nil || fi.Mode()&0o111 == 0 {
			t.Errorf("%s: %v, mode %v", script, err, fi)
		}
	}

	// Install into a scratch root. The scripts run here (chrootless) with
	// DPKG_ROOT set, and then leave this machine's AppArmor and systemd alone.
	root := t.TempDir()
	for _, d := range []string{"var/lib/dpkg/info", "var/lib/dpkg/updates"} {
		if err := os.MkdirAll(filepath.Join(root, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(root, "var/lib/dpkg/status"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	dpkg := func(args ...string) string {
		// The scratch root has no libc6 or libseccomp2 to depend on.
		return run(t, "dpkg", append([]string{"--root", root, "--force-not-root", "--force-script-chrootless", "--force-depends"}, args...)...)
	}
	dpkg("-i", deb)
	bin := filepath.Join(root, "usr/bin/mcpsandbox")
	if v := run(t, bin, "version"); !strings.Contains(v, "v1.2.3") {
		t.Errorf("the installed binary says %q", v)
	}
	for _, f := range []string{"usr/lib/systemd/system/mcpsandbox.service", "usr/lib/systemd/user/mcpsandbox.service", "etc/apparmor.d/usr.bin.mcpsandbox", "etc/mcpsandbox/daemon.json"} {
		want, _ := os.ReadFile(filepath.Join("..", strings.NewReplacer("usr/lib/systemd", "systemd", "etc/apparmor.d", "apparmor", "etc/mcpsandbox", "").Replace(f)))
		got, err := os.ReadFile(filepath.Join(root, f))
		if err != nil || string(got) != string(want) {
			t.Errorf("/%s is not packaging's file (%v)", f, err)
		}
	}
	// The packaged (PIE, stripped) binary confines as the built one does.
	if os.Geteuid() == 0 {
		if doc, _ := exec.Command(bin, "doctor").CombinedOutput(); !strings.Contains(string(doc), "ok    confined /bin/true") {
			t.Errorf("the installed binary's doctor:\n%s", doc)
		}
	}

	// A purge takes everything, the daemon's state included.
	if err := os.MkdirAll(filepath.Join(root, "var/lib/mcpsandbox/notes"), 0o700); err != nil {
		t.Fatal(err)
	}
	dpkg("--purge", "mcpsandbox")
	var left []string
	filepath.WalkDir(root, func(p string, d os.DirEntry, err error) error {
		rel, _ := filepath.Rel(root, p)
		if err == nil && !d.IsDir() && !strings.HasPrefix(rel, "var/lib/dpkg/") {
			left = append(left, rel)
		}
		if err == nil && d.IsDir() && rel == "var/lib/mcpsandbox" {
			left = append(left, rel+"/")
		}
		return nil
	})
	if len(left) > 0 {
		t.Errorf("the purge left %q", left)
	}

	if _, err := exec.LookPath("lintian"); err != nil {
		t.Log("no lintian (scripts/test-setup.sh installs it): the .deb is not linted")
		return
	}
	// Clean: no error or warning but those packaging/lintian-overrides explains.
	lint, _ := exec.Command("lintian", "--tag-display-limit", "0", deb).CombinedOutput()
	for _, line := range strings.Split(string(lint), "\n") {
		if strings.HasPrefix(line, "E: ") || strings.HasPrefix(line, "W: ") {
			t.Errorf("lintian: %s", line)
		}
	}
}

// checkRPM: the .rpm's files, config files, requirements and scripts, and
// an install into a scratch root (without its scripts, which would run
// chrooted there; they are the .deb's, run above).
func checkRPM(t *testing.T, rpm string) {
	if _, err := os.Stat(rpm); err != nil {
		t.Fatalf("no rpm: %v", err)
	}
	if _, err := exec.LookPath("rpm"); err != nil {
		t.Skip("no rpm (Debian's rpm package; scripts/test-setup.sh)")
	}
	files := run(t, "rpm", "-qlp", rpm)
	for _, want := range []string{"/usr/bin/mcpsandbox\n", "/usr/lib/systemd/system/mcpsandbox.service\n", "/usr/lib/systemd/user/mcpsandbox.service\n", "/usr/share/man/man1/mcpsandbox-service.1.gz\n"} {
		if !strings.Contains(files, want) {
			t.Errorf("the .rpm has no %q:\n%s", want, files)
		}
	}
	if got := strings.Fields(run(t, "rpm", "-qcp", rpm)); !slices.Equal(got, []string{"/etc/apparmor.d/usr.bin.mcpsandbox", "/etc/mcpsandbox/daemon.json"}) {
		t.Errorf("config files: %q", got)
	}
	if got := run(t, "rpm", "-qp", "--requires", rpm); !strings.Contains(got, "glibc >= 2.") || !strings.Contains(got, "libseccomp >= 2.5") {
		t.Errorf("requires: %s", got)
	}
	scripts := run(t, "rpm", "-qp", "--scripts", rpm)
	for _, want := range []string{"postinstall scriptlet", "preuninstall scriptlet", "postuninstall scriptlet", "apparmor_parser -r"} {
		if !strings.Contains(scripts, want) {
			t.Errorf("the .rpm's scripts lack %q", want)
		}
	}
	root := t.TempDir()
	run(t, "rpm", "--root", root, "--initdb")
	run(t, "rpm", "--root", root, "-i", "--nodeps", "--noscripts", rpm)
	for _, f := range []string{"usr/bin/mcpsandbox", "etc/apparmor.d/usr.bin.mcpsandbox", "etc/mcpsandbox/daemon.json"} {
		if _, err := os.Stat(filepath.Join(root, f)); err != nil {
			t.Errorf("rpm --root: %v", err)
		}
	}
	run(t, "rpm", "--root", root, "-e", "--noscripts", "mcpsandbox")
	if _, err := os.Stat(filepath.Join(root, "usr/bin/mcpsandbox")); err == nil {
		t.Error("rpm -e left /usr/bin/mcpsandbox")
	}
}

func run(t *testing.T, name string, args ...string) string {
	t.Helper()
	b, err := exec.Command(name, args...).CombinedOutput()
	if err != nil {
		t.Fatalf("%s %s: %v\n%s", name, strings.Join(args, " "), err, b)
	}
	return string(b)
}
