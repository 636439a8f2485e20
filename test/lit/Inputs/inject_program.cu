// A small real CUDA program for libciq-inject's tests: one kernel, its
// result or CUDA's error on stdout, exit status 0 or 3. Without a GPU its
// first CUDA call fails; with one it prints the sum.
#include <cstdio>
#include <cuda_runtime.h>

__global__ void scale(float* out, const float* in, float v, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = in[i] * v + 1.0f;
}

int main() {
  const int n = 1 << 12;
  float host[n];
  for (int i = 0; i < n; ++i) host[i] = float(i % 7);
  float *in = nullptr, *out = nullptr;
  cudaError_t status = cudaMalloc(&in, n * sizeof(float));
  if (status == cudaSuccess) status = cudaMalloc(&out, n * sizeof(float));
  if (status == cudaSuccess) status = cudaMemcpy(in, host, n * sizeof(float), cudaMemcpyHostToDevice);
  for (int launch = 0; status == cudaSuccess && launch < 3; ++launch) {
    scale<<<n / 256, 256>>>(out, in, 2.0f, n);
    status = cudaGetLastError();
  }
  if (status == cudaSuccess) status = cudaMemcpy(host, out, n * sizeof(float), cudaMemcpyDeviceToHost);
  if (status != cudaSuccess) {
    std::printf("cuda: %s\n", cudaGetErrorString(status));
    return 3;
  }
  double sum = 0;
  for (int i = 0; i < n; ++i) sum += host[i];
  std::printf("sum %.1f\n", sum);
  return 0;
}
