#!/usr/bin/env bash
# Prepares a fresh Debian/Ubuntu machine (with Go and gcc) to build and test
# mcpsandbox. Idempotent: installs only what is missing.
#   --build-deps  only what building needs (libseccomp-dev), for the demo
set -euo pipefail
cd "$(dirname "$0")/.."

build_only=false
case "${1:-}" in
--build-deps) build_only=true ;;
"") ;;
*) echo "usage: $0 [--build-deps]" >&2; exit 2 ;;
esac

as_root() {
  if [ "$(id -u)" -eq 0 ]; then
    "$@"
  elif command -v sudo >/dev/null; then
    sudo "$@"
  else
    echo "test-setup: need root for: $*; run this script as root or install sudo" >&2
    exit 1
  fi
}

command -v go >/dev/null || { echo "test-setup: Go is not installed; get it from https://go.dev/dl/" >&2; exit 1; }
command -v gcc >/dev/null || { echo "test-setup: gcc is needed (cgo, for libseccomp): apt-get install gcc" >&2; exit 1; }

# Packages by the command or file that shows they are there. Node and npm
# are checked as commands: a NodeSource nodejs already carries npm, and
# Debian's npm package would conflict with it.
missing=()
dpkg -s libseccomp-dev >/dev/null 2>&1 || missing+=(libseccomp-dev)
if ! $build_only; then
  command -v bwrap >/dev/null || missing+=(bubblewrap)
  command -v ip >/dev/null || missing+=(iproute2)
  command -v node >/dev/null || missing+=(nodejs)
  command -v npm >/dev/null || missing+=(npm)
  # The egress tests' clients and test hosts (internal/testnet): curl, the
  # system's python3 (the sandbox sees no pyenv shim), psql and a
  # PostgreSQL server, found where Debian puts every major version.
  command -v curl >/dev/null || missing+=(curl)
  [ -x /usr/bin/python3 ] || missing+=(python3)
  compgen -G '/usr/lib/postgresql/*/bin/psql' >/dev/null || missing+=(postgresql-client)
  compgen -G '/usr/lib/postgresql/*/bin/postgres' >/dev/null || missing+=(postgresql)
  # package notify's tests start a session bus of their own.
  command -v dbus-daemon >/dev/null || missing+=(dbus-daemon)
  # scripts/lint.sh checks the shell scripts with it.
  command -v shellcheck >/dev/null || missing+=(shellcheck)
  # packaging/: systemd-analyze verify for the units, apparmor_parser for
  # the profile, lintian for the .deb, rpm to read the .rpm.
  command -v systemd-analyze >/dev/null || missing+=(systemd)
  command -v apparmor_parser >/dev/null || missing+=(apparmor)
  command -v lintian >/dev/null || missing+=(lintian)
  command -v rpm >/dev/null || missing+=(rpm)
  # The guest tier (scripts/test-guest.sh): qemu, and mmdebstrap to build its image.
  if [ "${GUEST:-1}" != 0 ]; then
    command -v qemu-system-x86_64 >/dev/null || missing+=(qemu-system-x86)
    command -v qemu-img >/dev/null || missing+=(qemu-utils)
    command -v mmdebstrap >/dev/null || missing+=(mmdebstrap)
    command -v mke2fs >/dev/null || missing+=(e2fsprogs)
    command -v xz >/dev/null || missing+=(xz-utils)
  fi
fi
if [ ${#missing[@]} -gt 0 ]; then
  echo "test-setup: installing ${missing[*]}"
  as_root env DEBIAN_FRONTEND=noninteractive apt-get update -q
  # No recommends: qemu's would pull in a desktop's worth of GUI libraries.
  as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends "${missing[@]}" </dev/null
fi

go mod download
$build_only && exit 0

# The pinned npm reference servers, run by the tests as node <pkg>/dist/index.js,
# and ws, the egress tests' WebSocket client.
# Reinstalled only when the lock file changed since the last install.
lock_sum=$(sha256sum testdata/npm/package-lock.json | cut -d' ' -f1)
stamp=testdata/npm/node_modules/.mcpsandbox-installed
if [ "$(cat "$stamp" 2>/dev/null)" != "$lock_sum" ]; then
  echo "test-setup: installing the npm reference servers (testdata/npm)"
  (cd testdata/npm && npm ci --ignore-scripts --no-audit --no-fund --loglevel=error </dev/null)
  echo "$lock_sum" >"$stamp"
fi

# An unprivileged account for tests that run the supervisor as a non-root
# user (the user-namespace path of the sandbox).
if ! id mcpsandbox-test >/dev/null 2>&1; then
  echo "test-setup: creating user mcpsandbox-test"
  as_root useradd --system --user-group --no-create-home --shell /usr/sbin/nologin mcpsandbox-test
fi
