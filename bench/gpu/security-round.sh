#!/usr/bin/env bash
# Issue 35 on the GPU machine: what the hardened injection library, control
# FIFO and resident-benchmark protocol (each answer tied to its request) do
# with real CUDA programs and CUPTI.
#   1. stencil3d tuned resident by its printed time and by kernel-time cut per
#      request through the control FIFO (bench/gpu/server-kernel-time.sh);
#   2. libciq-inject in a real CUDA program writing into a directory of the
#      user's own, then refusing one that others may write (no trace, the
#      program's output the same);
#   3. `ciq-tuner profile` of the same program.
#   bench/gpu/security-round.sh BIN OUT      (BIN holds ciq-*, BIN/../lib the library)
source "$(dirname "$0")/common.sh"
shift 2
export PATH="$bin:$cuda/bin:$PATH" CIQ_REAL_NVCC="$cuda/bin/nvcc" CIQ_REAL_PTXAS="$cuda/bin/ptxas"
lib=$(cd "$bin/../lib" && pwd)/libciq-inject.so
work=$(mktemp -d)
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
echo "== 1. resident kernel-time (stencil3d, budget 8)"
[[ ${SKIP_TUNING:-0} == 1 ]] || SAMPLES=${SAMPLES:-100} "$root/bench/gpu/server-kernel-time.sh" "$bin" "$work/skt" 8 stencil3d:wave_step
flags="-O3 -DNDEBUG -arch=sm_90a -I $root/bench/common $root/bench/kernels/stencil3d.cu"
nvcc $flags -o "$work/stencil3d"
echo "== 2. the library in a real program"
# Its output without the lines that differ run to run (the timings).
program_output() { grep -v -e ciq-inject -e time_ms -e noise_pct; }
plain=$("$work/stencil3d" --samples 20 --no-check --seed 1 2>&1 | program_output)
mkdir -m 700 "$work/own"
own=$(CUDA_INJECTION64_PATH=$lib CIQ_KERNEL_TRACE=$work/own/t CIQ_KERNEL_TRACE_VERBOSE=1 "$work/stencil3d" --samples 20 --no-check 2>&1)
echo "$own" | grep ciq-inject
ls "$work/own/t"
python3 -c "import json,sys; h=json.loads(open(sys.argv[1]).readline()); print('status', h.get('status'), 'kernels' , sum(1 for _ in open(sys.argv[1]))-1)" "$work"/own/t/kernels-*.jsonl
mkdir -m 777 "$work/shared"
refused=$(CUDA_INJECTION64_PATH=$lib CIQ_KERNEL_TRACE=$work/shared/t CIQ_KERNEL_TRACE_VERBOSE=1 "$work/stencil3d" --samples 20 --no-check --seed 1 2>&1)
echo "$refused" | grep ciq-inject
echo "files in the refused directory: $(find "$work/shared" -type f | wc -l)"
[[ "$(echo "$refused" | program_output)" == "$plain" ]] && echo "program output unchanged" || echo "program output CHANGED"
echo "== 3. profile"
ciq-tuner profile --out "$work/prof" -- "$work/stencil3d" --samples 20 --no-check 2>&1 | head -n 12
tar -C "$work" -czf "$out/security-round.tgz" skt own prof 2>/dev/null
