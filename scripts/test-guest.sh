#!/usr/bin/env bash
# The guest tier: the tests that need systemd as init and pure cgroup v2
# (the launch tests, the escape table, the relay and npm tests, the real v2
# limits, the daemon as a user and a system service, the scope benchmark,
# and on both images the built .deb: dpkg -i, service install, dpkg --purge),
# run in a throwaway qemu guest (scripts/guest/guest.sh) as root and as an
# ordinary user in a login session: all of them on Debian 12 and, beside it
# in a second guest, on Debian 13 (kernel 6.12, systemd 257, Landlock ABI 6,
# AppArmor 4.1) the ones scripts/guest/tier.sh's trixie_tests lists.
# Test binaries are built here; the guest has no Go.
#   GUEST=0   skip the tier
#   GUEST_RELEASES="bookworm trixie"  the guests to run (their output in this order)
#   GUEST_BENCH=0  skip the scope benchmark; GUEST_BENCH=full also times
#                  whole starts with and without the scope (minutes more)
#   GUEST_ONLY=REGEXP  only the phases whose names match (grep -Ei), e.g.
#                  GUEST_ONLY=daemon
set -euo pipefail
cd "$(dirname "$0")/.."
if [ "${GUEST:-1}" = 0 ]; then
  echo "test-guest: skipped (GUEST=0)"
  exit 0
fi
releases=()
for release in ${GUEST_RELEASES:-bookworm trixie}; do
  rc=0
  scripts/guest/guest.sh --release "$release" check || rc=$?
  case $rc in
    0) releases+=("$release") ;;
    3) echo "test-guest: SKIPPED $release: this machine cannot run that systemd + cgroup v2 guest (what is missing is above)" >&2 ;;
    *) exit "$rc" ;;
  esac
done
[ ${#releases[@]} -gt 0 ] || exit 0
t0=$SECONDS
work=$(mktemp -d /tmp/mcpsandbox-guest-tier.XXXXXX)
pids=()
# Stops the guests still running (guest.sh stops its qemu on TERM).
# shellcheck disable=SC2317 # (run by the trap)
stop_guests() {
  local pid
  for pid in "${pids[@]}"; do pkill -TERM -P "$pid" || true; kill "$pid" 2>/dev/null || true; done
  rm -rf "$work"
}
trap stop_guests EXIT
chmod 755 "$work"
# tier.sh finds each as WORK/<package's last element>.test
for pkg in sandbox sandbox/seccomp sandbox/cgroups sandbox/internal/initstage supervisor cmd/mcpsandbox bench packaging; do
  go test -c -o "$work/$(basename "$pkg").test" "./$pkg"
done
CGO_ENABLED=0 go build -o "$work/hostile" ./internal/hostile
# The .deb the package phases install (dpkg -i) in the guest.
FORMATS=deb OUT="$work" scripts/package.sh
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
# The releases run side by side: one emulated guest keeps about 1.2 of the
# host's cores busy (its tests wait on processes and timers too), so a
# second one mostly uses what the first leaves. Each one's output is shown
# whole when it ends.
run_release() { # release: its image, then its tier; prints its status last
  local release=$1 t1=$SECONDS rc=0
  scripts/guest/guest.sh --release "$release" build || rc=$?
  echo "test-guest: $release image ready after $((SECONDS - t1)) s"
  # GUEST_BENCH and GUEST_ONLY reach tier.sh inside the guest through env:
  # guest.sh itself does not pass the host's environment on.
  if [ $rc = 0 ]; then
    scripts/guest/guest.sh --release "$release" run --share "$work" --timeout 1200 -- \
      env GUEST_BENCH="${GUEST_BENCH:-1}" GUEST_ONLY="${GUEST_ONLY:-}" bash "$work/tier.sh" "$work" || rc=$?
  fi
  echo "test-guest: $release done in $((SECONDS - t1)) s, status $rc"
  return $rc
}
for release in "${releases[@]}"; do
  run_release "$release" >"$work/$release.log" 2>&1 &
  pids+=($!)
done
echo "test-guest: running ${releases[*]} side by side"
status=0
for i in "${!releases[@]}"; do
  rc=0
  wait "${pids[i]}" || rc=$?
  echo "test-guest: ---- ${releases[i]} ----"
  cat "$work/${releases[i]}.log"
  [ $rc = 0 ] || status=$rc
done
echo "test-guest: done in $((SECONDS - t0)) s, status $status"
exit $status
