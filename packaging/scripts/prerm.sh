#!/bin/sh
# Before removal: stop the system daemon (its servers with it). An upgrade
# keeps it running: postinst restarts it on the new binary.
set -e
[ -z "${DPKG_ROOT:-}" ] || exit 0 # another root's (dpkg --root): no daemon of ours
case "$1" in
upgrade | 1) exit 0 ;; # dpkg's upgrade; rpm's count of versions left
esac
if [ -d /run/systemd/system ]; then
	systemctl stop mcpsandbox.service || true
	systemctl disable mcpsandbox.service || true
fi
exit 0
