#!/bin/bash
# The guest side of scripts/test-guest.sh: runs in the guest as root from a
# plain service (whose cgroup holds the runner's processes too), with the
# repository as the working directory. Phases run as root, then as the
# user "user" in a login session (runuser -l: pam_systemd's session-cN.scope).
#   tier.sh WORK            as root: the root phases, then the user's
#   tier.sh --user WORK     the user's phases (called by the first)
set -u
user_phase=false
if [ "$1" = --user ]; then user_phase=true; shift; fi
work=$1
repo=$(pwd)
export MCPSANDBOX_GUEST=1 MCPSANDBOX_TEST_HOSTILE=$work/hostile PATH=$work/node/bin:$PATH
# Emulation is 10-20x slower: the tests' waits stretch (none stands in for synchronisation).
export MCPSANDBOX_TEST_TIME_SCALE=4
failed=()

# phase NAME PACKAGE-DIR COMMAND...: runs COMMAND (a test binary, -test.v)
# in the package's directory (tests find the repository from there), prints
# each test's result line, and all of its output when it failed.
phase() {
  local name=$1 dir=$2 t0=$SECONDS rc=0 log
  shift 2
  log=$(mktemp)
  echo "=== guest tier: $name"
  (cd "$repo/$dir" && "$@") >"$log" 2>&1 || rc=$?
  if [ "$rc" = 0 ]; then
    grep -E '^ *--- (PASS|SKIP)|^Benchmark' "$log"
  else
    grep -v '^time=' "$log"
    failed+=("$name")
  fi
  rm -f "$log"
  echo "=== guest tier: $name: $([ "$rc" = 0 ] && echo ok || echo "FAILED ($rc)") in $((SECONDS - t0)) s"
}

# Tests that set outer limits or run servers by the dozen get a delegated
# scope of their own, as a developer would run them; the launch tests start
# from where they are, as hosts do.
if ! $user_phase; then
  # The escape table's unprivileged half runs as this user (scripts/test-setup.sh makes it on a host).
  id mcpsandbox-test >/dev/null 2>&1 || useradd --system --no-create-home --shell /usr/sbin/nologin mcpsandbox-test
fi
if $user_phase; then
  delegated=(systemd-run --user --scope -q -p Delegate=yes --)
else
  delegated=(systemd-run --scope -q -p Delegate=yes --)
fi
# Each npm server start costs seconds under emulation: the user runs a subset.
confined_relay='TestConfinedNPMFilesystem|TestConfinedNPMMemorySurvivesACrash|TestServerEverything$|TestServerFilesystem|TestCrashMidCall|TestCrashSDKHost|TestExhaustionRestarts|TestSIGKILLOfSupervisor|TestHangFoundByHeartbeat|TestStatelessSessionSurvivesCrash|TestGoSDKThroughRelay'
$user_phase && confined_relay='TestConfinedNPMFilesystem|TestServerEverything$|TestCrashMidCall|TestExhaustionRestarts|TestSIGKILLOfSupervisor|TestStatelessSessionSurvivesCrash'

phase "launch ways and doctor ($(id -un))" cmd/mcpsandbox \
  "$work/mcpsandbox.test" -test.run 'TestSystemd|TestNoSystemd' -test.v -test.count=1 -test.timeout 10m
phase "sandbox/cgroups: v2 backend, home, kernel-enforced limits ($(id -un))" sandbox/cgroups \
  "${delegated[@]}" "$work/cgroups.test" -test.v -test.count=1 -test.timeout 10m
phase "sandbox: the init stage on its own ($(id -un))" sandbox/internal/initstage \
  "$work/initstage.test" -test.v -test.count=1 -test.timeout 5m
phase "sandbox: escape table, confinement, cgroups, seccomp ($(id -un))" sandbox \
  "${delegated[@]}" "$work/sandbox.test" -test.v -test.count=1 -test.timeout 10m
phase "sandbox/seccomp: profiles under probes ($(id -un))" sandbox/seccomp \
  "$work/seccomp.test" -test.v -test.count=1 -test.skip 'TestSeccompDockerProfileTooLarge' -test.timeout 10m
phase "supervisor: confined relay and npm servers ($(id -un))" supervisor \
  "${delegated[@]}" "$work/supervisor.test" -test.run "$confined_relay" -test.v -test.count=1 -test.timeout 10m

if ! $user_phase; then
  phase "cmd: run ($(id -un))" cmd/mcpsandbox \
    "${delegated[@]}" "$work/mcpsandbox.test" -test.run 'TestRun' -test.v -test.count=1 -test.timeout 5m
  # The scope request beside a bwrap start, briefly; GUEST_BENCH=full adds
  # whole starts with and without it, which under emulation need many
  # samples (minutes) for a stable median.
  benches='^BenchmarkScopeRequest$' samples=5x
  [ "${GUEST_BENCH:-1}" = full ] && benches='^Benchmark(SpawnScope|ScopeRequest)$' samples=25x
  if [ "${GUEST_BENCH:-1}" != 0 ]; then
    phase "bench: the scope request and spawn -> initialize beside bwrap" bench \
      env MCPSANDBOX_BENCH_BINARIES="$work/benchbin" "$work/bench.test" -test.run '^$' \
      -test.bench "$benches" -test.benchtime "$samples" -test.timeout 20m
  fi
  echo "=== guest tier: switching to the user \"user\" in a login session"
  runuser -l user -c "cd '$repo' && GUEST_BENCH=0 bash '$work/tier.sh' --user '$work'" || failed+=("user phases")
fi

if [ ${#failed[@]} -gt 0 ]; then
  echo "=== guest tier ($(id -un)): FAILED: ${failed[*]}"
  exit 1
fi
echo "=== guest tier ($(id -un)): all phases passed"
