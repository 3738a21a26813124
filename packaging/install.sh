#!/bin/sh
# Installs mcpsandbox on a machine without its .deb or .rpm: the binary,
# its man pages, the systemd unit (the one `mcpsandbox service unit`
# prints for the installed binary), an example daemon config (kept if one
# exists) and, as root, the AppArmor profile letting the binary create user
# namespaces where AppArmor restricts them (Ubuntu 23.10 and later).
#
#   install.sh [--user] [--prefix DIR] [BINARY]
#
# As root: BINARY (default ./mcpsandbox) to PREFIX/bin (default /usr/local),
# the unit to /etc/systemd/system, the profile to /etc/apparmor.d.
# --user, without root: to ~/.local/bin, ~/.config/systemd/user and
# ~/.config/mcpsandbox; the AppArmor profile needs root (the script says
# how). DESTDIR=DIR installs under DIR and loads or reloads nothing.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
user=false
prefix=/usr/local
binary=./mcpsandbox
while [ $# -gt 0 ]; do
	case $1 in
	--user) user=true ;;
	--prefix) prefix=${2:?--prefix needs a directory}; shift ;;
	-h | --help) sed -n '2,16s/^# \{0,1\}//p' "$0"; exit 0 ;;
	-*) echo "install.sh: unknown option $1 (see --help)" >&2; exit 2 ;;
	*) binary=$1 ;;
	esac
	shift
done
[ -x "$binary" ] || { echo "install.sh: no binary $binary: build it (make build) or name it" >&2; exit 1; }
destdir=${DESTDIR:-}

if $user; then
	[ -n "${HOME:-}" ] || { echo "install.sh: HOME is not set" >&2; exit 1; }
	prefix=$HOME/.local
	unitdir=$HOME/.config/systemd/user
	configdir=$HOME/.config/mcpsandbox
	mandir=${XDG_DATA_HOME:-$HOME/.local/share}/man/man1
else
	[ "$(id -u)" -eq 0 ] || [ -n "$destdir" ] || { echo "install.sh: installing for the system needs root (sudo), or give --user" >&2; exit 1; }
	unitdir=/etc/systemd/system
	configdir=/etc/mcpsandbox
	mandir=$prefix/share/man/man1
fi
bin=$prefix/bin/mcpsandbox

install -d "$destdir$prefix/bin" "$destdir$unitdir" "$destdir$configdir" "$destdir$mandir"
install -m 0755 "$binary" "$destdir$bin"
echo "installed $bin"

# The unit names the binary where it runs from: $bin once installed.
userflag=
$user && userflag=--user
# shellcheck disable=SC2086 # userflag is empty or one word
"$destdir$bin" service unit $userflag | sed "s#^ExecStart=$destdir#ExecStart=#" >"$destdir$unitdir/mcpsandbox.service"
chmod 0644 "$destdir$unitdir/mcpsandbox.service"
echo "installed $unitdir/mcpsandbox.service"

if [ ! -e "$destdir$configdir/daemon.json" ]; then
	install -m 0644 "$here/daemon.json" "$destdir$configdir/daemon.json"
	echo "installed $configdir/daemon.json (an example: add the servers to keep)"
fi

man=$(mktemp -d)
trap 'rm -rf "$man"' EXIT
"$destdir$bin" help --man "$man"
for page in "$man"/*.1; do
	install -m 0644 "$page" "$destdir$mandir/"
done
echo "installed the man pages in $mandir"

# The profile attaches to the installed path; its file is named after it.
profile_name=$(echo "${bin#/}" | tr / .)
if $user; then
	if [ "$(cat /proc/sys/kernel/apparmor_restrict_unprivileged_userns 2>/dev/null)" = 1 ]; then
		echo "AppArmor restricts user namespaces here: as root, install the profile for $bin:"
		echo "  sed 's#^profile mcpsandbox /usr/bin/mcpsandbox #profile mcpsandbox $bin #' $here/apparmor/usr.bin.mcpsandbox | sudo tee /etc/apparmor.d/$profile_name && sudo apparmor_parser -r /etc/apparmor.d/$profile_name"
	fi
else
	install -d "$destdir/etc/apparmor.d"
	sed "s#^profile mcpsandbox /usr/bin/mcpsandbox #profile mcpsandbox $bin #" "$here/apparmor/usr.bin.mcpsandbox" >"$destdir/etc/apparmor.d/$profile_name"
	chmod 0644 "$destdir/etc/apparmor.d/$profile_name"
	echo "installed /etc/apparmor.d/$profile_name"
	if [ -z "$destdir" ] && command -v apparmor_parser >/dev/null && [ -d /sys/kernel/security/apparmor ]; then
		apparmor_parser -r "/etc/apparmor.d/$profile_name"
	fi
fi

if [ -z "$destdir" ] && [ -d /run/systemd/system ]; then
	if $user; then systemctl --user daemon-reload || true; else systemctl daemon-reload; fi
fi
echo "next: add servers to $configdir/daemon.json, then: mcpsandbox service start${userflag:+ $userflag}"
