// Kernels on which each NVVM-stage knob of spaces/nvcc-13.space changes the PTX.
__device__ __noinline__ float scale(float x, float s) { return x * s + 1.0f; }

extern "C" __global__ void rows(float* out, const float* in, float s, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  float acc = 0.f;
  for (int j = 0; j < n; ++j) acc += in[(long)i * n + j] * s;
  for (int j = 0; j < 64; ++j) out[(long)i * 64 + j] = in[(long)i * 64 + j] * s + acc;
}

extern "C" __global__ void maths(float* out, const float* a, const float* b, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = sqrtf(a[i]) / b[i] + scale(a[i], b[i]) * out[i];
}

extern "C" __global__ void alias(float* out, const float* in, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) { out[i] = in[i] * 2.f; out[i + n] = in[i] * 3.f; out[i + 2 * n] = in[i]; }
}
