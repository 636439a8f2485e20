#!/usr/bin/env bash
# Is a torch.compile'd program's Triton kernel, shipped by a campaign, taken
# by the program's next run with its normal caches? (issue 47's "done when";
# docs/builds.md, "Triton and Inductor"; triton-cache-reach.sh asks the same
# of an entry stored by hand with `ciq-cache put`.)
#
#   bench/gpu/compile-campaign-reach.sh BIN OUT
#
# BIN: ciq's bin/ (the portable build: ciq-portable/bin, with
# lib/libciq-inject.so beside it; its Python package is taken from
# BIN/../share/ciq/python, else this checkout's tuner/python).
# Fresh caches once at the start (ciq's, TRITON_CACHE_DIR,
# TORCHINDUCTOR_CACHE_DIR, all under OUT), never cleared afterwards, no
# TRITON_ALWAYS_COMPILE. The program (bench/gpu/compile_campaign_reach.py,
# default WORKLOAD=norm: a fused softmax and layer norm, one Triton
# reduction kernel) runs with TRITON_PTXAS_PATH=ciq-ptxas and
# TORCH_COMPILE_CACHE_KEY_TAG=$(python3 -m ciq.inductor) taken at each launch,
# as a user is told to run it; each run is `ciq-tuner profile --json`, so the
# kernel's GPU time comes from CUPTI inside the unmodified program:
#   1 first run (compiles: fresh caches): the default code's time
#     ciq-tuner campaign --from-profile over the same program, kernel-time
#     objective; its own runs use fresh caches of their own ({workdir}), as
#     docs/whole-program.md says, and it ships to OUT's ciq cache
#   2 the program again: the cache changed, so the tag did and it must
#     compile, the shipped entry hit and applied (trace and counters), and
#     the kernel run the tuned code (CUPTI's code hash and registers)
#   3 again: the caches answer (nothing compiles), the tuned code stays
# Evidence per run: ciq's trace of the compiles (profile's build-trace:
# which entries applied, registers from ptxas), `ciq-cache stats` (hit,
# applied, miss; zeroed before each run), CUPTI's median time, registers and
# code hash of the kernel, the program's own median (CUDA events) and
# Inductor's cache counters.
# Prints a table (also OUT/compile-campaign-reach/summary.txt, results.csv;
# the campaign's directory, campaign.json and table beside them).
# Exit: 0 when a shipped winner reached run 2 (compiled with its entry
# applied, the kernel's code changed) and run 3 kept it; 1 when the campaign
# shipped but the winner did not reach run 2, or run 3 lost it; 2 when
# inconclusive: the campaign shipped nothing ("reach not shown"), a run
# failed, or no GPU, torch or ciq tool to run with.
# Settings: WORKLOAD (norm, default, or attention: on an H100 on
# 2026-12-07 a campaign found nothing in the flex_attention kernel, 12 or
# 40 replay evaluations, and a per-kernel minnctapersm=3 11.6 % faster by
# replay in the norm kernel; bench/RESULTS.md), STEPS (timed calls per
# run, default 50), BUDGET (campaign evaluations, default 12), VERIFY
# (--verify-runs, default 3), COVER (default 50%), KERNELS (a --kernels glob,
# default 'triton_*'), TOTAL_S (the whole script's wall time, default 560:
# one device call of 10 minutes), CAMPAIGN_TIMEOUT (seconds; default what
# TOTAL_S leaves after run 1, less twice run 1's time and 40 s for runs 2
# and 3), RUN_TIMEOUT (per program run, default 180), PROGRAM_ARGS (more
# arguments for the program, e.g. '--seq 2048'), PYTHON (default python3).
if [ $# -lt 2 ]; then
  echo "usage: $0 BIN OUT   (BIN: ciq's bin/, e.g. ciq-portable/bin)" >&2
  exit 2
fi
[ -d "$1" ] || { echo "no directory $1 (BIN: ciq's bin/)" >&2; exit 2; }
source "$(dirname "$0")/common.sh"
shift 2
py=${PYTHON:-python3}
dir="$out/compile-campaign-reach"
rm -rf "$dir" && mkdir -p "$dir"
prog="$root/bench/gpu/compile_campaign_reach.py"
# The program's arguments, the same for the three runs and the campaign's.
# shellcheck disable=SC2206 # PROGRAM_ARGS: words, on purpose
args=(--workload "${WORKLOAD:-norm}" --steps "${STEPS:-50}" ${PROGRAM_ARGS:-})
export PATH="$bin:$cuda/bin:$PATH" CIQ_REAL_PTXAS="$cuda/bin/ptxas" TRITON_PTXAS_PATH="$bin/ciq-ptxas"
export PYTHONPATH="$pkg${PYTHONPATH:+:$PYTHONPATH}"
unset TRITON_ALWAYS_COMPILE TORCHINDUCTOR_FORCE_DISABLE_CACHES TORCH_COMPILE_CACHE_KEY_TAG CIQ_DISABLE \
  CIQ_CONTROLS CIQ_KERNELS CIQ_PACKS CIQ_REMOTE CIQ_TRACE CIQ_TRACE_PTX CIQ_CAPTURE CIQ_KERNEL_TRACE
export CIQ_CACHE_DIR="$dir/ciq-cache" TRITON_CACHE_DIR="$dir/triton-cache" TORCHINDUCTOR_CACHE_DIR="$dir/inductor-cache"
: "${CIQ_INJECT_LIBRARY:=$bin/../lib/libciq-inject.so}"
export CIQ_INJECT_LIBRARY

fail() { echo "compile-campaign-reach: $*: nothing measured" | tee -a "$dir/summary.txt" >&2; exit 2; }
for tool in ciq-ptxas ciq-tuner ciq-cache ciq-replay; do
  [ -x "$bin/$tool" ] || fail "no $tool in $bin"
done
[ -x "$CIQ_REAL_PTXAS" ] || fail "no ptxas at $CIQ_REAL_PTXAS (set CUDA_HOME)"
[ -f "$CIQ_INJECT_LIBRARY" ] || fail "no kernel-timing library at $CIQ_INJECT_LIBRARY (install the portable build: lib/ beside bin/)"
[ -f "$prog" ] || fail "no $prog"
command -v "$py" >/dev/null || fail "no $py (set PYTHON)"
$py -c 'import ciq.inductor' 2>/dev/null || fail "ciq's Python package is not in $pkg"
gpu=$(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>/dev/null | head -n 1)
[ -n "$gpu" ] || fail "no GPU (nvidia-smi lists none)"
versions=$($py -c '
import sys, torch, triton
print(torch.__version__, triton.__version__)
if not torch.cuda.is_available():
    sys.exit("torch sees no CUDA device")
if sys.argv[1] == "attention":
    try:
        from torch.nn.attention.flex_attention import flex_attention  # noqa: F401
    except ImportError:
        sys.exit("this torch has no flex_attention (torch >= 2.5): WORKLOAD=norm runs the other program")
' "${WORKLOAD:-norm}" 2>"$dir/python-check.err") ||
  fail "$py with torch and triton: $(tail -n 1 "$dir/python-check.err")"
{
  echo "== $(date -u +%FT%TZ) $gpu"
  echo "ptxas: $("$CIQ_REAL_PTXAS" --version | grep -o 'release [0-9.]*, V[0-9.]*')"
  echo "torch $(cut -d' ' -f1 <<<"$versions") triton $(cut -d' ' -f2 <<<"$versions")"
  echo "program: $py $prog ${args[*]}"
} 2>&1 | tee "$dir/environment.txt"
printf '%s\n' "$gpu" "$versions" >"$dir/versions.txt"

# run N: one process of the program as a user starts it (the tag taken now),
# timed by `ciq-tuner profile`, its compiles traced, ciq's counters kept.
run() {
  local d="$dir/run-$1" tag t0
  mkdir -p "$d"
  ciq-cache stats --zero >/dev/null 2>&1
  tag=$($py -m ciq.inductor 2>"$d/tag.err") || tag=""
  echo "$tag" >"$d/tag.txt"
  [ -n "$tag" ] || echo "run $1: python3 -m ciq.inductor gave no tag ($(cat "$d/tag.err"))" | tee -a "$dir/log.txt"
  t0=$SECONDS
  ( if [ -n "$tag" ]; then export TORCH_COMPILE_CACHE_KEY_TAG="$tag"; fi
    timeout -k 20 "${RUN_TIMEOUT:-180}" ciq-tuner profile --out "$d/profile" --json -- \
      "$py" "$prog" "${args[@]}" --result "$d/result.json" >"$d/profile.out" 2>"$d/err.log" )
  echo $? >"$d/exit"
  echo $((SECONDS - t0)) >"$d/wall_s"
  ciq-cache stats --json >"$d/stats.json" 2>/dev/null
  "$TRITON_PTXAS_PATH" --version >"$d/ptxas-version.txt" 2>/dev/null
  echo "run $1: exit $(cat "$d/exit") in $(cat "$d/wall_s") s" | tee -a "$dir/log.txt"
}

run 1
if [ "$(cat "$dir/run-1/exit")" != 0 ]; then
  tail -n 20 "$dir/run-1/err.log" >&2
  fail "run 1 failed (exit $(cat "$dir/run-1/exit"); $dir/run-1/err.log)"
fi

# The campaign: the program's hottest Triton kernels by GPU time, captured
# and tuned by replay, each winner confirmed in program runs before it ships.
# --from-profile without =DIR: its own profiling run, then a capturing run
# (a campaign given run 1's profile as DIR captures nothing, and every
# candidate would be a program run). Its program runs compile with fresh
# caches of their own ({workdir}), so that its candidates really compile;
# the user's caches above are not touched. --repeats 1: replay times each
# candidate over many launches, and confirmations use one program run per
# evaluation anyway; it bounds a fallback to program runs too. What it
# ships goes to CIQ_CACHE_DIR, the cache runs 2 and 3 use.
left=$(( ${TOTAL_S:-560} - SECONDS - 2 * $(cat "$dir/run-1/wall_s") - 40 ))
limit=${CAMPAIGN_TIMEOUT:-$(( left > 60 ? left : 60 ))}
echo "== campaign (budget ${BUDGET:-12}, cover ${COVER:-50%}, kernels ${KERNELS:-triton_*}, at most $limit s)" | tee -a "$dir/log.txt"
t0=$SECONDS
( cd "$dir" && timeout -k 30 "$limit" ciq-tuner campaign --from-profile --cover "${COVER:-50%}" \
    --kernels "${KERNELS:-triton_*}" --objective kernel-time --budget "${BUDGET:-12}" --repeats 1 \
    --verify-runs "${VERIFY:-3}" --timeout "${RUN_TIMEOUT:-180}" \
    --bench "env TRITON_CACHE_DIR={workdir}/triton TORCHINDUCTOR_CACHE_DIR={workdir}/inductor $py $prog ${args[*]}" \
    --out "$dir/campaign" --json >"$dir/campaign.out" 2>"$dir/campaign.log" )
rc=$?
echo "$rc" >"$dir/campaign.exit"
echo "campaign exit $rc in $((SECONDS - t0)) s" | tee -a "$dir/log.txt"
if [ "$rc" = 124 ] || [ "$rc" = 137 ]; then
  echo "the campaign ran past its $limit s (TOTAL_S, CAMPAIGN_TIMEOUT) and was stopped" | tee -a "$dir/log.txt"
fi
[ -f "$dir/campaign/campaign.json" ] && cp "$dir/campaign/campaign.json" "$dir/campaign.json"
# Its table (printed on stderr at the end), for summary.txt.
awk '/^kernel +share +replay/ { on = 1 } on { print } /^replay: / { on = 0 }' "$dir/campaign.log" >"$dir/campaign-table.txt"
grep -E "ciq-tuner: +[0-9.]+%|to tune|left out|captur|shipped|campaign:" "$dir/campaign.log" | tail -n 30 >>"$dir/log.txt"
ciq-cache list --json >"$dir/entries.jsonl" 2>/dev/null

run 2
run 3

cp "$dir/environment.txt" "$dir/summary.txt"
$py - "$dir" <<'EOF' | tee -a "$dir/summary.txt"
import csv, glob, json, os, sys

top = sys.argv[1]

def read(path, default=""):
    try:
        return open(path).read().strip()
    except OSError:
        return default

def last_json(path, default):
    try:
        lines = [l for l in read(path).splitlines() if l.strip()]
        return json.loads(lines[-1]) if lines else default
    except ValueError:
        return default

def trace(n):  # run n's compiles through ciq-ptxas (the profile's build-trace)
    out = []
    for f in sorted(glob.glob(os.path.join(top, f"run-{n}", "profile", "build-trace", "*.json"))):
        r = last_json(f, {})
        if r.get("kind") != "unit" and r.get("module_key"):
            out.append(r)
    return out

def change(k):  # the kernel's own change in the campaign, relative
    b, x = k.get("baseline"), k.get("best")
    return (x - b) / b if b and x is not None else None

def pct(v):
    return "-" if v is None else f"{100 * v:+.2f} %"

gpu, versions = (read(os.path.join(top, "versions.txt")).splitlines() + ["", ""])[:2]
card, _, driver = gpu.partition(", ")
torch_v, _, triton_v = versions.partition(" ")
camp = last_json(os.path.join(top, "campaign.json"), {}).get("kernels", [])
camp_rc = read(os.path.join(top, "campaign.exit"), "?")
shipped = [k for k in camp if k.get("shipped")]
entries = [json.loads(l) for l in read(os.path.join(top, "entries.jsonl")).splitlines() if l.strip()]

runs = {}
for n in (1, 2, 3):
    d = os.path.join(top, f"run-{n}")
    runs[n] = dict(rc=int(read(os.path.join(d, "exit"), "-1") or -1), wall=read(os.path.join(d, "wall_s"), "-"),
                   prof=last_json(os.path.join(d, "profile.out"), {}), res=last_json(os.path.join(d, "result.json"), {}),
                   counters=last_json(os.path.join(d, "stats.json"), {}).get("counters", {}), trace=trace(n),
                   tag=read(os.path.join(d, "tag.txt")))

# The kernel followed: the first the campaign shipped, else the first it
# tuned, else run 1's hottest Triton kernel.
kernel = (shipped or camp or [{}])[0].get("kernel") or next(
    (k["kernel"] for k in runs[1]["prof"].get("kernels", []) if k.get("kernel", "").startswith("triton")), "")
keys = {e.get("key") for e in entries if e.get("kernel") == kernel}  # its entries in ciq's cache
for r in runs.values():
    k = next((k for k in r["prof"].get("kernels", []) if k.get("kernel") == kernel), {})
    mine = [(rec, kk) for rec in r["trace"] for kk in rec.get("kernels", []) if kk.get("name") == kernel]
    r.update(k=k, code=tuple(k.get("code_xxh128") or []), regs=k.get("registers"),
             median_us=k["median_ns"] / 1e3 if k.get("median_ns") is not None else None,
             compiles=len(r["trace"]), applied_compiles=sum(1 for rec in r["trace"] if rec.get("controls_applied")),
             entry_applied=sum(1 for rec, kk in mine if rec.get("controls_applied") and (not keys or kk.get("key") in keys)),
             trace_regs=sorted({kk["registers"] for _, kk in mine if kk.get("registers") is not None}),
             trace_controls=sorted({rec.get("controls", "") for rec, _ in mine if rec.get("controls_applied")}))

head = ["gpu", "driver", "torch", "triton", "row", "kernel", "exit", "wall_s", "compiles", "compiles_applied",
        "entry_applied", "hit", "applied", "miss", "calls", "launches", "median_us", "total_ms", "registers",
        "registers_ptxas", "code", "program_median_ms", "inductor_caches", "tag", "controls", "shipped",
        "kernel_change", "program_change", "verdict"]
rows = []
for n, r in runs.items():
    c, k = r["counters"], r["k"]
    rows.append([card, driver, torch_v, triton_v, f"run {n}", kernel or "-", r["rc"], r["wall"], r["compiles"],
                 r["applied_compiles"], r["entry_applied"], c.get("hit", 0), c.get("applied", 0), c.get("miss", 0),
                 c.get("calls", 0), k.get("launches", "-"),
                 "-" if r["median_us"] is None else f"{r['median_us']:.2f}",
                 "-" if k.get("total_ns") is None else f"{k['total_ns'] / 1e6:.3f}",
                 "-" if r["regs"] is None else r["regs"], "/".join(map(str, r["trace_regs"])) or "-",
                 ",".join(h[:12] for h in r["code"]) or "-",
                 "-" if r["res"].get("time_ms") is None else f"{r['res']['time_ms']:.4f}",
                 " ".join(f"{a.split('.', 1)[-1]}={b}" for a, b in sorted(r["res"].get("caches", {}).items())) or "-",
                 r["tag"][:20] or "-", "; ".join(r["trace_controls"]) or "-", "", "", "", ""])
for k in camp:
    rows.append([card, driver, torch_v, triton_v, "campaign", k.get("kernel", ""), camp_rc,
                 "-" if k.get("seconds") is None else f"{k['seconds']:.0f}"] + [""] * 16 +
                [k.get("controls") or "-", "yes" if k.get("shipped") else "no", pct(change(k)),
                 pct(k.get("program_change")), k.get("verdict") or k.get("error") or k.get("state", "")])
with open(os.path.join(top, "results.csv"), "w", newline="") as f:
    csv.writer(f).writerows([head] + rows)

print(f"GPU {card}, driver {driver}; torch {torch_v}, Triton {triton_v}")
print(f"kernel followed: {kernel or '(none)'}; its entries in ciq's cache: {', '.join(sorted(keys)) or 'none'}")
show = ["row", "exit", "wall_s", "compiles", "entry_applied", "hit", "applied", "miss", "launches", "median_us",
        "registers", "registers_ptxas", "code", "program_median_ms", "inductor_caches"]
idx = [head.index(h) for h in show]
table = [show] + [[str(r[i]) for i in idx] for r in rows if r[4].startswith("run")]
widths = [max(len(x[i]) for x in table) for i in range(len(show))]
for line in table:
    print("  ".join(x.ljust(w) for x, w in zip(line, widths)).rstrip())
print()
print(f"campaign: exit {camp_rc}")
table_text = read(os.path.join(top, "campaign-table.txt"))
if table_text:
    print(table_text)
for k in camp:
    print(f"  {k.get('kernel')}: shipped {'yes' if k.get('shipped') else 'no'}, controls {k.get('controls') or '-'}, "
          f"tuned by {k.get('tuned_by') or '-'}, replay {pct(k.get('replay_change'))}, kernel {pct(change(k))}, "
          f"program {pct(k.get('program_change'))}: {k.get('verdict') or k.get('error') or k.get('state')}"
          + (f" (refused: {k['refused']})" if k.get("refused") else ""))
print()

r1, r2, r3 = runs[1], runs[2], runs[3]
notes = []
if not camp:
    verdict, code = f"INCONCLUSIVE: the campaign (exit {camp_rc}) tuned nothing; campaign shipped nothing: reach not shown", 2
elif not shipped:
    verdict, code = "INCONCLUSIVE: campaign shipped nothing: reach not shown", 2
elif any(r["rc"] != 0 for r in runs.values()):
    verdict = "INCONCLUSIVE: a run failed (" + ", ".join(f"run {n} exit {r['rc']}" for n, r in runs.items() if r["rc"]) + ")"
    code = 2
elif not r1["k"] or not r2["k"] or not r3["k"]:
    verdict = f"INCONCLUSIVE: {kernel} is missing from the profile of run " + \
        ", ".join(str(n) for n, r in runs.items() if not r["k"])
    code = 2
else:
    applied = r2["compiles"] > 0 and r2["entry_applied"] > 0 and r2["counters"].get("applied", 0) > 0
    code_changed = bool(r1["code"] and r2["code"] and r1["code"] != r2["code"]) or \
        (r1["regs"] is not None and r2["regs"] is not None and r1["regs"] != r2["regs"])
    kept = r3["code"] == r2["code"] if r2["code"] and r3["code"] else r3["regs"] == r2["regs"]
    if applied and code_changed and kept:
        verdict, code = f"REACHED: the campaign's {kernel} ({', '.join(r2['trace_controls'])}) reached run 2 and stayed in run 3", 0
    elif applied and code_changed:
        verdict, code = f"REACHED run 2, NOT KEPT: run 3 ran other code for {kernel} than run 2", 1
    else:
        why = []
        if r2["compiles"] == 0:
            why.append("run 2 compiled nothing: the caches gave it run 1's kernel")
        elif not applied:
            why.append(f"run 2 compiled {r2['compiles']} module(s) without the entry (its kernel's records applied: "
                       f"{r2['entry_applied']}; counters hit {r2['counters'].get('hit', 0)}, applied "
                       f"{r2['counters'].get('applied', 0)}, miss {r2['counters'].get('miss', 0)})")
        else:
            why.append("the entry applied in run 2, but the kernel that ran had run 1's code and registers")
        verdict, code = "NOT REACHED: " + "; ".join(why), 1
    if r1["median_us"] and r2["median_us"] and r3["median_us"]:
        notes.append(f"kernel median (CUPTI) {r1['median_us']:.2f} -> {r2['median_us']:.2f} -> {r3['median_us']:.2f} us: "
                     f"run 2 {r2['median_us'] / r1['median_us']:.3f}x run 1, run 3 {r3['median_us'] / r1['median_us']:.3f}x; "
                     f"the campaign measured {pct(change(shipped[0]))} for the kernel, "
                     f"{pct(shipped[0].get('program_change'))} of the program's GPU time")
    notes.append(f"registers (CUPTI) {r1['regs']} -> {r2['regs']} -> {r3['regs']}; ptxas' report "
                 + " -> ".join("/".join(map(str, r["trace_regs"])) or "-" for r in (r1, r2, r3))
                 + "; code " + " -> ".join(",".join(h[:12] for h in r["code"]) or "-" for r in (r1, r2, r3)))
    same_tags = r1["tag"] != r2["tag"] and r2["tag"] == r3["tag"]
    notes.append("the tag changed after the campaign and stayed for run 3" if same_tags else
                 f"unexpected tags: run 1 {r1['tag'][:20]}, run 2 {r2['tag'][:20]}, run 3 {r3['tag'][:20]}")
    if r3["compiles"]:
        notes.append(f"run 3 compiled {r3['compiles']} module(s): the caches did not answer it all")
print(verdict)
for n in notes:
    print("  " + n)
print(f"exit {code}")
sys.exit(code)
EOF
exit "${PIPESTATUS[0]}"
