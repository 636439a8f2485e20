#!/usr/bin/env bash
# What keeps the GPU busy (bench/RESULTS.md, "A resident benchmark"): per
# kernel, three live.sh tunings back to back on one machine, same budget
# and --jobs, memo on:
#   generational  --strategy generational, a benchmark process per run (as before)
#   steady        steady-state search, a benchmark process per run
#   server        steady-state search, a resident benchmark (--bench-server)
# The server run also confirms its winner end to end (a fresh CMake build of
# the program through ciq-nvcc against one with ciq off, 8 processes each).
# Prints live.sh's summary and bench/journal_stats.py's line for each.
#
#   [MODES="generational steady server"] bench/gpu/server-compare.sh BIN OUT BUDGET JOBS KERNEL...
set -uo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
bin=$1 out=$2 budget=$3 jobs=$4
shift 4
mkdir -p "$out"
for kernel in "$@"; do
  for mode in ${MODES:-generational steady server}; do
    case $mode in
      generational) env=(TUNER_ARGS="--strategy generational" CONFIRM=0) ;;
      steady) env=(CONFIRM=0) ;;
      server) env=(SERVER=1) ;;
    esac
    env "${env[@]}" "$root/bench/gpu/live.sh" "$bin" "$out/$mode" "$kernel" "$budget" "$jobs" >"$out/$mode-$kernel.txt" 2>&1
    dir="$out/$mode/$kernel-j$jobs"
    echo "== $kernel $mode: $(head -n 1 "$dir/summary.txt")"
    tail -n +2 "$dir/summary.txt"
    python3 "$root/bench/journal_stats.py" --gpu-util "$dir/gpu-util.csv" "$dir/run"
  done
done
