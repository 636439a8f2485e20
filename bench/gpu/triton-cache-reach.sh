#!/usr/bin/env bash
# Does a stored (or removed) entry reach a Triton program's next run, with
# Triton's and Inductor's caches left as they are? (issue 47, item 3;
# docs/builds.md, "Triton and Inductor".)
#
#   bench/gpu/triton-cache-reach.sh BIN OUT
#
# BIN: ciq's bin/ (the portable build: ciq-portable/bin; its Python package
# is taken from BIN/../share/ciq/python, else this checkout's tuner/python).
# For each arm, fresh caches once at the start (ciq's, TRITON_CACHE_DIR,
# TORCHINDUCTOR_CACHE_DIR, all under OUT), never cleared afterwards, no
# TRITON_ALWAYS_COMPILE; every run a new process (bench/gpu/triton_cache_reach.py):
#   1 first run (compiles; CIQ_TRACE_PTX keeps each module's PTX)
#   2 again (the caches answer: nothing compiles)
#     ciq-cache put: KERNEL:maxnreg=N for every kernel run 1 compiled (the
#     PTX directive: Triton declares .maxntid on every kernel, and ptxas
#     ignores --maxrregcount for such a kernel: 32 registers either way)
#   3 after the put: must compile, with the entry applied
#   4 again: nothing compiles, the tuned kernel is kept
#     ciq-cache rm of every entry
#   5 after the rm: must compile, without controls, the registers of run 1
#   6 again: nothing compiles
# Arms (ARMS, default all three):
#   triton        a @triton.jit layernorm: Triton's cache only (ciq-ptxas --version)
#   compile-tag   torch.compile, TORCH_COMPILE_CACHE_KEY_TAG=$(python3 -m ciq.inductor) at each launch
#   compile-notag torch.compile as a user runs it without the tag: shows what Inductor alone does
# Evidence per run: ciq's trace (compiles, controls applied, registers from
# ptxas -v), `ciq-cache stats` (hit/applied/miss, zeroed before each run),
# the kernel's median time, Inductor's FX graph cache counters.
# Prints a table (also OUT/triton-cache-reach/summary.txt, results.csv).
# Exit: 0 when the entry and its removal reached runs 3 and 5 in the
# triton and compile-tag arms; 1 when either did not; 2 when inconclusive
# (the caches did not answer run 2, so reaching proves nothing, or a run
# failed). The compile-notag arm never fails the script: it is the control.
# Settings: KNOB=N (maxnreg; default: half run 1's registers, at
# least 24, ptxas' floor), ROWS/COLS (default 65536 x 1024), PYTHON (default python3).
source "$(dirname "$0")/common.sh"
shift 2
py=${PYTHON:-python3}
dir="$out/triton-cache-reach"
rm -rf "$dir" && mkdir -p "$dir"
prog="$root/bench/gpu/triton_cache_reach.py"
export PATH="$bin:$cuda/bin:$PATH" CIQ_REAL_PTXAS="$cuda/bin/ptxas" TRITON_PTXAS_PATH="$bin/ciq-ptxas"
export PYTHONPATH="$pkg${PYTHONPATH:+:$PYTHONPATH}"
unset TRITON_ALWAYS_COMPILE TORCHINDUCTOR_FORCE_DISABLE_CACHES TORCH_COMPILE_CACHE_KEY_TAG CIQ_DISABLE \
  CIQ_CONTROLS CIQ_PACKS CIQ_REMOTE CIQ_TRACE CIQ_TRACE_PTX
[ -x "$TRITON_PTXAS_PATH" ] || { echo "no ciq-ptxas in $bin" >&2; exit 2; }
[ -x "$CIQ_REAL_PTXAS" ] || { echo "no ptxas at $CIQ_REAL_PTXAS (set CUDA_HOME)" >&2; exit 2; }
{
  echo "== $(date -u +%FT%TZ) $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>/dev/null | head -n 1)"
  echo "ptxas: $("$CIQ_REAL_PTXAS" --version | grep -o 'release [0-9.]*, V[0-9.]*')"
  $py -c 'import torch, triton; print("torch", torch.__version__, "triton", triton.__version__)'
  echo "ciq-ptxas --version adds: $("$TRITON_PTXAS_PATH" --version | grep '^ciq ' || echo '(nothing: no cache yet)')"
} 2>&1 | tee "$dir/environment.txt"

# run ARM STEP: one process of the program, traced, its ciq counters kept.
run() {
  local arm=$1 step=$2 mode=compile d="$dir/$1/step-$2"
  [ "$arm" = triton ] && mode=triton
  mkdir -p "$d"
  ciq-cache stats --zero >/dev/null 2>&1
  local tag=""
  if [ "$arm" = compile-tag ]; then
    tag=$($py -m ciq.inductor 2>"$d/tag.err") || tag=""
    echo "$tag" >"$d/tag.txt"
  fi
  ( if [ -n "$tag" ]; then export TORCH_COMPILE_CACHE_KEY_TAG="$tag"; fi
    CIQ_TRACE="$d/trace" CIQ_TRACE_PTX=1 timeout 900 $py "$prog" --mode "$mode" --rows "${ROWS:-65536}" \
      --cols "${COLS:-1024}" >"$d/out.json" 2>"$d/err.log" )
  echo $? >"$d/exit"
  ciq-cache stats --json >"$d/stats.json" 2>/dev/null
  "$TRITON_PTXAS_PATH" --version >"$d/ptxas-version.txt" 2>/dev/null
}

helper() {
  $py - "$@" <<'EOF'
import csv, glob, json, os, statistics, sys

def records(step_dir):
    out = []
    for f in sorted(glob.glob(os.path.join(step_dir, "trace", "*.json"))):
        try:
            r = json.load(open(f))
        except Exception:
            continue
        if r.get("kind") != "unit" and r.get("module_key"):
            out.append(r)
    return out

def load(path, default):
    try:
        text = open(path).read().strip().splitlines()
        return json.loads(text[-1]) if text else default
    except Exception:
        return default

cmd = sys.argv[1]
if cmd == "plan":                      # the puts for run 1's kernels: ptx, target, flags, kernel, registers
    d = sys.argv[2]
    for r in records(d):
        if not r.get("ptx_copy"):
            continue
        flags = " ".join("--" + f for f in r.get("flags", "").split()) or "-"  # tab-separated: never empty
        for k in r.get("kernels", []):
            print("\t".join([os.path.join(d, "trace", r["ptx_copy"]), r["target"], flags, k["name"],
                             str(k.get("registers", 0))]))
    sys.exit(0)

# report DIR ARM...
top, arms = sys.argv[2], sys.argv[3:]
rows, verdicts = [], {}
for arm in arms:
    steps = {}
    for n in range(1, 7):
        d = os.path.join(top, arm, f"step-{n}")
        rs = records(d)
        out = load(os.path.join(d, "out.json"), {})
        st = load(os.path.join(d, "stats.json"), {}).get("counters", {})
        try:
            rc = int(open(os.path.join(d, "exit")).read())
        except Exception:
            rc = -1
        regs = sorted({k.get("registers", 0) for r in rs for k in r.get("kernels", [])})
        steps[n] = dict(rc=rc, compiles=len(rs), applied=sum(1 for r in rs if r.get("controls_applied")),
                        regs=regs, time_ms=out.get("time_ms"), first_s=out.get("first_call_s"),
                        hit=st.get("hit", 0), c_applied=st.get("applied", 0), miss=st.get("miss", 0),
                        fx=out.get("inductor", {}))
        s = steps[n]
        rows.append([arm, n, rc, s["compiles"], s["applied"], "/".join(map(str, regs)) or "-", s["hit"],
                     s["c_applied"], s["miss"],
                     f"{s['time_ms']:.4f}" if s["time_ms"] is not None else "-",
                     f"{s['first_s']:.1f}" if s["first_s"] is not None else "-",
                     " ".join(f"{k}={v}" for k, v in sorted(s["fx"].items()) if "fxgraph" in k) or "-"])
    s = steps
    failed_run = any(s[n]["rc"] != 0 for n in s)
    cached = s[2]["compiles"] == 0
    put_reached = s[3]["compiles"] > 0 and s[3]["applied"] > 0 and s[3]["c_applied"] > 0
    kept = s[4]["compiles"] == 0
    base_regs = s[1]["regs"]
    rm_reached = s[5]["compiles"] > 0 and s[5]["applied"] == 0 and s[5]["c_applied"] == 0 and \
        (not base_regs or s[5]["regs"] == base_regs)
    if failed_run or not cached:
        verdict = "INCONCLUSIVE (" + ("a run failed" if failed_run else "run 2 compiled: the caches did not answer") + ")"
        code = 2
    elif put_reached and rm_reached:
        verdict, code = "REACHED (put and rm)", 0
    else:
        verdict = "NOT REACHED (" + ", ".join(w for w, ok in (("put", put_reached), ("rm", rm_reached)) if not ok) + ")"
        code = 1
    t1, t3, t5 = (s[n]["time_ms"] for n in (1, 3, 5))
    if t1 and t3 and t5:
        verdict += f"; time after put {t3 / t1:.3f}x run 1, after rm {t5 / t1:.3f}x"
    if put_reached:
        verdict += "; registers " + ("/".join(map(str, base_regs)) or "-") + " -> " + \
            ("/".join(map(str, s[3]["regs"])) or "-") + (" (code changed)" if s[3]["regs"] != base_regs else
                                                          " (the entry left the registers as they were)")
    if not kept:
        verdict += "; run 4 compiled again (the tuned kernel was not kept)"
    verdicts[arm] = (verdict, code)

head = ["arm", "run", "exit", "compiles", "applied", "registers", "hit", "applied(ctr)", "miss", "time_ms",
        "first_call_s", "inductor fx cache"]
with open(os.path.join(top, "results.csv"), "w", newline="") as f:
    csv.writer(f).writerows([head] + rows)
widths = [max(len(str(x)) for x in col) for col in zip(head, *rows)]
fmt = "  ".join("{:<%d}" % w for w in widths)
print(fmt.format(*head))
for r in rows:
    print(fmt.format(*[str(x) for x in r]))
print()
counted = []
for arm, (verdict, c) in verdicts.items():
    control = arm == "compile-notag"
    print(f"{arm:14s} {verdict}" + ("   (control arm: not counted)" if control else ""))
    if not control:
        counted.append(c)
code = 1 if 1 in counted else (2 if 2 in counted else 0)
print(f"exit {code}")
sys.exit(code)
EOF
}

arms=${ARMS:-triton compile-tag compile-notag}
for arm in $arms; do
  export CIQ_CACHE_DIR="$dir/$arm/ciq-cache" TRITON_CACHE_DIR="$dir/$arm/triton-cache" \
    TORCHINDUCTOR_CACHE_DIR="$dir/$arm/inductor-cache"
  echo "== $arm" | tee -a "$dir/log.txt"
  run "$arm" 1
  run "$arm" 2
  helper plan "$dir/$arm/step-1" >"$dir/$arm/plan.tsv"
  while IFS=$'\t' read -r ptx target flags kernel regs; do
    [ "$flags" = - ] && flags=""
    knob=${KNOB:-$(( regs / 2 > 24 ? regs / 2 : 24 ))}
    echo "put $target $kernel:maxnreg=$knob (run 1: $regs registers) flags='$flags' $(basename "$ptx")" | tee -a "$dir/log.txt"
    ciq-cache put --ptx "$ptx" --arch "$target" ${flags:+--flags "$flags"} --set "$kernel:maxnreg=$knob" --json \
      >>"$dir/$arm/put.jsonl" 2>>"$dir/log.txt"
  done <"$dir/$arm/plan.tsv"
  [ -s "$dir/$arm/plan.tsv" ] || echo "run 1 of $arm left no PTX in its trace: nothing to put" | tee -a "$dir/log.txt"
  run "$arm" 3
  run "$arm" 4
  keys=$(ciq-cache list --json 2>/dev/null | $py -c 'import json,sys; print(" ".join(json.loads(l)["key"] for l in sys.stdin if l.strip()))')
  [ -n "$keys" ] && ciq-cache rm $keys >>"$dir/log.txt" 2>&1
  run "$arm" 5
  run "$arm" 6
done
helper report "$dir" $arms | tee "$dir/summary.txt"
exit "${PIPESTATUS[0]}"
