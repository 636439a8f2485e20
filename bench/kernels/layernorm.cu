// Memory-bound: layer normalisation of 8192 rows of 4096 floats with a
// learned scale and shift. One block per row, the row in registers; mean,
// then variance of the centred values (two-pass, as accurate libraries do).
#include "../common/bench.h"

constexpr int k_cols = 4096;
constexpr int k_threads = 512;
constexpr int k_per_thread = k_cols / k_threads;
constexpr float k_eps = 1e-5f;

__device__ float block_sum(float v, float* scratch) {
  for (int off = 16; off > 0; off >>= 1) v += __shfl_xor_sync(0xffffffffu, v, off);
  if ((threadIdx.x & 31) == 0) scratch[threadIdx.x / 32] = v;
  __syncthreads();
  v = 0;
  for (int w = 0; w < k_threads / 32; ++w) v += scratch[w];
  __syncthreads();
  return v;
}

extern "C" __global__ void __launch_bounds__(k_threads) layernorm_rows(const float* __restrict__ in, const float* __restrict__ gamma,
                                                                      const float* __restrict__ beta, float* __restrict__ out) {
  __shared__ float scratch[k_threads / 32];
  const float* row = in + std::size_t(blockIdx.x) * k_cols;
  float v[k_per_thread];
  float s = 0;
#pragma unroll
  for (int j = 0; j < k_per_thread; ++j) {
    v[j] = row[j * k_threads + threadIdx.x];
    s += v[j];
  }
  float mean = block_sum(s, scratch) * (1.0f / k_cols);
  float q = 0;
#pragma unroll
  for (int j = 0; j < k_per_thread; ++j) {
    v[j] -= mean;
    q += v[j] * v[j];
  }
  float rstd = rsqrtf(block_sum(q, scratch) * (1.0f / k_cols) + k_eps);
  float* dst = out + std::size_t(blockIdx.x) * k_cols;
#pragma unroll
  for (int j = 0; j < k_per_thread; ++j) {
    int c = j * k_threads + threadIdx.x;
    dst[c] = v[j] * rstd * gamma[c] + beta[c];
  }
}

struct LayerNorm : bench::Problem {
  static constexpr int rows = 8192;
  bench::DeviceBuffer<float> in{std::size_t(rows) * k_cols}, out{std::size_t(rows) * k_cols}, gamma{k_cols}, beta{k_cols};
  std::vector<float> x, g, b;

  const char* kernel_name() const override { return "layernorm_rows"; }
  const void* builtin_kernel() const override { return reinterpret_cast<const void*>(&layernorm_rows); }
  void setup(bench::Random& rng) override {
    x.resize(in.count);
    g.resize(k_cols);
    b.resize(k_cols);
    for (auto& v : x) v = rng.uniform(-3.0f, 5.0f);
    for (auto& v : g) v = rng.uniform(0.5f, 1.5f);
    for (auto& v : b) v = rng.uniform(-1.0f, 1.0f);
    in.upload(x);
    gamma.upload(g);
    beta.upload(b);
  }
  void launch(const void* kernel, cudaStream_t stream) override {
    const float *a = in.ptr, *gp = gamma.ptr, *bp = beta.ptr;
    float* o = out.ptr;
    void* args[] = {&a, &gp, &bp, &o};
    BENCH_CUDA(cudaLaunchKernel(kernel, dim3(rows), dim3(k_threads), args, 0, stream));
  }
  void clear_output() override { out.zero(); }
  bool check(std::string& why) override {
    const std::vector<float>& got = out.download();
    bench::Random pick(11);
    for (int t = 0; t < 64; ++t) {
      std::size_t r = pick.below(rows);
      const float* row = &x[r * k_cols];
      double mean = 0, var = 0;
      for (int c = 0; c < k_cols; ++c) mean += row[c];
      mean /= k_cols;
      for (int c = 0; c < k_cols; ++c) var += (row[c] - mean) * (row[c] - mean);
      double rstd = 1.0 / std::sqrt(var / k_cols + k_eps);
      for (int c = 0; c < k_cols; ++c) {
        double want = (row[c] - mean) * rstd * g[c] + b[c];
        if (!bench::close(got[r * k_cols + c], want, 1e-4, 1e-4)) {
          why = "row " + std::to_string(r) + " col " + std::to_string(c);
          return false;
        }
      }
    }
    return true;
  }
};

BENCH_MAIN(LayerNorm)
