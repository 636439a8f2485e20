// Two register-hungry kernels and a light one, for per-kernel tests:
// ptxas gives heavy_a and heavy_b many registers; a per-kernel maxnreg on
// one of them must not change the other.
#ifndef B_SCALE
#define B_SCALE 3
#endif

__global__ void heavy_a(const float* __restrict__ in, float* __restrict__ out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  float r[32];
#pragma unroll
  for (int k = 0; k < 32; ++k) r[k] = in[i + k * n];
  float s = 0.f;
#pragma unroll
  for (int k = 0; k < 32; ++k)
#pragma unroll
    for (int j = 0; j < 32; ++j) s += r[k] * r[j] * (k + j);
  out[i] = s;
}

__global__ void heavy_b(const float* __restrict__ in, float* __restrict__ out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  float r[32];
#pragma unroll
  for (int k = 0; k < 32; ++k) r[k] = in[i + k * n];
  float s = 0.f;
#pragma unroll
  for (int k = 0; k < 32; ++k)
#pragma unroll
    for (int j = 0; j < 32; ++j) s += r[k] * r[j] * (k * B_SCALE + j);
  out[i] = s;
}

__global__ void light(float* out, float v) { out[threadIdx.x] = v * 2.f; }
