#!/usr/bin/env bash
# Configures ciq's build directory the one way install/setup.sh and
# install/test.sh both use, so that the tests reuse the build setup made
# (same directory, same options: nothing is compiled twice). Tests are
# configured (not built) by setup.sh; -Werror is on for both, as in CI.
#
#   install/configure.sh           # configures $CIQ_BUILD_DIR (default ./build), prints its path
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${CIQ_BUILD_DIR:-$root/build}
cmake -S "$root" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCIQ_BUILD_TESTS=ON -DCIQ_WERROR=ON >/dev/null
echo "$build"
