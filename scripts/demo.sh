#!/usr/bin/env bash
# Sets up what the build needs, builds mcpsandbox and mcpsandbox-demo, and
# runs the demo.
set -euo pipefail
cd "$(dirname "$0")/.."
./scripts/test-setup.sh --build-deps
./scripts/build.sh
exec ./mcpsandbox-demo "$@"
