// Kernels that give each ptxas knob something to act on, for checking that
// every knob in spaces/*.space changes generated code on at least one of
// them (test/spaces/verify_space.py).
__global__ void atomics(float* sum, const float* in, int n) {
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x)
    atomicAdd(sum + (i & 7), in[i] * 0.5f);
}

__global__ void branchy(const int* __restrict__ keys, int* __restrict__ out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  int k = keys[i], acc = 0;
  for (int j = 0; j < 64; ++j) {
    if (k & 1) acc += j * k;
    else if (k & 2) acc ^= j;
    else if (acc > 1000) return;
    k = (k >> 1) | (k << 31);
  }
  out[i] = acc;
}

__global__ void saxpy_fma(const float* __restrict__ x, const float* __restrict__ y, float* __restrict__ z, float a, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) z[i] = a * x[i] * x[i] + a * y[i] + x[i] * y[i];
}

// Launch bounds give ptxas a block size, so minnctapersm can cap registers.
__global__ void __launch_bounds__(256) bounded(const float* __restrict__ in, float* __restrict__ out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  float r[24];
#pragma unroll
  for (int k = 0; k < 24; ++k) r[k] = in[i + k * n];
  float s = 0.f;
#pragma unroll
  for (int k = 0; k < 24; ++k)
#pragma unroll
    for (int j = 0; j < 24; ++j) s += r[k] * r[j] * (k - j);
  out[i] = s;
}

// A shared-memory tiled matrix multiply: loops, barriers, many live values.
template <int T>
__global__ void tiled_gemm(const float* __restrict__ a, const float* __restrict__ b, float* __restrict__ c, int n) {
  __shared__ float as[T][T], bs[T][T];
  int row = blockIdx.y * T + threadIdx.y, col = blockIdx.x * T + threadIdx.x;
  float acc = 0.f;
  for (int t = 0; t < n; t += T) {
    as[threadIdx.y][threadIdx.x] = a[row * n + t + threadIdx.x];
    bs[threadIdx.y][threadIdx.x] = b[(t + threadIdx.y) * n + col];
    __syncthreads();
#pragma unroll
    for (int k = 0; k < T; ++k) acc += as[threadIdx.y][k] * bs[k][threadIdx.x];
    __syncthreads();
  }
  if (row < n && col < n) c[row * n + col] = acc;
}
template __global__ void tiled_gemm<32>(const float*, const float*, float*, int);
