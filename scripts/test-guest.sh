#!/usr/bin/env bash
# The guest tier: the tests that need systemd as init and pure cgroup v2
# (the launch tests, the escape table, the relay and npm tests, the real v2
# limits, the scope benchmark), run in one throwaway qemu guest
# (scripts/guest/guest.sh) as root and as an ordinary user in a login
# session. Test binaries are built here; the guest has no Go.
#   GUEST=0   skip the tier
#   GUEST_BENCH=0  skip the scope benchmark; GUEST_BENCH=full also times
#                  whole starts with and without the scope (minutes more)
set -euo pipefail
cd "$(dirname "$0")/.."
if [ "${GUEST:-1}" = 0 ]; then
  echo "test-guest: skipped (GUEST=0)"
  exit 0
fi
if ! scripts/guest/guest.sh check; then
  echo "test-guest: SKIPPED: this machine cannot run the systemd + cgroup v2 guest (what is missing is above)" >&2
  exit 0
fi
t0=$SECONDS
work=$(mktemp -d /tmp/mcpsandbox-guest-tier.XXXXXX)
trap 'rm -rf "$work"' EXIT
chmod 755 "$work"
for pkg in sandbox sandbox/seccomp sandbox/cgroups sandbox/internal/initstage supervisor cmd/mcpsandbox bench; do
  go test -c -o "$work/$(basename "$pkg").test" "./$pkg"
done
CGO_ENABLED=0 go build -o "$work/hostile" ./internal/hostile
mkdir "$work/benchbin"
go build -o "$work/benchbin/mcpsandbox" ./cmd/mcpsandbox
CGO_ENABLED=0 go build -o "$work/benchbin/minrelay" ./bench/minrelay
CGO_ENABLED=0 go build -o "$work/benchbin/staticserver" ./bench/staticserver
CGO_ENABLED=0 go build -o "$work/benchbin/minimal" ./bench/minimal
# The host's Node.js, so that the guest runs the servers on the version the
# host's tests use (Debian 12's own is 18, without process.constrainedMemory).
mkdir -p "$work/node/bin"
cp "$(command -v node)" "$work/node/bin/node"
cp scripts/guest/tier.sh "$work/"
chmod -R a+rX "$work"
echo "test-guest: test binaries built in $((SECONDS - t0)) s"
scripts/guest/guest.sh build
echo "test-guest: image ready after $((SECONDS - t0)) s"
status=0
# GUEST_BENCH reaches tier.sh inside the guest through env: guest.sh itself
# does not pass the host's environment on.
scripts/guest/guest.sh run --share "$work" --timeout 1200 -- \
  env GUEST_BENCH="${GUEST_BENCH:-1}" bash "$work/tier.sh" "$work" || status=$?
echo "test-guest: done in $((SECONDS - t0)) s, status $status"
exit $status
