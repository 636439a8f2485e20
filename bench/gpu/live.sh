#!/usr/bin/env bash
# Live tuning on the GPU machine (bench/RESULTS.md, steps 4 and 5): ciq-tuner
# tunes one bench program for real (build, check and time per candidate),
# ships its winner, then a fresh CMake build through ciq-nvcc applies the
# cached winner and is timed against a build with ciq disabled, interleaved,
# one process per run.
#
#   bench/gpu/live.sh BIN OUT KERNEL [BUDGET] [JOBS]
# TUNER_ARGS adds options to ciq-tuner run (e.g. --memo=false); CONFIRM=0
# skips the confirmation builds and timings. SERVER=1 tunes with a resident
# benchmark (--bench-server): the program, built once without ciq, serves
# --cubin requests (timed without a check of their own: the --check request
# checks), and each candidate's build is `ciq-nvcc -cubin`.
# GPUS (default 0) is the tuner's --gpus.
# Writes OUT/KERNEL-jJOBS/: the tuner's run directory, tune.log, gpu-util.csv
# (nvidia-smi every 200 ms during the tuning: time, GPU index, utilisation),
# confirm.csv, summary.txt.
set -uo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
bin=$(cd "$1" && pwd) out=$2 kernel=$3 budget=${4:-32} jobs=${5:-1}
cuda=${CUDA_HOME:-/usr/local/cuda}
export PATH="$bin:$cuda/bin:$PATH" CIQ_REAL_NVCC="$cuda/bin/nvcc" CIQ_REAL_PTXAS="$cuda/bin/ptxas"
dir="$out/$kernel-j$jobs"
rm -rf "$dir" && mkdir -p "$dir"
export CIQ_CACHE_DIR="$dir/cache"

# The flags of the suite's CMake Release build (-O3 -DNDEBUG; C++17 is nvcc's
# default, which CMake does not spell out): NVVM-stage entries are keyed by
# the preprocessed unit, so the tuning build must preprocess it as the
# program's build does (an explicit -std=c++17 makes the host headers strict
# ANSI: another unit, and the confirmation build would miss).
flags="-O3 -DNDEBUG -arch=sm_90a -I $root/bench/common $root/bench/kernels/$kernel.cu"
if [[ ${SERVER:-0} == 1 ]]; then
  "$cuda/bin/nvcc" $flags -o "$dir/server" || exit 1 # once, before the clock starts
  how=(--build "ciq-nvcc -cubin $flags -o {workdir}/k.cubin" --bench-server "$dir/server --serve"
       --bench "--cubin {workdir}/k.cubin --no-check --samples 30" --check "--cubin {workdir}/k.cubin --check")
else
  how=(--build "ciq-nvcc $flags -o {workdir}/bench" --bench "{workdir}/bench --samples 30" --check "{workdir}/bench --check")
fi
nvidia-smi --query-gpu=timestamp,index,utilization.gpu --format=csv,noheader,nounits -lms 200 >"$dir/gpu-util.csv" &
smi=$!
t0=$SECONDS
ciq-tuner run "${how[@]}" --metric 'time_ms: ([0-9.]+)' \
  --repeats 1 --budget "$budget" --jobs "$jobs" --gpus "${GPUS:-0}" --verify-runs 8 --out "$dir/run" --json ${TUNER_ARGS:-} >"$dir/tune.out" 2>"$dir/tune.log"
rc=$?
wall=$((SECONDS - t0))
kill $smi
busy=$(awk -F', ' '{s[$2] += $3; n[$2]++} END {for (g in s) printf "%sgpu%s=%.1f", (k++ ? "," : ""), g, s[g] / n[g]}' "$dir/gpu-util.csv")
evals=$(wc -l <"$dir/run/journal.jsonl" 2>/dev/null || echo 0)
{
  echo "kernel=$kernel budget=$budget jobs=$jobs tuner_exit=$rc wall_s=$wall journal_entries=$evals gpu_busy_pct=$busy"
  tail -n 1 "$dir/tune.out"
} | tee "$dir/summary.txt"
tail -n 25 "$dir/tune.log"
[[ $rc == 0 && ${CONFIRM:-1} != 0 ]] || exit 0

# Confirmation: a fresh CMake build through ciq-nvcc (the cache applies the
# winner) against one with ciq off, each timed in 8 fresh processes.
for side in tuned default; do
  b="/tmp/ciq-live-$kernel-$side"
  rm -rf "$b"
  [[ $side == default ]] && export CIQ_DISABLE=1
  CUDACXX="$bin/ciq-nvcc" cmake -S "$root/bench" -B "$b" >/dev/null 2>&1 && cmake --build "$b" --target "bench_$kernel" -- VERBOSE=1 >"$dir/build-$side.log" 2>&1
  unset CIQ_DISABLE
  grep -E "Used [0-9]+ registers" "$dir/build-$side.log" | sed "s/^/$side: /" | tee -a "$dir/summary.txt"
done
ciq-cache stats | grep -E "^ +(hit|applied|unit\.(hit|applied))" | tee -a "$dir/summary.txt"
echo "side,process,time_ms" >"$dir/confirm.csv"
for i in $(seq 1 8); do
  for side in default tuned; do
    echo "$side,$i,$("/tmp/ciq-live-$kernel-$side/bench_$kernel" --samples 30 2>/dev/null | sed -n 's/time_ms: //p')" >>"$dir/confirm.csv"
  done
done
python3 - "$dir/confirm.csv" <<'PY' | tee -a "$dir/summary.txt"
import csv, statistics, sys
rows = list(csv.DictReader(open(sys.argv[1])))
t = {s: [float(r["time_ms"]) for r in rows if r["side"] == s and r["time_ms"]] for s in ("default", "tuned")}
d, w = statistics.median(t["default"]), statistics.median(t["tuned"])
print(f"confirm: default {d:.4f} ms, tuned {w:.4f} ms, speedup {d / w:.3f}x "
      f"(spread default {min(t['default']):.4f}-{max(t['default']):.4f}, tuned {min(t['tuned']):.4f}-{max(t['tuned']):.4f})")
PY
