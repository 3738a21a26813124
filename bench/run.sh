#!/usr/bin/env bash
# Runs every benchmark; each measures mcpsandbox and its baselines
# interleaved in one process, so every ratio compares figures from the same
# run. Output: bench/out/bench-<time>.txt. BENCH=regexp runs a subset.
# The egress benchmarks need root (a test network of namespaces and veth)
# and skip, saying so, otherwise.
# BASELINE_REF=<git ref> (default: the commit before the relay became a
# library, 3e11eac) is built too and run beside this tree's mcpsandbox,
# reported as x-vs-baseline; BASELINE_REF= (empty) skips it.
set -euo pipefail
cd "$(dirname "$0")/.."
mkdir -p bench/out
out="bench/out/bench-$(date -u +%Y%m%dT%H%M%SZ).txt"
ref=${BASELINE_REF-3e11eac}
if [ -n "$ref" ]; then
  base=$(mktemp -d /var/tmp/mcpsandbox-baseline-XXXXXX)
  trap 'git worktree remove --force "$base/src" >/dev/null 2>&1 || true; rm -rf "$base"' EXIT
  git worktree add --detach -q "$base/src" "$ref"
  (cd "$base/src" && go build -o "$base/mcpsandbox" ./cmd/mcpsandbox)
  chmod 755 "$base" && export MCPSANDBOX_BENCH_BASELINE="$base/mcpsandbox"
  echo "baseline: mcpsandbox at $ref ($(git rev-parse --short "$ref"))" | tee -a "$out"
fi
# Enough samples for a stable median without running for long.
declare -A times=([Echo1KiB]=3000x [Result16MiB]=30x [CrashRecovery]=20x [SpawnInitialize]=300x [HostUnderBusyServer]=25x
  [EgressConnect]=40x [EgressBulk256MiB]=3x [EgressMemory100Conns]=5x [DaemonIdle]=3x [DaemonAttach]=10x)
for b in Echo1KiB Result16MiB CrashRecovery SpawnInitialize HostUnderBusyServer EgressConnect EgressBulk256MiB EgressMemory100Conns DaemonIdle DaemonAttach; do
  [[ $b =~ ${BENCH:-.} ]] || continue
  go test ./bench -run '^$' -bench "^Benchmark$b\$" -benchtime "${times[$b]}" -timeout 30m 2>&1 |
    grep -v '^time=' | tee -a "$out"
done
echo "results in $out"
