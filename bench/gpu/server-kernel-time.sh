#!/usr/bin/env bash
# Issue 23 on the GPU machine: kernel-time with a resident benchmark. One
# bench kernel tuned twice through its --serve program (as bench/gpu/live.sh
# SERVER=1), same seed, budget and --jobs: by the number the program prints
# (--metric time_ms, the median launch) and by libciq-inject's time of the
# kernel inside the server, cut per request (--objective kernel-time:NAME,
# every launch of the request summed). Then: the two verdicts and winners,
# evaluations per minute, and how the two measures of the default agree
# (kernel-time / launches of a request against the printed median).
#
#   bench/gpu/server-kernel-time.sh BIN OUT BUDGET KERNEL:NAME...   (e.g. stencil3d:wave_step; SAMPLES, default 200)
source "$(dirname "$0")/common.sh"
budget=$3
shift 3
export PATH="$bin:$cuda/bin:$PATH" CIQ_REAL_NVCC="$cuda/bin/nvcc" CIQ_REAL_PTXAS="$cuda/bin/ptxas"
export CIQ_INJECT_LIBRARY=$(cd "$bin/../lib" && pwd)/libciq-inject.so
samples=${SAMPLES:-200}
for spec in "$@"; do
  kernel=${spec%%:*} name=${spec#*:}
  flags="-O3 -DNDEBUG -arch=sm_90a -I $root/bench/common $root/bench/kernels/$kernel.cu"
  dir=$out/$kernel
  rm -rf "$dir" && mkdir -p "$dir"
  nvcc $flags -o "$dir/server" || continue
  for how in metric kernel-time; do
    export CIQ_CACHE_DIR=$dir/cache-$how
    objective=(--metric 'time_ms: ([0-9.]+)')
    [[ $how == kernel-time ]] && objective=(--objective "kernel-time:$name")
    t0=$SECONDS
    ciq-tuner run --build "ciq-nvcc -cubin $flags -o {workdir}/k.cubin" --bench-server "$dir/server --serve" \
      --bench "--cubin {workdir}/k.cubin --no-check --samples $samples" --check "--cubin {workdir}/k.cubin --check" \
      "${objective[@]}" --budget "$budget" --jobs 2 --repeats 3 --verify-runs 6 --seed 1 --no-ship \
      --out "$dir/$how" --json >"$dir/$how.out" 2>"$dir/$how.log"
    echo "== $kernel by $how: exit $? in $((SECONDS - t0)) s"
    grep -E "verdict|evaluations \(" "$dir/$how.log" | tail -n 2
    python3 "$root/bench/journal_stats.py" "$dir/$how"
  done
  python3 - "$dir" "$samples" <<'PY'
import json, statistics as st, sys
d, samples = sys.argv[1], int(sys.argv[2])
def default(how):
    rows = [json.loads(l) for l in open(f"{d}/{how}/journal.jsonl")]
    return next(r for r in rows if r["n"] == 0)
m, k = default("metric"), default("kernel-time")
per_launch = [v / (samples + 1) for v in k["samples"][0]]  # the request's launches: a warm-up and the samples
print(f"default: printed median {st.median(m['samples'][0]):.5f} ms a launch; kernel-time {st.median(k['samples'][0]):.3f} ms "
      f"a request = {st.median(per_launch):.5f} ms a launch over {samples + 1} launches (runs: {', '.join(f'{v:.3f}' for v in k['samples'][0])})")
for how in ("metric", "kernel-time"):
    s = json.load(open(f"{d}/{how}/summary.json"))
    print(f"{how}: winner {s['controls']}, baseline {s['baseline']:.5g}, best {s['best']:.5g} "
          f"({100 * (s['best'] - s['baseline']) / s['baseline']:+.1f} %), p {s['p_value']}, verdict: {s['verdict']}")
PY
done
