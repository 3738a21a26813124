#!/usr/bin/env bash
# Static checks, a few seconds once the tools are built: staticcheck on the
# Go code (tests included), shellcheck on the shell scripts. Exits non-zero
# if either finds anything. scripts/test.sh runs it; it also runs alone.
# staticcheck comes through `go run` at the version pinned here (built on
# first use, cached after); shellcheck is Debian's (scripts/test-setup.sh
# installs it).
set -euo pipefail
cd "$(dirname "$0")/.."

# staticcheck 2026.2.2, a release for Go 1.26.
staticcheck=honnef.co/go/tools/cmd/staticcheck@v0.8.2

command -v shellcheck >/dev/null || {
  echo "lint: shellcheck is not installed; run scripts/test-setup.sh (or apt-get install shellcheck)" >&2
  exit 1
}

status=0
echo "lint: staticcheck"
go run "$staticcheck" ./... || status=1
echo "lint: shellcheck"
shellcheck scripts/*.sh scripts/guest/*.sh bench/run.sh packaging/*.sh packaging/scripts/*.sh || status=1
if [ $status != 0 ]; then
  echo "lint: findings above" >&2
fi
exit $status
