#!/bin/sh
# Four of the bench suite's CUDA programs (one whose default is best, two
# that gain from a register cap, one from a compile option), or those
# named, compiled to cubins through ciq-nvcc as a tuning build: into the
# evaluation's directory. (All eight took 10 minutes of CI's 2 cores.)
# Usage: BENCH_DIR OUT_DIR [PROGRAM...]
set -e
bench=$1 out=$2
shift 2
[ $# -gt 0 ] || set -- reduce sgemm stencil3d histogram
for k in "$@"; do
  ciq-nvcc -arch=sm_90a -cubin -O3 -I "$bench/common" "$bench/kernels/$k.cu" -o "$out/$k.cubin"
done
