#!/bin/sh
# After install or upgrade: load the AppArmor profile where AppArmor runs,
# and make systemd see the units. The service is not enabled: its config
# names no servers until the administrator adds them.
set -e
# Installed into another root (dpkg --root): nothing of this system's to load.
[ -z "${DPKG_ROOT:-}" ] || exit 0
profile=/etc/apparmor.d/usr.bin.mcpsandbox
if command -v apparmor_parser >/dev/null && [ -d /sys/kernel/security/apparmor ] && [ -f "$profile" ]; then
	apparmor_parser -r -T -W "$profile" || echo "mcpsandbox: loading $profile failed; unprivileged runs may be refused user namespaces" >&2
fi
if [ -d /run/systemd/system ]; then
	systemctl daemon-reload || true
	# An upgrade restarts a running daemon on the new binary.
	if systemctl is-active --quiet mcpsandbox.service; then
		systemctl try-restart mcpsandbox.service || true
	fi
fi
exit 0
