#!/usr/bin/env bash
# Runs every ciq test: installs what is missing (install/deps.sh), builds
# with tests, and runs the GoogleTest units and the lit end-to-end tests.
# Usage: install/test.sh [extra ctest arguments]
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
"$root/install/deps.sh"
build=${CIQ_BUILD_DIR:-$root/build}
cmake -S "$root" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCIQ_BUILD_TESTS=ON -DCIQ_WERROR=ON >/dev/null
cmake --build "$build"
cd "$build"
ctest --output-on-failure -j "$(nproc)" "$@"
