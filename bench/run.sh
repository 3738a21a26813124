#!/usr/bin/env bash
# Runs every benchmark; each measures mcpsandbox and its baselines
# interleaved in one process, so every ratio compares figures from the same
# run. Output: bench/out/bench-<time>.txt. BENCH=regexp runs a subset.
set -euo pipefail
cd "$(dirname "$0")/.."
mkdir -p bench/out
out="bench/out/bench-$(date -u +%Y%m%dT%H%M%SZ).txt"
# Enough samples for a stable median without running for long.
declare -A times=([Echo1KiB]=3000x [Result16MiB]=30x [CrashRecovery]=20x [SpawnInitialize]=300x)
for b in Echo1KiB Result16MiB CrashRecovery SpawnInitialize; do
  [[ $b =~ ${BENCH:-.} ]] || continue
  go test ./bench -run '^$' -bench "^Benchmark$b\$" -benchtime "${times[$b]}" -timeout 30m 2>&1 |
    grep -v '^time=' | tee -a "$out"
done
echo "results in $out"
