#!/usr/bin/env bash
# The test suite, with its own set-up: vet, then every package's tests
# (fuzz seed corpora included) under the race detector.
#   RACE=0  skip the race detector (faster)
set -euo pipefail
cd "$(dirname "$0")/.."
./scripts/test-setup.sh
./scripts/build.sh
go vet ./...
race=-race
[ "${RACE:-1}" = 0 ] && race=
go test $race -timeout 15m ./...
