#!/usr/bin/env bash
# Builds the libFuzzer targets (clang, ASan + UBSan) and runs each for a
# fixed time from its committed seed corpus (test/fuzz/corpus/TARGET; new
# inputs go to a scratch corpus, so the committed one stays as it is).
# A crash leaves its input in $CIQ_FUZZ_OUT/TARGET/ and fails the run:
# turn it into a regression seed (corpus/TARGET/) and fix it.
# Usage: test/fuzz/run.sh [SECONDS per target, default 30] [TARGET...]
#        test/fuzz/run.sh --build-only   (only the build; install/test.sh
#                                         runs it beside ctest)
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
seconds=${1:-30}
shift || true
build=${CIQ_FUZZ_BUILD_DIR:-$root/build-fuzz}
out=${CIQ_FUZZ_OUT:-$build/fuzz-out}
# Debian's clang-14 (install/deps.sh), or whatever clang is on PATH.
cc=clang-14 cxx=clang++-14
command -v "$cxx" >/dev/null || cc=clang cxx=clang++
# A build directory made with another compiler cannot switch: start afresh.
if [[ -f "$build/CMakeCache.txt" ]] && ! grep -q "^CMAKE_CXX_COMPILER:[A-Z]*=.*/$cxx\$" "$build/CMakeCache.txt"; then
  rm -rf "$build"
fi
cmake -S "$root" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE= -DCIQ_FUZZ=ON \
  -DCMAKE_C_COMPILER="$cc" -DCMAKE_CXX_COMPILER="$cxx" >/dev/null
cmake --build "$build" --target fuzzers
[[ $seconds == --build-only ]] && exit 0
targets=("$@")
if ((${#targets[@]} == 0)); then
  for f in "$root"/test/fuzz/fuzz_*.cpp; do targets+=("$(basename "$f" .cpp)"); done
fi
# One target at a time per core (each libFuzzer process is single-threaded):
# on CI's 2 cores the 11 targets take half the wall time they would in turn.
jobs=${CIQ_FUZZ_JOBS:-$(nproc)}
# run_one TARGET: fuzzes it; its report lines go to $out/TARGET/report
# (a crash: a first line "fuzz TARGET: FAILED ...").
run_one() {
  local t=$1 scratch="$out/$1/corpus" log="$out/$1/log"
  mkdir -p "$scratch" "$out/$t/crashes"
  if "$build/bin/$t" -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 -print_final_stats=1 \
       -artifact_prefix="$out/$t/crashes/" "$scratch" "$root/test/fuzz/corpus/$t" >"$log" 2>&1; then
    echo "fuzz $t: $(grep -m1 -o 'stat::number_of_executed_units: *[0-9]*' "$log" | grep -o '[0-9]*$') runs in ${seconds} s," \
         "$(grep -o 'cov: [0-9]*' "$log" | tail -1), no crash" >"$out/$t/report"
  else
    { echo "fuzz $t: FAILED; the input is in $out/$t/crashes/; the end of its log:"; tail -n 30 "$log"; } >"$out/$t/report"
    return 1
  fi
}
for t in "${targets[@]}"; do rm -f "$out/$t/report"; done
for t in "${targets[@]}"; do
  while (($(jobs -rp | wc -l) >= jobs)); do wait -n || true; done
  run_one "$t" &
done
wait
failed=0
for t in "${targets[@]}"; do
  if [[ -f "$out/$t/report" ]]; then cat "$out/$t/report"; else echo "fuzz $t: FAILED: it left no report"; fi
  grep -q "^fuzz $t: FAILED" "$out/$t/report" 2>/dev/null && failed=1
  [[ -f "$out/$t/report" ]] || failed=1
done
exit $failed
