#!/bin/sh
# The bench suite's CUDA programs (all eight, or those named), compiled to
# cubins through ciq-nvcc as a tuning build: into the evaluation's directory.
# Usage: BENCH_DIR OUT_DIR [PROGRAM...]
set -e
bench=$1 out=$2
shift 2
[ $# -gt 0 ] || set -- reduce softmax layernorm sgemm wmma_gemm stencil3d attention histogram
for k in "$@"; do
  ciq-nvcc -arch=sm_90a -cubin -O3 -I "$bench/common" "$bench/kernels/$k.cu" -o "$out/$k.cubin"
done
