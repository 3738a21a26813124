package scope

import (
	"strconv"
	"strings"
)

// maxStem keeps unit names well below systemd's 255 bytes.
const maxStem = 64

// UnitName is the scope's unit name: mcpsandbox-NAME-PID.scope, with the
// characters systemd does not allow in unit names replaced by '_'.
func UnitName(name string, pid int) string {
	stem := strings.Map(func(r rune) rune {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', r == '-', r == '_', r == '.', r == ':':
			return r
		}
		return '_'
	}, name)
	stem = strings.Trim(stem, ".-")
	if len(stem) > maxStem {
		stem = stem[:maxStem]
	}
	if stem == "" {
		stem = "server"
	}
	return "mcpsandbox-" + stem + "-" + strconv.Itoa(pid) + ".scope"
}
