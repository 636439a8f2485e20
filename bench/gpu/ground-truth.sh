#!/usr/bin/env bash
# Step 1 of bench/RESULTS.md on the GPU machine: build the suite through
# ciq-nvcc with CMake, time each program's default build, then measure the
# ground truth (every control set of the grid, several processes).
#
#   bench/gpu/ground-truth.sh BIN VARIANTS OUT
#     BIN       ciq's binaries (ciq-nvcc, ciq-ptxas, ...)
#     VARIANTS  from `bench/ground_truth.py compile`
#     OUT       where the data and logs go
# Env: GT_PROCESSES (3), GT_SAMPLES (20), GT_ONLY (programs, comma-separated),
#      GT_GRID (the grid VARIANTS was compiled with, when not "knobs": names the files)
set -uo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
bin=$(cd "$1" && pwd) variants=$(cd "$2" && pwd) out=$3
mkdir -p "$out"
out=$(cd "$out" && pwd)
cuda=${CUDA_HOME:-/usr/local/cuda}
export PATH="$bin:$cuda/bin:$PATH" CIQ_REAL_NVCC="$cuda/bin/nvcc" CIQ_REAL_PTXAS="$cuda/bin/ptxas"
export CIQ_CACHE_DIR=$(mktemp -d) # empty: nothing tuned applies
build=/tmp/ciq-bench-build

nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,temperature.gpu,power.draw --format=csv | tee "$out/machine.txt"
ptxas --version | tail -n 2 | tee -a "$out/machine.txt"
python3 -c 'import triton, torch; print("triton", triton.__version__, "torch", torch.__version__)' | tee -a "$out/machine.txt"

echo "== build (CUDACXX=ciq-nvcc)"
t0=$SECONDS
CUDACXX="$bin/ciq-nvcc" cmake -S "$root/bench" -B "$build" -DCMAKE_BUILD_TYPE=Release >"$out/configure.log" 2>&1 || { tail -n 30 "$out/configure.log"; exit 1; }
cmake --build "$build" -j 16 -- VERBOSE=1 >"$out/build.log" 2>&1 || { tail -n 40 "$out/build.log"; exit 1; }
echo "built in $((SECONDS - t0)) s"
grep -E "Compiling entry|Used [0-9]+ registers" "$out/build.log" | paste - - | sed -E 's/ptxas info *: //g' | tee "$out/resources.txt"

echo "== default builds, 50 samples each"
for p in reduce softmax layernorm sgemm wmma_gemm stencil3d attention histogram; do
  printf '%-10s %s\n' "$p" "$("$build/bench_$p" --samples 50 2>&1 | tr '\n' ' ')"
done | tee "$out/defaults.txt"
export TRITON_PTXAS_PATH="$bin/ciq-ptxas"
printf '%-10s %s\n' triton "$(TRITON_ALWAYS_COMPILE=1 python3 "$root/bench/triton/matmul.py" --samples 50 2>&1 | tail -n 4 | tr '\n' ' ')" | tee -a "$out/defaults.txt"

echo "== Triton variants: build in 16 shards"
t0=$SECONDS
for i in $(seq 0 15); do
  python3 "$root/bench/triton/matmul.py" --variants "$variants/triton_matmul" --compile-only --shard "$i/16" >"$out/triton-shard-$i.log" 2>&1 &
done
wait
echo "built in $((SECONDS - t0)) s"
cat "$out"/triton-shard-*.log | grep -v '^seed' | sort > "$out/triton-variants.txt"; rm -f "$out"/triton-shard-*.log
head -n 5 "$out/triton-variants.txt"; grep -c registers "$out/triton-variants.txt"

echo "== ground truth"
t0=$SECONDS
python3 "$root/bench/ground_truth.py" measure --variants "$variants" --build "$build" --out "$out/data" \
  --processes "${GT_PROCESSES:-3}" --samples "${GT_SAMPLES:-20}" ${GT_ONLY:+--only "$GT_ONLY"} ${GT_GRID:+--grid "$GT_GRID"} 2>"$out/measure.log"
echo "measured in $((SECONDS - t0)) s"
grep -E "^==|WRONG" "$out/measure.log" | head -n 60
wc -l "$out"/data/*.csv
