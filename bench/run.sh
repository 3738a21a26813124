#!/usr/bin/env bash
# Runs every benchmark once, in one go test process, so each ratio compares
# mcpsandbox with a baseline measured in the same run. Output: bench/out/.
set -euo pipefail
cd "$(dirname "$0")/.."
mkdir -p bench/out
out="bench/out/bench-$(date -u +%Y%m%dT%H%M%SZ).txt"
go test ./bench -run '^$' -bench "${BENCH:-.}" -benchtime "${BENCHTIME:-2s}" -timeout 30m \
  -args ${BENCHARGS:-} | tee "$out"
echo "results in $out"
