#!/usr/bin/env bash
# Runs every ciq test: installs what is missing (install/deps.sh), builds
# with tests (reusing install/setup.sh's build), runs the GoogleTest units and the lit end-to-end tests
# (while the fuzzers build beside them, at the lowest priority), then
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
fuzz_seconds=${CIQ_FUZZ_SECONDS:-15}
export CIQ_FUZZ_BUILD_DIR=${CIQ_FUZZ_BUILD_DIR:-$build-fuzz}
fuzz_log=$build/fuzz-build.log
if ((fuzz_seconds > 0)); then
  # The fuzzers' build (clang, ASan: 286 s of CPU on 2 cores) runs beside
  # ctest at the lowest priority: it takes the CPU that ctest's tests leave
  # idle while they wait (Slurm's queue, a browser, their own children),
  # about a quarter of it, and gives way at once to a test that wants it.
  # In a session of its own (setsid): a failed ctest stops the whole build,
  # its cmake, ninja and compilers too, as one process group.
  nice -n 19 setsid "$root/test/fuzz/run.sh" --build-only >"$fuzz_log" 2>&1 &
  fuzz_build=$!
fi
status=0
(cd "$build" && ctest --output-on-failure -j "$(nproc)" "$@") || status=$?
if ((fuzz_seconds > 0)); then
  if ((status != 0)); then
    kill -- -"$fuzz_build" 2>/dev/null || true
    exit "$status"
  fi
  if ! wait "$fuzz_build"; then
    echo "install/test.sh: the fuzzers' build failed; its log ($fuzz_log) ends:" >&2
    tail -n 40 "$fuzz_log" >&2
    exit 1
  fi
  "$root/test/fuzz/run.sh" "$fuzz_seconds"
fi
exit "$status"
