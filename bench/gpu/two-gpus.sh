#!/usr/bin/env bash
# Issue 28 on the GPU machine: the same search (one bench kernel, same
# budget, --jobs and seed) with --gpus 0 and with --gpus 0,1, a benchmark
# process per run and a resident benchmark (--bench-server), through
# bench/gpu/live.sh (CONFIRM=0). For each: evaluations per minute and each
# GPU's busy fraction over the search (bench/journal_stats.py), the
# default on each GPU (per-GPU baselines, summary.json), the verdict and
# the winner. On a machine with one GPU only the --gpus 0 half runs.
#
#   bench/gpu/two-gpus.sh BIN OUT BUDGET JOBS KERNEL...     (MODES="process server")
source "$(dirname "$0")/common.sh"
budget=$3 jobs=$4
shift 4
count=$(nvidia-smi -L 2>/dev/null | grep -c '^GPU ')
sets=(0)
((count >= 2)) && sets+=(0,1)
echo "GPUs on this machine: $count; --gpus runs: ${sets[*]}"
nvidia-smi --query-gpu=index,name,clocks.max.sm,power.limit,temperature.gpu --format=csv,noheader 2>/dev/null
for kernel in "$@"; do
  for mode in ${MODES:-process server}; do
    for gpus in "${sets[@]}"; do
      name=$mode-gpus${gpus/,/}
      server=0
      [[ $mode == server ]] && server=1
      GPUS=$gpus SERVER=$server CONFIRM=0 TUNER_ARGS="--seed 1 ${TUNER_ARGS:-}" \
        "$root/bench/gpu/live.sh" "$bin" "$out/$name" "$kernel" "$budget" "$jobs" >"$out/$name-$kernel.txt" 2>&1
      dir=$out/$name/$kernel-j$jobs
      echo "== $kernel $mode --gpus $gpus: $(head -n 1 "$dir/summary.txt")"
      python3 "$root/bench/journal_stats.py" --gpu-util "$dir/gpu-util.csv" "$dir/run"
      python3 - "$dir/run/summary.json" <<'PY'
import json, sys
try:
    s = json.load(open(sys.argv[1]))
except (OSError, ValueError) as e:
    sys.exit(f"no summary: {e}")
defaults = ", ".join(f"GPU {d['gpu']} {d['values'][0]:.4f} ms ({d['runs']} runs)" for d in s.get("gpu_defaults", []))
print(f"winner {s['controls']}; verdict: {s['verdict']}; baseline {s['baseline']:.4f} ms, best {s['best']:.4f} ms"
      + (f"; default per GPU: {defaults}" if defaults else ""))
PY
    done
  done
done
