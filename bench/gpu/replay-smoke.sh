#!/usr/bin/env bash
# Capture and replay end to end on the GPU machine (issue 34): a small CUDA
# program (saxpy, and an in-place accumulate whose replay is right only if
# its inputs are restored before every launch) runs once under
# libciq-inject with CIQ_CAPTURE; its PTX is compiled by ptxas into a
# reference cubin and a candidate (-O0), and a wrong candidate is built
# from the same source with -DWRONG. Then ciq-replay: plan, run (reference,
# candidate: times and "outputs: same"), the wrong candidate (must exit 1
# with "wrong answer"), and serve (a timing and a --check request).
#
#   bench/gpu/replay-smoke.sh BIN OUT      (BIN: ciq's bin/, with ../lib/libciq-inject.so)
source "$(dirname "$0")/common.sh"
shift 2
set -x
export PATH="$bin:$cuda/bin:$PATH"
inject=$(cd "$bin/../lib" && pwd)/libciq-inject.so
arch=${ARCH:-sm_90a}
dir=$out/replay-smoke
rm -rf "$dir" && mkdir -p "$dir"
cd "$dir" || exit 2
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader

echo "== 1. the program"
cat > prog.cu <<'CU'
#include <cstdio>
#include <cuda_runtime.h>
extern "C" __global__ void saxpy(float* y, const float* x, float a, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
#ifdef WRONG
  if (i < n) y[i] = a * x[i] + y[i] + (i == 1000 ? 1.0f : 0.0f);
#else
  if (i < n) y[i] = a * x[i] + y[i];
#endif
}
extern "C" __global__ void accumulate(float* acc, const float* y, int n) {
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) acc[i] += y[i] * 0.5f;
}
int main() {
  const int n = 1 << 22;
  float *x, *y, *acc;
  cudaMalloc(&x, n * sizeof(float));
  cudaMalloc(&y, n * sizeof(float));
  cudaMalloc(&acc, n * sizeof(float));
  float* h = new float[n];
  for (int i = 0; i < n; ++i) h[i] = float(i % 1000) * 0.001f;
  cudaMemcpy(x, h, n * sizeof(float), cudaMemcpyHostToDevice);
  cudaMemcpy(y, h, n * sizeof(float), cudaMemcpyHostToDevice);
  cudaMemset(acc, 0, n * sizeof(float));
  for (int step = 0; step < 10; ++step) {
    saxpy<<<(n + 255) / 256, 256>>>(y, x, 0.5f, n);
    accumulate<<<264, 512>>>(acc, y, n);
  }
  cudaMemcpy(h, acc, n * sizeof(float), cudaMemcpyDeviceToHost);
  double sum = 0;
  for (int i = 0; i < n; ++i) sum += h[i];
  std::printf("checksum %.6f (%s)\n", sum, cudaGetErrorString(cudaGetLastError()));
  return 0;
}
CU
nvcc -O3 -arch=$arch -o prog prog.cu || exit 2
./prog

echo "== 2. capture"
CIQ_CAPTURE=$dir/cap CIQ_CAPTURE_KERNELS=saxpy,accumulate CUDA_INJECTION64_PATH=$inject ./prog
ls -la cap cap/* || exit 2
cat cap/index-*.jsonl

echo "== 3. cubins: reference, candidate (-O0), wrong"
nvcc -ptx -arch=$arch -o prog.ptx prog.cu || exit 2
ptxas -arch=$arch prog.ptx -o ref.cubin || exit 2
ptxas -arch=$arch -O0 prog.ptx -o o0.cubin || exit 2
nvcc -ptx -arch=$arch -DWRONG -o wrong.ptx prog.cu && ptxas -arch=$arch wrong.ptx -o wrong.cubin || exit 2

echo "== 4. ciq-replay"
ciq-replay plan cap
ciq-replay run --cubin ref.cubin cap
echo "exit $?"
ciq-replay run --cubin o0.cubin --reference ref.cubin cap
echo "exit $? (expect 0)"
ciq-replay run --cubin wrong.cubin --reference ref.cubin cap
echo "exit $? (expect 1: wrong answer)"
ciq-replay run --cubin o0.cubin --reference ref.cubin --compare close --samples 100 cap
echo "exit $? (expect 0)"

echo "== 5. serve"
printf 'ciq-request: 1\n--cubin\n%s\n\nciq-request: 2\n--cubin\n%s\n--check\n\nciq-request: 3\n--cubin\n%s\n--check\n\nciq-request: 4\n--cubin\n%s\n--samples\n50\n\n' \
  "$dir/o0.cubin" "$dir/o0.cubin" "$dir/wrong.cubin" "$dir/ref.cubin" |
  ciq-replay serve --reference ref.cubin cap
echo "exit $? (expect 0; answers 1 and 4 with time_ms, 2 status 0, 3 status 1 with wrong answer)"
