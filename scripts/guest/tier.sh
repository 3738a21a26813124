#!/bin/bash
# The guest side of scripts/test-guest.sh: runs in the guest as root from a
# plain service (whose cgroup holds the runner's processes too), with the
# repository as the working directory. Phases run as root, then as the
# user "user" in a login session (runuser -l: pam_systemd's session-cN.scope).
# On Debian 12 the whole tier runs; on Debian 13 the tests trixie_tests names.
#   tier.sh WORK            as root: the root phases, then the user's
#   tier.sh --user WORK     the user's phases (called by the first)
#   GUEST_ONLY=REGEXP       only the phases whose names match (grep -Ei)
set -u
user_phase=false
if [ "$1" = --user ]; then user_phase=true; shift; fi
work=$1
repo=$(pwd)
release=$(sed -n "s/^VERSION_CODENAME=//p" /etc/os-release)
# MCPSANDBOX_GUEST_RELEASE tells tests which image they are in, so that one
# the image promises a kernel feature to can fail rather than skip without it.
export MCPSANDBOX_GUEST=1 MCPSANDBOX_GUEST_RELEASE=$release MCPSANDBOX_TEST_HOSTILE=$work/hostile PATH=$work/node/bin:$PATH
# Emulation is 10-20x slower: the tests' waits stretch (none stands in for synchronisation).
export MCPSANDBOX_TEST_TIME_SCALE=4
failed=()

# phase NAME PACKAGE-DIR COMMAND...: runs COMMAND (a test binary, -test.v)
# in the package's directory (tests find the repository from there), prints
# each test's result line, and all of its output when it failed.
phase() {
  local name=$1 dir=$2 t0=$SECONDS rc=0 log
  shift 2
  if [ -n "${GUEST_ONLY:-}" ] && ! grep -qEi -- "$GUEST_ONLY" <<<"$name"; then return 0; fi
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

# What runs on the Debian 13 image (kernel 6.12, systemd 257, Landlock ABI 6),
# as root and then as the user: one entry per package, "DIR PATTERN START",
# the package's directory, a -test.run regexp, and where the tests start:
# "delegated" (a delegated scope of their own, as a developer runs them) or
# "here" (where tier.sh runs, as hosts start mcpsandbox). To add a test, add
# its name to its package's PATTERN, or add an entry; a package no entry had
# yet also needs its test binary built, in scripts/test-guest.sh's list.
# The package's tests run on both images, in package_tier, not from here.
trixie_tests=(
  'sandbox ^(TestEscape|TestConfined|TestLandlock) delegated'
  'supervisor ^TestEgress delegated'
  'cmd/mcpsandbox ^TestExplainSaysWhatLandlockDoes$ here'
  'cmd/mcpsandbox ^TestDaemonSystemd here'
  'packaging ^TestAppArmorProfile here'
)

# landlock_abi: the kernel's Landlock ABI, or "none (why)"; through perl,
# which every Debian image has: landlock_create_ruleset(NULL, 0,
# LANDLOCK_CREATE_RULESET_VERSION) is x86-64 syscall 444.
landlock_abi() { perl -e 'my $v = syscall(444, 0, 0, 1); print $v < 0 ? "none ($!)" : $v'; }
landlock_abi_at_least() { # N
  local abi
  abi=$(landlock_abi)
  echo "LSMs: $(cat /sys/kernel/security/lsm); Landlock ABI: $abi"
  case $abi in [0-9]*) [ "$abi" -ge "$1" ] ;; *) false ;; esac
}

# Debian 13: the image check, then what trixie_tests lists.
trixie_tier() {
  local entry dir pattern start how
  $user_phase || phase "the image: Landlock with ABI 6 (scoped abstract sockets and signals)" . \
    landlock_abi_at_least 6
  for entry in "${trixie_tests[@]}"; do
    read -r dir pattern start <<<"$entry"
    case $start in
      delegated) how=("${delegated[@]}") ;;
      here) how=() ;;
      *) echo "tier.sh: trixie_tests: $dir: START must be delegated or here, not \"$start\"" >&2; exit 2 ;;
    esac
    phase "$dir: $pattern ($(id -un))" "$dir" \
      "${how[@]}" "$work/${dir##*/}.test" -test.run "$pattern" -test.v -test.count=1 -test.timeout 10m
  done
}

# Debian 12: everything.
full_tier() {
  # Each npm server start costs seconds under emulation: the user runs a subset.
  local confined_relay='TestConfinedNPMFilesystem|TestConfinedNPMMemorySurvivesACrash|TestServerEverything$|TestServerFilesystem|TestCrashMidCall|TestCrashSDKHost|TestExhaustionRestarts|TestSIGKILLOfSupervisor|TestHangFoundByHeartbeat|TestStatelessSessionSurvivesCrash|TestGoSDKThroughRelay|TestEgress'
  $user_phase && confined_relay='TestConfinedNPMFilesystem|TestServerEverything$|TestCrashMidCall|TestExhaustionRestarts|TestSIGKILLOfSupervisor|TestStatelessSessionSurvivesCrash|TestEgress'

  phase "launch ways and doctor ($(id -un))" cmd/mcpsandbox \
    "$work/mcpsandbox.test" -test.run 'TestSystemd|TestNoSystemd' -test.v -test.count=1 -test.timeout 10m
  # root's: a system service; the user's: a user service in the login session
  phase "daemon as a systemd service ($(id -un))" cmd/mcpsandbox \
    "$work/mcpsandbox.test" -test.run '^TestDaemonSystemd' -test.v -test.count=1 -test.timeout 10m
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
  # root's run ends them as root and as mcpsandbox-test, the user's as the user.
  phase "cmd: nothing outlives prepare, run or the daemon ($(id -un))" cmd/mcpsandbox \
    "${delegated[@]}" "$work/mcpsandbox.test" -test.run '^TestNothingOutlivesMcpsandbox$' -test.v -test.count=1 -test.timeout 20m
  $user_phase && return

  phase "cmd: run ($(id -un))" cmd/mcpsandbox \
    "${delegated[@]}" "$work/mcpsandbox.test" -test.run 'TestRun' -test.v -test.count=1 -test.timeout 5m
  # The scope request beside a bwrap start, briefly; GUEST_BENCH=full adds
  # whole starts with and without it, which under emulation need many
  # samples (minutes) for a stable median.
  local benches='^BenchmarkScopeRequest$' samples=5x
  [ "${GUEST_BENCH:-1}" = full ] && benches='^Benchmark(SpawnScope|ScopeRequest)$' samples=25x
  if [ "${GUEST_BENCH:-1}" != 0 ]; then
    phase "bench: the scope request and spawn -> initialize beside bwrap" bench \
      env MCPSANDBOX_BENCH_BINARIES="$work/benchbin" "$work/bench.test" -test.run '^$' \
      -test.bench "$benches" -test.benchtime "$samples" -test.timeout 20m
  fi
}

# Tests that set outer limits or run servers by the dozen get a delegated
# scope of their own, as a developer would run them; the launch tests start
# from where they are, as hosts do.
if $user_phase; then
  delegated=(systemd-run --user --scope -q -p Delegate=yes --)
else
  delegated=(systemd-run --scope -q -p Delegate=yes --)
  echo "=== guest tier: Debian $(cat /etc/debian_version) ($release), kernel $(uname -r), $(systemctl --version | head -n1), Landlock ABI $(landlock_abi)"
  [ -n "${GUEST_ONLY:-}" ] && echo "=== guest tier: only the phases matching \"$GUEST_ONLY\" (GUEST_ONLY)"
  # The escape table's unprivileged half runs as this user (scripts/test-setup.sh makes it on a host).
  id mcpsandbox-test >/dev/null 2>&1 || useradd --system --no-create-home --shell /usr/sbin/nologin mcpsandbox-test
fi

# The package, on both images, after the other phases (whose doctor and
# service tests expect no unit installed): root installs the .deb
# (scripts/test-guest.sh builds it into WORK) and tests the system service,
# the user the user service in a login session, and root purges it.
package_phase() { # what: the -test.run pattern
  phase "package: $1 ($(id -un))" cmd/mcpsandbox \
    "$work/mcpsandbox.test" -test.run "^TestPackageSystemd$1\$" -test.v -test.count=1 -test.timeout 10m
}
package_tier() {
  # The image with AppArmor's userspace (Debian 13's): the profile too.
  if $user_phase; then
    if [ "$release" = trixie ]; then package_phase '(UserService|AppArmor)'; else package_phase UserService; fi
    return
  fi
  phase "package: dpkg -i" . dpkg -i "$work"/mcpsandbox_*.deb
  package_phase SystemService
  if [ -z "${GUEST_ONLY:-}" ] || grep -qEi -- "$GUEST_ONLY" <<<"package: UserService (user)"; then
    runuser -l user -c "cd '$repo' && GUEST_PACKAGE_ONLY=1 bash '$work/tier.sh' --user '$work'" || failed+=("the user's package phase")
  fi
  package_phase Purge
}

if [ "${GUEST_PACKAGE_ONLY:-}" = 1 ]; then
  package_tier
else
  if [ "$release" = trixie ]; then trixie_tier; else full_tier; fi

  if ! $user_phase; then
    echo "=== guest tier: switching to the user \"user\" in a login session"
    runuser -l user -c "cd '$repo' && GUEST_BENCH=0 GUEST_ONLY=$(printf %q "${GUEST_ONLY:-}") bash '$work/tier.sh' --user '$work'" || failed+=("user phases")
    package_tier
  fi
fi

if [ ${#failed[@]} -gt 0 ]; then
  echo "=== guest tier ($(id -un)): FAILED: ${failed[*]}"
  exit 1
fi
echo "=== guest tier ($(id -un)): all phases passed"
