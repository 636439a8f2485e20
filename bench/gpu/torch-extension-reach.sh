#!/usr/bin/env bash
# Does a stored (or removed) entry reach a PyTorch C++/CUDA extension's next
# build? (issue 47, item 5; docs/builds.md, "PyTorch extensions".)
#
#   bench/gpu/torch-extension-reach.sh BIN OUT
#
# The extension (bench/gpu/torch_extension_reach.py: load_inline, which
# builds with ninja in a build directory kept across runs) is compiled
# through ciq-nvcc by PYTORCH_NVCC, CUDA_HOME left at the real toolkit.
# Every run is a new process over the same build directory, nothing cleared:
#   1 first run: builds (CIQ_TRACE/CIQ_TRACE_PTX record the module)
#   2 again: ninja has no work to do
#     ciq-cache put --ptx <the traced module> maxrregcount=KNOB (default 64)
#   3 after the put: the .cu is compiled again, the entry applied
#   4 again: nothing compiled
#     ciq-cache rm
#   5 after the rm: compiled again, nvcc's own code (run 1's registers)
#   6 again: nothing compiled
# Evidence per run: whether ptxas ran (ciq's trace), the registers ptxas
# reported, `ciq-cache stats` (zeroed before each run), the kernel's median
# time (200 launches, CUDA events) and its check against a float64 reference.
# Exit 0 when the put and the rm reached runs 3 and 5 and runs 2, 4, 6
# compiled nothing; 1 otherwise.
source "$(dirname "$0")/common.sh"
shift 2
py=${PYTHON:-python3}
knob=${KNOB:-64}
dir="$out/torch-extension-reach"
rm -rf "$dir" && mkdir -p "$dir"
export PATH="$bin:$cuda/bin:$PATH" CIQ_REAL_NVCC="$cuda/bin/nvcc" CIQ_REAL_PTXAS="$cuda/bin/ptxas"
export PYTORCH_NVCC="$bin/ciq-nvcc" CUDA_HOME="$cuda" CIQ_CACHE_DIR="$dir/cache" TORCH_CUDA_ARCH_LIST="${TORCH_CUDA_ARCH_LIST:-9.0}"
unset CIQ_DISABLE CIQ_CONTROLS CIQ_PACKS CIQ_REMOTE
build="$dir/build"
{
  echo "== $(date -u +%FT%TZ) $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>/dev/null | head -n 1)"
  $py -c 'import torch; print("torch", torch.__version__)'
  echo "nvcc: $("$CIQ_REAL_NVCC" --version | grep -o 'release [0-9.]*, V[0-9.]*')"
} 2>&1 | tee "$dir/environment.txt"

printf '%-4s %-10s %-9s %-9s %-22s %-10s %s\n' step what compiled registers "ciq: hit/applied/miss" time_ms check | tee "$dir/summary.txt"
declare -A compiled regs
# run STEP WHAT
run() {
  local step=$1 what=$2 d="$dir/step-$1"
  mkdir -p "$d"
  ciq-cache stats --zero >/dev/null 2>&1
  CIQ_TRACE="$d/trace" CIQ_TRACE_PTX=1 $py "$root/bench/gpu/torch_extension_reach.py" --build-dir "$build" >"$d/run.log" 2>&1
  local rc=$?
  local n=0 r=-
  if [ -d "$d/trace" ]; then
    n=$(ls "$d/trace"/*.json 2>/dev/null | wc -l)
    r=$($py -c "import json,glob,sys
rs=[k.get('registers') for f in glob.glob(sys.argv[1]+'/*.json') for k in json.load(open(f)).get('kernels',[]) if 'heavy' in k.get('name','')]
print(','.join(str(x) for x in rs if x is not None) or '-')" "$d/trace")
  fi
  compiled[$step]=$n
  regs[$step]=$r
  local counters
  counters=$(ciq-cache stats 2>/dev/null | awk '$1=="hit"{h=$2} $1=="applied"{a=$2} $1=="miss"{m=$2} END{printf "%s/%s/%s", h+0, a+0, m+0}')
  printf '%-4s %-10s %-9s %-9s %-22s %-10s %s\n' "$step" "$what" "$n" "$r" "$counters" \
    "$(sed -n 's/^time_ms: //p' "$d/run.log")" "$(sed -n 's/^check: //p' "$d/run.log")$([ $rc -ne 0 ] && echo " (exit $rc)")" | tee -a "$dir/summary.txt"
}

run 1 first
run 2 again
# The module run 1 compiled, put as ptxas saw it (target and codegen flags from the trace).
rec=$(ls "$dir"/step-1/trace/*.json 2>/dev/null | head -n 1)
if [ -z "$rec" ]; then echo "run 1 compiled nothing through ciq-ptxas: is PYTORCH_NVCC honoured?" | tee -a "$dir/summary.txt"; exit 1; fi
ptx=$($py -c "import json,sys,os; r=json.load(open(sys.argv[1])); print(os.path.join(os.path.dirname(sys.argv[1]), r['ptx_copy']))" "$rec")
target=$($py -c "import json,sys; print(json.load(open(sys.argv[1]))['target'])" "$rec")
flags=$($py -c "import json,sys; print(' '.join('--' + w for w in json.load(open(sys.argv[1])).get('flags','').split()))" "$rec")
echo "put: module of $rec, target $target, flags '$flags'" | tee -a "$dir/summary.txt"
ciq-cache put --ptx "$ptx" --arch "$target" ${flags:+--flags "$flags"} --set "maxrregcount=$knob" 2>&1 | tee -a "$dir/summary.txt"
run 3 after-put
run 4 again
ciq-cache rm --all 2>&1 | tee -a "$dir/summary.txt"
run 5 after-rm
run 6 again

ok=1
[ "${compiled[2]}" = 0 ] && [ "${compiled[4]}" = 0 ] && [ "${compiled[6]}" = 0 ] || ok=0
[ "${compiled[3]}" -gt 0 ] && [ "${compiled[5]}" -gt 0 ] || ok=0
[ "${regs[5]}" = "${regs[1]}" ] && [ "${regs[3]}" != "${regs[1]}" ] || ok=0
if ((ok)); then echo "REACHED: the put and the rm reached the extension's next build, and nothing else was compiled" | tee -a "$dir/summary.txt"; exit 0; fi
echo "NOT REACHED (see $dir)" | tee -a "$dir/summary.txt"
exit 1
