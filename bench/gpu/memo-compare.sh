#!/usr/bin/env bash
# The step memo's effect on a live tuning (bench/RESULTS.md, "Cost of an
# evaluation"): per kernel, the same live.sh run (budget, jobs, one GPU)
# with ciq-tuner's --memo=false and then --memo=true, back to back on one
# machine, without the confirmation step. Prints bench/journal_stats.py's
# line and live.sh's summary (GPU busy %) for each.
#
#   bench/gpu/memo-compare.sh BIN OUT BUDGET JOBS KERNEL...
set -uo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
bin=$1 out=$2 budget=$3 jobs=$4
shift 4
for kernel in "$@"; do
  for memo in false true; do
    TUNER_ARGS="--memo=$memo" CONFIRM=0 "$root/bench/gpu/live.sh" "$bin" "$out/memo-$memo" "$kernel" "$budget" "$jobs" >/dev/null 2>&1
    dir="$out/memo-$memo/$kernel-j$jobs"
    echo "== $kernel memo=$memo: $(head -n 1 "$dir/summary.txt")"
    python3 "$root/bench/journal_stats.py" "$dir/run"
  done
done
