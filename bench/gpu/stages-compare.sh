#!/usr/bin/env bash
# What the NVVM stage adds (bench/RESULTS.md, "The NVVM stage"): per kernel,
# two live.sh tunings on one machine with the same budget, jobs and seed, a
# resident benchmark, and each winner confirmed end to end (a fresh CMake
# build of the program through ciq-nvcc, against one with ciq off, 8
# processes each, interleaved):
#   ptxas  --stages ptxas: ptxas options and directives only (as before)
#   all    --stages all: the same plus the NVVM stage (cicc) of the kernel's unit
# Prints live.sh's summary for each and the winner each shipped.
#
#   [MODES="ptxas all"] bench/gpu/stages-compare.sh BIN OUT BUDGET JOBS KERNEL...
set -uo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
bin=$1 out=$2 budget=$3 jobs=$4
shift 4
mkdir -p "$out"
for kernel in "$@"; do
  for mode in ${MODES:-ptxas all}; do
    env SERVER=1 TUNER_ARGS="--stages $mode" "$root/bench/gpu/live.sh" "$bin" "$out/$mode" "$kernel" "$budget" "$jobs" >"$out/$mode-$kernel.txt" 2>&1
    dir="$out/$mode/$kernel-j$jobs"
    echo "== $kernel $mode: $(head -n 1 "$dir/summary.txt")"
    tail -n +2 "$dir/summary.txt"
    grep -E "shipped|verdict|nothing beat" "$dir/tune.log" | sed 's/^/  /'
  done
done
