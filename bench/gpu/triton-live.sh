#!/usr/bin/env bash
# Triton through ciq (bench/RESULTS.md, step 6): TRITON_PTXAS_PATH=ciq-ptxas
# with the toolkit's ptxas 13.0 behind it; ciq-tuner tunes a Triton program
# (the benchmark compiles it: TRITON_ALWAYS_COMPILE=1), ships the winner,
# then fresh processes show it applied (ciq's trace) and time it against
# ciq disabled.
#
#   bench/gpu/triton-live.sh BIN OUT [BUDGET] [PROGRAM]    (PROGRAM: matmul (default), attention, histogram)
set -uo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
bin=$(cd "$1" && pwd) out=$2 budget=${3:-16} program=${4:-matmul}
cuda=${CUDA_HOME:-/usr/local/cuda}
dir="$out/triton-$program"
rm -rf "$dir" && mkdir -p "$dir"
export PATH="$bin:$cuda/bin:$PATH" CIQ_REAL_PTXAS="$cuda/bin/ptxas" CIQ_CACHE_DIR="$dir/cache"
export TRITON_PTXAS_PATH="$bin/ciq-ptxas" TRITON_ALWAYS_COMPILE=1
bench="python3 $root/bench/triton/$program.py"

t0=$SECONDS
ciq-tuner run --bench "$bench --samples 30" --metric 'time_ms: ([0-9.]+)' --repeats 1 --budget "$budget" \
  --verify-runs 8 --out "$dir/run" --json >"$dir/tune.out" 2>"$dir/tune.log"
rc=$?
echo "triton $program tuner_exit=$rc wall_s=$((SECONDS - t0))" | tee "$dir/summary.txt"
tail -n 1 "$dir/tune.out" | tee -a "$dir/summary.txt"
grep -E "found|searching|verdict|shipped|pruned" "$dir/tune.log" | tee -a "$dir/summary.txt"

echo "== a fresh process, no CIQ_CONTROLS: the cache applies the winner" | tee -a "$dir/summary.txt"
CIQ_TRACE="$dir/trace" $bench --samples 30 2>&1 | tail -n 3 | tee -a "$dir/summary.txt"
cat "$dir"/trace/* 2>/dev/null | grep -E '"controls|applied|registers' | head -n 5 | tee -a "$dir/summary.txt"
ciq-cache stats | grep -E "^ +(hit|applied|miss)" | tee -a "$dir/summary.txt"
echo "side,process,time_ms" >"$dir/confirm.csv"
for i in $(seq 1 6); do
  echo "default,$i,$(CIQ_DISABLE=1 $bench --samples 30 2>/dev/null | sed -n 's/time_ms: //p')" >>"$dir/confirm.csv"
  echo "tuned,$i,$($bench --samples 30 2>/dev/null | sed -n 's/time_ms: //p')" >>"$dir/confirm.csv"
done
cat "$dir/confirm.csv" | tee -a "$dir/summary.txt"
