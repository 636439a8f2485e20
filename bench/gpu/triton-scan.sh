#!/usr/bin/env bash
# A quick look at which ptxas controls move the Triton programs (a dozen
# hand-picked sets, not the ground-truth grid): each set compiled by Triton
# through ciq-ptxas (CIQ_CONTROLS, one Triton cache per set), checked, then
# timed interleaved, 20 samples in each of 2 processes.
#
#   bench/gpu/triton-scan.sh BIN OUT PROGRAM...      (PROGRAM: matmul, attention, histogram)
# Writes OUT/scan-PROGRAM.csv (config,controls,process,sample,ms) and prints
# each set's median against the default's.
set -uo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
bin=$(cd "$1" && pwd) out=$2
shift 2
cuda=${CUDA_HOME:-/usr/local/cuda}
mkdir -p "$out"
export PATH="$bin:$cuda/bin:$PATH" CIQ_REAL_PTXAS="$cuda/bin/ptxas" TRITON_PTXAS_PATH="$bin/ciq-ptxas"
export CIQ_CACHE_DIR=$(mktemp -d) # empty: nothing tuned applies
for program in "$@"; do
  kernel=$(sed -n 's/^def \([a-z_]*\)(.*ptr.*/\1/p' "$root/bench/triton/$program.py" | head -n 1)
  dir=$(mktemp -d)
  i=0
  while read -r knobs; do
    name=$(printf 'set%02d' $i)
    { echo "format = ciq-controls/1"; echo "space = ptxas-13"; for k in $knobs; do echo "${k/=/ = }"; done; } >"$dir/$name.controls"
    echo "$name,${knobs:-default}" >>"$dir/labels"
    i=$((i + 1))
  done <<LIST

$kernel:maxnreg=128
$kernel:maxnreg=168
$kernel:maxnreg=200
$kernel:maxnreg=232
maxrregcount=128
register-usage-level=0
register-usage-level=10
def-load-cache=cs
def-load-cache=cg
opt-level=2
$kernel:minnctapersm=2
LIST
  echo "config,controls,process,sample,ms" >"$out/scan-$program.csv"
  for p in 1 2; do
    python3 "$root/bench/triton/$program.py" --variants "$dir" --samples 20 2>"$out/scan-$program-$p.log" |
      tail -n +2 | while IFS=, read -r config sample ms; do
        echo "$config,$(grep "^$config," "$dir/labels" | cut -d, -f2),$p,$sample,$ms"
      done >>"$out/scan-$program.csv"
  done
  python3 - "$out/scan-$program.csv" "$program" <<'PY'
import csv, statistics, sys
t = {}
for r in csv.DictReader(open(sys.argv[1])):
    t.setdefault(r["controls"], []).append(float(r["ms"]))
if "default" not in t:
    sys.exit(f"{sys.argv[2]}: no default timing")
d = statistics.median(t["default"])
for c, v in sorted(t.items(), key=lambda kv: statistics.median(kv[1])):
    print(f"{sys.argv[2]:10s} {c:45s} {statistics.median(v):.4f} ms  {d / statistics.median(v):.3f}x")
PY
  grep -hE "WRONG|registers|Error|error" "$out"/scan-$program-*.log | sort | uniq | head -n 20
done
