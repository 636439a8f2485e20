#!/usr/bin/env bash
# The main job on the bundled example (examples/stencil): build it through
# ciq-nvcc with CMake, store a tuned control set for its kernel, rebuild,
# and show ptxas applying it (the register count before and after). Where a
# GPU is present, the example is also run and timed both ways.
#
#   examples/run-example.sh [BIN_DIR]      (default: build/bin)
#
# Uses a private cache under $CIQ_EXAMPLE_DIR (default /tmp/ciq-example), so
# your own cache is left alone.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
bin=$(cd "${1:-$root/build/bin}" && pwd)
cuda=${CUDA_HOME:-/usr/local/cuda}
work=${CIQ_EXAMPLE_DIR:-/tmp/ciq-example}
export PATH="$bin:$cuda/bin:$PATH"
export CIQ_CACHE_DIR="$work/cache"
export CIQ_REAL_NVCC="$cuda/bin/nvcc"
rm -rf "$work" && mkdir -p "$work"

step() { printf '\n== %s\n' "$*"; }
registers() { grep -E "Compiling entry function|Used [0-9]+ registers|spill" "$1" | sed 's/^/   /'; }

step "1. Build the example with CUDACXX=ciq-nvcc (empty cache: plain ptxas)"
CUDACXX="$bin/ciq-nvcc" cmake -S "$root/examples/stencil" -B "$work/build" >"$work/configure.log" 2>&1 ||
  { cat "$work/configure.log"; exit 1; }
cmake --build "$work/build" -- VERBOSE=1 >"$work/build1.log" 2>&1 || { cat "$work/build1.log"; exit 1; }
registers "$work/build1.log"

step "2. Store a control set for the stencil kernel (maxnreg=128)"
nvcc -arch=sm_90a -ptx "$root/examples/stencil/stencil.cu" -o "$work/stencil.ptx"
kernel=$(grep -oE '\.entry [A-Za-z0-9_]+' "$work/stencil.ptx" | head -1 | cut -d' ' -f2)
ciq-cache put --ptx "$work/stencil.ptx" --arch sm_90a --set "$kernel:maxnreg=128"

step "3. Rebuild: ciq-ptxas finds the entry and applies it"
touch "$root/examples/stencil/stencil.cu"
cmake --build "$work/build" -- VERBOSE=1 >"$work/build2.log" 2>&1 || { cat "$work/build2.log"; exit 1; }
registers "$work/build2.log"
ciq-cache stats | sed 's/^/   /'

if command -v nvidia-smi >/dev/null && nvidia-smi -L >/dev/null 2>&1; then
  step "4. Run it on the GPU: tuned build, then the default build (CIQ_DISABLE=1)"
  "$work/build/stencil" --check --repeats 100
  cp "$work/build/stencil" "$work/stencil-tuned"
  touch "$root/examples/stencil/stencil.cu"
  CIQ_DISABLE=1 cmake --build "$work/build" >/dev/null 2>&1
  "$work/build/stencil" --check --repeats 100
else
  step "4. No GPU here: the example is built, not run"
fi
