#!/usr/bin/env bash
# Runs every fuzz target for FUZZTIME each (default 30s). Plain `go test`
# already runs their seed corpora; this explores beyond them.
set -euo pipefail
cd "$(dirname "$0")/.."
fuzztime=${FUZZTIME:-30s}
found=0
for pkg in $(go list ./...); do
  for target in $(go test -list '^Fuzz' "$pkg" | grep '^Fuzz' || true); do
    found=1
    echo "== $pkg $target ($fuzztime)"
    go test "$pkg" -run '^$' -fuzz "^$target\$" -fuzztime "$fuzztime"
  done
done
[ "$found" = 1 ] || echo "no fuzz targets found"
