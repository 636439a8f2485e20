// Compute-bound: C = A * B in fp32, M = N = K = 2048, row-major. A 128x128
// tile per block of 256 threads, 8x8 outputs per thread in registers, K in
// steps of 8 through shared memory (A stored transposed).
#include "../common/bench.h"

constexpr int k_n = 2048;
constexpr int k_tile = 128, k_step = 8, k_threads = 256;

extern "C" __global__ void __launch_bounds__(k_threads) sgemm_tiled(const float* __restrict__ a, const float* __restrict__ b,
                                                                   float* __restrict__ c, int n) {
  __shared__ float as[k_step][k_tile];
  __shared__ float bs[k_step][k_tile];
  int tx = threadIdx.x % 16, ty = threadIdx.x / 16;
  int row0 = blockIdx.y * k_tile, col0 = blockIdx.x * k_tile;
  float acc[8][8] = {};
  float ra[8], rb[8];
  for (int k0 = 0; k0 < n; k0 += k_step) {
    // 128x8 of A and 8x128 of B: 1024 values each, 4 per thread.
#pragma unroll
    for (int l = 0; l < 4; ++l) {
      int idx = threadIdx.x + l * k_threads;
      int ar = idx / k_step, ak = idx % k_step;
      as[ak][ar] = a[std::size_t(row0 + ar) * n + k0 + ak];
      int bk = idx / k_tile, bc = idx % k_tile;
      bs[bk][bc] = b[std::size_t(k0 + bk) * n + col0 + bc];
    }
    __syncthreads();
#pragma unroll
    for (int k = 0; k < k_step; ++k) {
#pragma unroll
      for (int i = 0; i < 8; ++i) ra[i] = as[k][ty * 8 + i];
#pragma unroll
      for (int j = 0; j < 8; ++j) rb[j] = bs[k][tx * 8 + j];
#pragma unroll
      for (int i = 0; i < 8; ++i)
#pragma unroll
        for (int j = 0; j < 8; ++j) acc[i][j] += ra[i] * rb[j];
    }
    __syncthreads();
  }
#pragma unroll
  for (int i = 0; i < 8; ++i)
#pragma unroll
    for (int j = 0; j < 8; ++j) c[std::size_t(row0 + ty * 8 + i) * n + col0 + tx * 8 + j] = acc[i][j];
}

struct Sgemm : bench::Problem {
  bench::DeviceBuffer<float> a{std::size_t(k_n) * k_n}, b{std::size_t(k_n) * k_n}, c{std::size_t(k_n) * k_n};
  std::vector<float> ha, hb;

  const char* kernel_name() const override { return "sgemm_tiled"; }
  const void* builtin_kernel() const override { return reinterpret_cast<const void*>(&sgemm_tiled); }
  void setup(bench::Random& rng) override {
    ha.resize(a.count);
    hb.resize(b.count);
    for (auto& v : ha) v = rng.uniform(-1.0f, 1.0f);
    for (auto& v : hb) v = rng.uniform(-1.0f, 1.0f);
    a.upload(ha);
    b.upload(hb);
  }
  void launch(const void* kernel, cudaStream_t stream) override {
    const float *pa = a.ptr, *pb = b.ptr;
    float* pc = c.ptr;
    int n = k_n;
    void* args[] = {&pa, &pb, &pc, &n};
    BENCH_CUDA(cudaLaunchKernel(kernel, dim3(k_n / k_tile, k_n / k_tile), dim3(k_threads), args, 0, stream));
  }
  void clear_output() override { c.zero(); }
  bool check(std::string& why) override {
    return bench::check_product_samples(
        c.download(), k_n, 13, [&](std::size_t i, std::size_t j, std::size_t k) { return double(ha[i * k_n + k]) * hb[k * k_n + j]; },
        why);
  }
};

BENCH_MAIN(Sgemm)
