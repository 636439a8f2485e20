// Memory-bound: row-wise softmax of an 8192 x 4096 float matrix. One block
// of 256 threads per row keeps the row in registers (16 values a thread):
// max, sum of exponentials, scale, each a block-wide reduction.
#include "../common/bench.h"

constexpr int k_cols = 4096;
constexpr int k_threads = 256;
constexpr int k_per_thread = k_cols / k_threads;

template <typename Op> __device__ float block_reduce(float v, Op op, float* scratch) {
  for (int off = 16; off > 0; off >>= 1) v = op(v, __shfl_xor_sync(0xffffffffu, v, off));
  if ((threadIdx.x & 31) == 0) scratch[threadIdx.x / 32] = v;
  __syncthreads();
  v = scratch[0];
  for (int w = 1; w < k_threads / 32; ++w) v = op(v, scratch[w]);
  __syncthreads();
  return v;
}

extern "C" __global__ void __launch_bounds__(k_threads) softmax_rows(const float* __restrict__ in, float* __restrict__ out) {
  __shared__ float scratch[k_threads / 32];
  const float* row = in + std::size_t(blockIdx.x) * k_cols;
  float v[k_per_thread];
#pragma unroll
  for (int j = 0; j < k_per_thread; ++j) v[j] = row[j * k_threads + threadIdx.x];
  float m = v[0];
#pragma unroll
  for (int j = 1; j < k_per_thread; ++j) m = fmaxf(m, v[j]);
  m = block_reduce(m, [](float a, float b) { return fmaxf(a, b); }, scratch);
  float s = 0;
#pragma unroll
  for (int j = 0; j < k_per_thread; ++j) {
    v[j] = __expf(v[j] - m);
    s += v[j];
  }
  s = block_reduce(s, [](float a, float b) { return a + b; }, scratch);
  float inv = 1.0f / s;
  float* dst = out + std::size_t(blockIdx.x) * k_cols;
#pragma unroll
  for (int j = 0; j < k_per_thread; ++j) dst[j * k_threads + threadIdx.x] = v[j] * inv;
}

struct Softmax : bench::Problem {
  static constexpr int rows = 8192;
  bench::DeviceBuffer<float> in{std::size_t(rows) * k_cols}, out{std::size_t(rows) * k_cols};
  std::vector<float> host;

  const char* kernel_name() const override { return "softmax_rows"; }
  const void* builtin_kernel() const override { return reinterpret_cast<const void*>(&softmax_rows); }
  void setup(bench::Random& rng) override {
    host.resize(in.count);
    for (auto& x : host) x = rng.uniform(-8.0f, 8.0f);
    in.upload(host);
  }
  void launch(const void* kernel, cudaStream_t stream) override {
    const float* a = in.ptr;
    float* b = out.ptr;
    void* args[] = {&a, &b};
    BENCH_CUDA(cudaLaunchKernel(kernel, dim3(rows), dim3(k_threads), args, 0, stream));
  }
  void clear_output() override { out.zero(); }
  bool check(std::string& why) override {
    const std::vector<float>& got = out.download();
    bench::Random pick(7);
    for (int t = 0; t < 64; ++t) {
      std::size_t r = pick.below(rows);
      const float* x = &host[r * k_cols];
      double m = x[0], s = 0;
      for (int c = 1; c < k_cols; ++c) m = std::max(m, double(x[c]));
      for (int c = 0; c < k_cols; ++c) s += std::exp(double(x[c]) - m);
      for (int c = 0; c < k_cols; ++c) {
        double want = std::exp(double(x[c]) - m) / s;
        if (!bench::close(got[r * k_cols + c], want, 1e-4, 1e-9)) {
          why = "row " + std::to_string(r) + " col " + std::to_string(c) + ": " + std::to_string(got[r * k_cols + c]) +
                ", want " + std::to_string(want);
          return false;
        }
      }
    }
    return true;
  }
};

BENCH_MAIN(Softmax)
