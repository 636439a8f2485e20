#!/usr/bin/env bash
# The main job: a real tuning run on the bundled example (examples/stencil,
# a register-pressure 3D stencil built with CMake through ciq-nvcc).
#
#   1. build it with CUDACXX=ciq-nvcc (empty cache: plain ptxas);
#   2. ciq-tuner searches compiler controls for its kernel (ptxas knobs,
#      and the NVVM stage of its translation unit): with a GPU it
#      measures the kernel's time (and checks its result against a CPU
#      reference), without one it minimises the bytes ptxas spills;
#   3. the verified winner is shipped to the cache, and an ordinary rebuild
#      applies it (ptxas' register and spill report before and after).
#
#   examples/run-example.sh [BIN_DIR]      (default: build/bin)
#   CIQ_EXAMPLE_BUDGET=N                   evaluations (default 24)
#   CIQ_EXAMPLE_VERIFY_RUNS=N              interleaved pairs when verifying (default 10)
#   CIQ_EXAMPLE_OBJECTIVE=gpu|ptxas        force an objective (default: gpu if nvidia-smi sees one)
#
# Uses a private cache under $CIQ_EXAMPLE_DIR (default /tmp/ciq-example), so
# your own cache is left alone.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
bin=$(cd "${1:-$root/build/bin}" && pwd)
cuda=${CUDA_HOME:-/usr/local/cuda}
work=${CIQ_EXAMPLE_DIR:-/tmp/ciq-example}
budget=${CIQ_EXAMPLE_BUDGET:-24}
export PATH="$bin:$cuda/bin:$PATH"
export CIQ_CACHE_DIR="$work/cache"
export CIQ_REAL_NVCC="$cuda/bin/nvcc"
rm -rf "$work" && mkdir -p "$work"

objective=${CIQ_EXAMPLE_OBJECTIVE:-}
if [[ -z $objective ]]; then
  if command -v nvidia-smi >/dev/null && nvidia-smi -L >/dev/null 2>&1; then objective=gpu; else objective=ptxas; fi
fi

step() { printf '\n== %s\n' "$*"; }
report() { grep -E "Used [0-9]+ registers|spill stores" "$1" | sed 's/^ */   /' | head -4; }

step "1. Build examples/stencil with CUDACXX=ciq-nvcc (nothing cached yet: plain ptxas)"
CUDACXX="$bin/ciq-nvcc" cmake -S "$root/examples/stencil" -B "$work/build" >"$work/configure.log" 2>&1 ||
  { cat "$work/configure.log"; exit 1; }
cmake --build "$work/build" -- VERBOSE=1 >"$work/build1.log" 2>&1 || { cat "$work/build1.log"; exit 1; }
report "$work/build1.log"

build="cmake --build $work/build --clean-first"
if [[ $objective == gpu ]]; then
  step "2. Tune the stencil kernel on the GPU: its median time, checked against a CPU reference ($budget evaluations)"
  args=(--bench "$work/build/stencil --repeats 30" --metric 'time_ms: ([0-9.]+)'
        --check "$work/build/stencil --check --repeats 1" --repeats 3)
else
  step "2. No GPU here: tune the stencil kernel for the fewest spilled bytes ptxas reports ($budget evaluations)"
  args=(--objective ptxas:spill-stores)
fi
ciq-tuner run --build "$build" "${args[@]}" --kernels '*stencil25*' --budget "$budget" \
  --verify-runs "${CIQ_EXAMPLE_VERIFY_RUNS:-10}" --out "$work/run" --json |
  tail -n 1 | tee "$work/summary.json"

step "3. An ordinary rebuild (no --clean-first): the shipped entries changed the stencil's stamps, so make compiles that unit again, and ciq-cicc and ciq-ptxas apply them"
cmake --build "$work/build" -- VERBOSE=1 >"$work/build2.log" 2>&1 || { cat "$work/build2.log"; exit 1; }
grep -q "Used [0-9]* registers" "$work/build2.log" ||
  { echo "run-example.sh: the rebuild after shipping compiled nothing: the stamps did not reach make (docs/builds.md)" >&2; exit 1; }
report "$work/build2.log"
ciq-cache list | sed 's/^/   /'
ciq-cache stats | grep -E "^  (hit|applied|miss|unit\.(hit|applied))" | sed 's/^/ /' || true

if [[ $objective == gpu ]]; then
  step "4. Tuned against default, in fresh processes"
  cp "$work/build/stencil" "$work/stencil-tuned"
  CIQ_DISABLE=1 cmake --build "$work/build" --clean-first >/dev/null 2>&1
  cp "$work/build/stencil" "$work/stencil-default"
  for i in 1 2 3; do
    printf '   default %s   tuned %s\n' "$("$work/stencil-default" --repeats 50 | sed -n 's/time_ms: //p')" \
      "$("$work/stencil-tuned" --repeats 50 | sed -n 's/time_ms: //p')"
  done
fi
if [[ $objective != gpu ]]; then
  printf '\n   Fewer spilled bytes is a proxy, not a speed-up: more registers per thread leave\n'
  printf '   fewer threads per SM, so time this winner on a GPU before trusting it.\n'
fi
printf '\nRun directory: %s/run (journal.jsonl, results.csv, best.controls, summary.json)\n' "$work"
