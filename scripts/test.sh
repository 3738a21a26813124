#!/usr/bin/env bash
# The test suite, with its own set-up: go.mod tidy, vet, the static checks
# (scripts/lint.sh), then every package's tests (fuzz seed corpora included)
# under the race detector, then the quick loop as an ordinary user
# (scripts/test-quick-unprivileged.sh), then the guest tier (systemd +
# cgroup v2 in a qemu guest, scripts/test-guest.sh; its images are built
# while the race suite runs).
#   RACE=0   skip the race detector (faster)
#   GUEST=0  skip the guest tier
set -euo pipefail
cd "$(dirname "$0")/.."
./scripts/test-setup.sh
if ! go mod tidy -diff; then
  echo "test: go.mod/go.sum are not tidy (the diff above); run go mod tidy and commit the result" >&2
  exit 1
fi
./scripts/build.sh
go vet ./...
./scripts/lint.sh
# The guest images (mmdebstrap: minutes on a fresh machine, mostly
# downloading and unpacking) are built while the race suite runs; guest.sh
# locks its cache, so test-guest.sh then finds them ready.
images_pid=
images_log=$(mktemp)
trap '[ -z "$images_pid" ] || kill "$images_pid" 2>/dev/null || true; rm -f "$images_log"' EXIT
if [ "${GUEST:-1}" != 0 ]; then
  (for release in ${GUEST_RELEASES:-bookworm trixie}; do
    if scripts/guest/guest.sh --release "$release" check >/dev/null 2>&1; then
      scripts/guest/guest.sh --release "$release" build
    fi
  done) >"$images_log" 2>&1 &
  images_pid=$!
fi
race=-race
[ "${RACE:-1}" = 0 ] && race=
go test $race -timeout 40m ./...
./scripts/test-quick-unprivileged.sh
if [ -n "$images_pid" ]; then
  wait "$images_pid" || echo "test: building the guest images beside the suite failed; test-guest.sh tries again" >&2
  images_pid=
  cat "$images_log"
fi
./scripts/test-guest.sh
