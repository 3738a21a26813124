#!/usr/bin/env bash
# Runs every fuzz target for FUZZTIME each (default 30s). Plain `go test`
# already runs their seed corpora; this explores beyond them.
set -euo pipefail
cd "$(dirname "$0")/.."
fuzztime=${FUZZTIME:-30s}
found=0
# Fuzz targets are found in the sources: listing them with `go test -list`
# would compile every package's tests first.
while read -r file target; do
  found=1
  pkg=./$(dirname "$file")
  echo "== $pkg $target ($fuzztime)"
  go test "$pkg" -run '^$' -fuzz "^$target\$" -fuzztime "$fuzztime"
done < <(grep -rHo --include='*_test.go' --exclude-dir=node_modules '^func Fuzz[A-Za-z0-9_]*' . |
  sed -E 's#^\./##; s#:func # #')
[ "$found" = 1 ] || echo "no fuzz targets found"
