#!/usr/bin/env bash
# The test suite, with its own set-up: go.mod tidy, vet, the static checks
# (scripts/lint.sh), then every package's tests (fuzz seed corpora included)
# under the race detector, then the quick loop as an ordinary user
# (scripts/test-quick-unprivileged.sh), then the guest tier (systemd +
# cgroup v2 in a qemu guest, scripts/test-guest.sh).
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
race=-race
[ "${RACE:-1}" = 0 ] && race=
go test $race -timeout 25m ./...
./scripts/test-quick-unprivileged.sh
./scripts/test-guest.sh
