#!/usr/bin/env bash
# The quick loop as the README gives it, `go test -short ./...`, run the way
# an ordinary user runs it: as a user without root, in a copy of the tree,
# with its own Go caches. It must pass without root, npm or apt: the tests
# that need confinement this user cannot have skip and say why.
# Run by scripts/test.sh as root; run as a plain user it is just the loop.
set -euo pipefail
cd "$(dirname "$0")/.."
if [ "$(id -u)" != 0 ]; then
  exec go test -short -count=1 ./...
fi
user=mcpsandbox-quick
id "$user" >/dev/null 2>&1 || useradd --create-home --shell /bin/bash "$user"
home=$(getent passwd "$user" | cut -d: -f6)
work=$(mktemp -d /tmp/mcpsandbox-quick.XXXXXX)
trap 'rm -rf "$work"' EXIT
# The tracked files only: no npm servers, no build output.
git ls-files -z | tar --null -T - -cf - | tar -xf - -C "$work"
# The modules this machine already fetched, so the loop needs no network;
# what an earlier run copied is kept, what go.mod added since is copied.
mkdir -p "$home/go/pkg/mod"
cp -a -n "$(go env GOMODCACHE)/." "$home/go/pkg/mod/"
chown -R "$user:" "$work" "$home/go"
t0=$SECONDS
runuser -u "$user" -- env -i HOME="$home" PATH="$PATH" USER="$user" \
  GOMODCACHE="$home/go/pkg/mod" GOCACHE="$home/.cache/go-build" GOPROXY=off GOFLAGS=-mod=mod \
  bash -c "cd '$work' && go test -short -count=1 ./..."
echo "test-quick-unprivileged: go test -short ./... passed as $user in $((SECONDS - t0)) s"
