#!/usr/bin/env bash
# Runs every ciq test: installs what is missing (install/deps.sh), builds
# with tests (reusing install/setup.sh's build), runs the GoogleTest units and the lit end-to-end tests, then
# every libFuzzer target briefly ($CIQ_FUZZ_SECONDS each, default 15; 0
# skips them) from its seed corpus.
# Usage: install/test.sh [extra ctest arguments]
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
"$root/install/deps.sh"
# The build install/setup.sh made, reused: same directory and options
# (install/configure.sh), so only the tests are compiled here.
build=$("$root/install/configure.sh")
cmake --build "$build"
(cd "$build" && ctest --output-on-failure -j "$(nproc)" "$@")
fuzz_seconds=${CIQ_FUZZ_SECONDS:-15}
if ((fuzz_seconds > 0)); then
  CIQ_FUZZ_BUILD_DIR=${CIQ_FUZZ_BUILD_DIR:-$build-fuzz} "$root/test/fuzz/run.sh" "$fuzz_seconds"
fi
