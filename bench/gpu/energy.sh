#!/usr/bin/env bash
# Issue 26 on the GPU machine: time and energy of bench kernels where the
# GPU's work dominates what is measured: a resident benchmark
# (--bench-server, as bench/gpu/live.sh SERVER=1) whose every request times
# SAMPLES launches, NVML's energy read by ciq-tuner around each request.
# Two objectives (time_ms, energy), NSGA-II; then the front, the default's
# and the best points' values, how repeatable a request's energy is (the
# default's repeats), whether the first request differs (warm-up), and the
# report (report.html shows the front with the default marked).
#
#   bench/gpu/energy.sh BIN OUT KERNEL...     (SAMPLES, default 1000; EBUDGET, default 20)
source "$(dirname "$0")/common.sh"
shift 2
export PATH="$bin:$cuda/bin:$PATH" CIQ_REAL_NVCC="$cuda/bin/nvcc" CIQ_REAL_PTXAS="$cuda/bin/ptxas"

for kernel in "$@"; do
  dir=$out/energy-$kernel
  rm -rf "$dir" && mkdir -p "$dir"
  export CIQ_CACHE_DIR=$dir/cache
  printf '\n== %s: time + energy, resident, %s launches a request (%s)\n' "$kernel" "${SAMPLES:-1000}" "$(date +%T)"
  flags="-O3 -DNDEBUG -arch=sm_90a -I $root/bench/common $root/bench/kernels/$kernel.cu"
  nvcc $flags -o "$dir/server" || continue
  t0=$SECONDS
  ciq-tuner run --build "ciq-nvcc -cubin $flags -o {workdir}/k.cubin" --bench-server "$dir/server --serve" \
    --bench "--cubin {workdir}/k.cubin --no-check --samples ${SAMPLES:-1000}" --check "--cubin {workdir}/k.cubin --check" \
    --metric 'time_ms: ([0-9.]+)' --objective energy --budget "${EBUDGET:-20}" --repeats 3 --verify-runs 6 --no-ship \
    --seed 1 --out "$dir/run" --json >"$dir/tune.out" 2>"$dir/tune.log"
  echo "exit $? in $((SECONDS - t0)) s"
  grep -E "front|verdict|evaluations:|conditions|energy" "$dir/tune.log" | tail -n 12
  ciq-tuner report "$dir/run" >/dev/null 2>"$dir/report.log" || tail -n 3 "$dir/report.log"
  python3 - "$dir/run" <<'PY'
import json, statistics as st, sys
rows = [json.loads(l) for l in open(sys.argv[1] + "/journal.jsonl")]
ok = [r for r in rows if r.get("status") == "ok" and len(r.get("objectives", [])) == 2]
if not ok:
    sys.exit("no measured evaluation")
default = next((r for r in ok if r["n"] == 0), ok[0])
t0, e0 = default["objectives"]
print(f"default: {t0:.4f} ms, {e0:.2f} J a request")
def pct(a, b): return f"{100 * (a - b) / b:+.1f} %"
fastest = min(ok, key=lambda r: r["objectives"][0])
frugal = min(ok, key=lambda r: r["objectives"][1])
for name, r in (("fastest", fastest), ("most frugal", frugal)):
    t, e = r["objectives"]
    print(f"{name}: {r['candidate'] or 'default'}: {t:.4f} ms ({pct(t, t0)}), {e:.2f} J ({pct(e, e0)})")
front = [r for r in ok if not any(o["objectives"][0] <= r["objectives"][0] and o["objectives"][1] <= r["objectives"][1]
                                   and o["objectives"] != r["objectives"] for o in ok)]
print("front:", "; ".join(f"{r['objectives'][0]:.4f} ms {r['objectives'][1]:.2f} J ({r['candidate'] or 'default'})"
                          for r in sorted(front, key=lambda r: r["objectives"][0])))
# Repeatability: the default's requests (its repeats), energy and time.
samples = default.get("samples", [])
if len(samples) == 2 and len(samples[1]) > 1:
    ts, es = samples
    print(f"default's {len(es)} requests: energy {', '.join(f'{e:.2f}' for e in es)} J "
          f"(spread {100 * (max(es) - min(es)) / st.median(es):.1f} %); time {', '.join(f'{t:.4f}' for t in ts)} ms; "
          f"first request / median of the rest: energy {es[0] / st.median(es[1:]):.3f}, time {ts[0] / st.median(ts[1:]):.3f}")
spreads = [100 * (max(r["samples"][1]) - min(r["samples"][1])) / st.median(r["samples"][1]) for r in ok
           if len(r.get("samples", [[], []])[1]) > 1]
if spreads:
    print(f"energy spread within an evaluation's {len(ok[0]['samples'][1])} requests, over {len(spreads)} evaluations: "
          f"median {st.median(spreads):.1f} %, max {max(spreads):.1f} %")
for i, g in enumerate(default.get("gpu", [])):
    print(f"default's request {i}: {g.get('seconds', 0):.2f} s, SM {g.get('sm_mhz_min')}-{g.get('sm_mhz_max')} MHz, "
          f"{g.get('power_w')} W mean, {g.get('temperature_c')} C, clock events '{g.get('clock_events', '')}'")
PY
done
