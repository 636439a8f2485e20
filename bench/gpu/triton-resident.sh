#!/usr/bin/env bash
# Issue 27 on the GPU machine: the suite's Triton kernels tuned inside one
# Python process (bench/triton/resident.py: ciq.tune, ciq.triton_caches)
# against a process per evaluation (as bench/gpu/triton-live.sh), with the
# GPU's utilisation sampled by nvidia-smi every 200 ms during each run;
# winners are confirmed in fresh processes that take them from the cache.
#
#   bench/gpu/triton-resident.sh BIN OUT [STEP...]
# STEP: resident-PROGRAM, configs-matmul, process-PROGRAM (PROGRAM: matmul,
# attention, histogram). BUDGET (default 40) and PBUDGET (default 12, the
# process-per-evaluation run; PVERIFY its verification pairs, default 4)
# from the environment.
source "$(dirname "$0")/common.sh"
shift 2
steps=${*:-resident-matmul process-matmul}
export PATH="$bin:$cuda/bin:$PATH" CIQ_REAL_PTXAS="$cuda/bin/ptxas" TRITON_PTXAS_PATH="$bin/ciq-ptxas"
export PYTHONPATH="$root/tuner/python${PYTHONPATH:+:$PYTHONPATH}"

# Runs "$@" while sampling the GPU's utilisation into $util; prints the
# mean utilisation (%) after.
with_util() {
  local util=$1; shift
  nvidia-smi --query-gpu=utilization.gpu --format=csv,noheader,nounits -lms 200 >"$util" 2>/dev/null &
  local sampler=$!
  "$@"; local rc=$?
  kill "$sampler" 2>/dev/null; wait "$sampler" 2>/dev/null
  awk '{ s += $1; n++ } END { if (n) printf "gpu utilisation: mean %.0f %% over %d samples\n", s / n, n }' "$util"
  return $rc
}

# Median build and benchmark seconds per evaluation from a run's journal.
per_eval() {
  python3 - "$1" <<'PY'
import json, statistics as st, sys
rows = [json.loads(l) for l in open(sys.argv[1] + "/journal.jsonl")]
ok = [r for r in rows if r.get("status") == "ok"]
b = [r.get("build_s", 0) for r in ok]; m = [r.get("bench_s", 0) for r in ok]
print(f"journal: {len(rows)} evaluations, {len(ok)} measured; median build {st.median(b) if b else 0:.3f} s, "
      f"median benchmark {st.median(m) if m else 0:.3f} s, median both {st.median([x + y for x, y in zip(b, m)]) if ok else 0:.3f} s")
PY
}

# Fresh processes with ciq on (the cache's winner applies) and off, 6
# interleaved pairs; prints time_ms rows and the medians.
confirm() {
  local program=$1 dir=$2
  echo "side,process,time_ms" >"$dir/confirm.csv"
  for i in 1 2 3 4 5 6; do
    echo "default,$i,$(CIQ_DISABLE=1 TRITON_ALWAYS_COMPILE=1 python3 "$root/bench/triton/$program.py" --samples 30 2>/dev/null | sed -n 's/time_ms: //p')" >>"$dir/confirm.csv"
    echo "tuned,$i,$(TRITON_ALWAYS_COMPILE=1 CIQ_TRACE="$dir/confirm-trace" python3 "$root/bench/triton/$program.py" --samples 30 2>/dev/null | sed -n 's/time_ms: //p')" >>"$dir/confirm.csv"
  done
  python3 - "$dir/confirm.csv" <<'PY'
import csv, statistics as st, sys
rows = list(csv.DictReader(open(sys.argv[1])))
v = {s: [float(r["time_ms"]) for r in rows if r["side"] == s and r["time_ms"]] for s in ("default", "tuned")}
if all(v.values()):
    m = {s: st.median(x) for s, x in v.items()}
    print(f"confirm: default {m['default']:.4f} ms [{min(v['default']):.4f}-{max(v['default']):.4f}], "
          f"tuned {m['tuned']:.4f} ms [{min(v['tuned']):.4f}-{max(v['tuned']):.4f}], default/tuned {m['default'] / m['tuned']:.4f}")
PY
  grep -ho '"applied":[a-z]*' "$dir"/confirm-trace/* 2>/dev/null | sort | uniq -c
}

for step in $steps; do
  program=${step#*-}
  dir=$out/$step
  rm -rf "$dir" && mkdir -p "$dir"
  export CIQ_CACHE_DIR=$dir/cache
  printf '\n== %s (%s)\n' "$step" "$(date +%T)"
  case $step in
  resident-*|configs-*)
    flags=(); [[ $step == configs-* ]] && flags=(--configs)
    t0=$SECONDS
    with_util "$dir/util.txt" python3 "$root/bench/triton/resident.py" "$program" "${flags[@]}" --budget "${BUDGET:-40}" \
      --out "$dir/run" >"$dir/result.json" 2>"$dir/tune.log"
    echo "exit $? in $((SECONDS - t0)) s"
    cat "$dir/result.json"; grep -E "found|verdict|shipped|pruned|error" "$dir/tune.log" | tail -n 8
    per_eval "$dir/run"
    [[ $step == resident-* ]] && grep -q '"shipped": true' "$dir/result.json" && confirm "$program" "$dir"
    ;;
  process-*)
    # As bench/gpu/triton-live.sh tunes: a Python process per evaluation
    # that compiles the kernel (TRITON_ALWAYS_COMPILE=1) and times it.
    t0=$SECONDS
    with_util "$dir/util.txt" env TRITON_ALWAYS_COMPILE=1 ciq-tuner run --bench "python3 $root/bench/triton/$program.py --samples 30" \
      --metric 'time_ms: ([0-9.]+)' --repeats 1 --budget "${PBUDGET:-12}" --verify-runs "${PVERIFY:-4}" --no-ship \
      --seed 1 --out "$dir/run" --json >"$dir/tune.out" 2>"$dir/tune.log"
    echo "exit $? in $((SECONDS - t0)) s"
    tail -n 1 "$dir/tune.out"; grep -E "found|verdict|evaluations:" "$dir/tune.log" | tail -n 4
    per_eval "$dir/run"
    ;;
  *) echo "unknown step $step" ;;
  esac
done
