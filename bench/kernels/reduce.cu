// Memory-bound: sum of 64 Mi floats. Each block reduces a grid-stride slice
// with float4 loads and four accumulators, then writes one partial sum; the
// check adds the partials in float64.
#include "../common/bench.h"

constexpr int k_threads = 256;

extern "C" __global__ void __launch_bounds__(k_threads) reduce_sum(const float4* __restrict__ in, std::size_t n4,
                                                                  float* __restrict__ partial) {
  float acc[4] = {0, 0, 0, 0};
  std::size_t stride = std::size_t(gridDim.x) * blockDim.x;
  std::size_t i = std::size_t(blockIdx.x) * blockDim.x + threadIdx.x;
  for (; i + 3 * stride < n4; i += 4 * stride) {
#pragma unroll
    for (int u = 0; u < 4; ++u) {
      float4 v = in[i + u * stride];
      acc[u] += (v.x + v.y) + (v.z + v.w);
    }
  }
  for (; i < n4; i += stride) {
    float4 v = in[i];
    acc[0] += (v.x + v.y) + (v.z + v.w);
  }
  float sum = (acc[0] + acc[1]) + (acc[2] + acc[3]);
  for (int off = 16; off > 0; off >>= 1) sum += __shfl_xor_sync(0xffffffffu, sum, off);
  __shared__ float warp_sums[k_threads / 32];
  if ((threadIdx.x & 31) == 0) warp_sums[threadIdx.x / 32] = sum;
  __syncthreads();
  if (threadIdx.x < 32) {
    sum = threadIdx.x < k_threads / 32 ? warp_sums[threadIdx.x] : 0.0f;
    for (int off = 16; off > 0; off >>= 1) sum += __shfl_xor_sync(0xffffffffu, sum, off);
    if (threadIdx.x == 0) partial[blockIdx.x] = sum;
  }
}

struct Reduce : bench::Problem {
  static constexpr std::size_t n = std::size_t(64) << 20;
  static constexpr int blocks = 132 * 8;
  bench::DeviceBuffer<float> in{n}, partial{blocks};
  double want = 0;

  const char* kernel_name() const override { return "reduce_sum"; }
  const void* builtin_kernel() const override { return reinterpret_cast<const void*>(&reduce_sum); }
  void setup(bench::Random& rng) override {
    std::vector<float> host(n);
    for (auto& x : host) x = rng.uniform(0.0f, 1.0f);
    for (float x : host) want += x;
    in.upload(host);
  }
  void launch(const void* kernel, cudaStream_t stream) override {
    const float4* a = reinterpret_cast<const float4*>(in.ptr);
    std::size_t n4 = n / 4;
    float* out = partial.ptr;
    void* args[] = {&a, &n4, &out};
    BENCH_CUDA(cudaLaunchKernel(kernel, dim3(blocks), dim3(k_threads), args, 0, stream));
  }
  void clear_output() override { partial.zero(); }
  bool check(std::string& why) override {
    double got = 0;
    for (float p : partial.download()) got += p;
    if (bench::close(got, want, 1e-5, 0)) return true;
    why = "sum " + std::to_string(got) + ", want " + std::to_string(want);
    return false;
  }
};

BENCH_MAIN(Reduce)
