package testenv

import (
	"os"
	"os/exec"
)

// AppArmorParser is the path of apparmor_parser, or "" when it is not
// installed. Debian puts it in /usr/sbin, which an ordinary user's PATH
// lacks.
func AppArmorParser() string {
	if p, err := exec.LookPath("apparmor_parser"); err == nil {
		return p
	}
	for _, p := range []string{"/usr/sbin/apparmor_parser", "/sbin/apparmor_parser"} {
		if fi, err := os.Stat(p); err == nil && fi.Mode()&0o111 != 0 {
			return p
		}
	}
	return ""
}
