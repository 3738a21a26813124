#!/bin/sh
# After removal: systemd forgets the units; a purge also removes the
# daemon's state (/var/lib/mcpsandbox: the dynamic uids' registry and the
# servers' state directories) and its log (/var/log/mcpsandbox).
set -e
if [ "$1" = purge ]; then
	rm -rf "${DPKG_ROOT:-}/var/lib/mcpsandbox" "${DPKG_ROOT:-}/var/log/mcpsandbox"
fi
# Installed into another root (dpkg --root): nothing of this system's to unload.
[ -z "${DPKG_ROOT:-}" ] || exit 0
if [ -d /run/systemd/system ]; then
	systemctl daemon-reload || true
fi
# The binary is gone: unload its AppArmor profile (by name; the file, a
# conffile, stays until a purge).
if [ "$1" = remove ] || [ "$1" = purge ] || [ "$1" = 0 ]; then
	if [ -w /sys/kernel/security/apparmor/.remove ] && grep -q '^mcpsandbox ' /sys/kernel/security/apparmor/profiles 2>/dev/null; then
		printf mcpsandbox >/sys/kernel/security/apparmor/.remove || true
	fi
fi
exit 0
