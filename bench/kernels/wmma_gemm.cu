// Tensor cores: C = A * B with fp16 inputs and fp32 accumulation through
// wmma (16x16x16 fragments), M = N = K = 4096, A row-major, B column-major.
// A 128x128 tile per block of 8 warps (each 64x32: 4x2 fragments), K in
// steps of 32 through shared memory.
#include "../common/bench.h"

#include <cuda_fp16.h>
#include <mma.h>

constexpr int k_n = 4096;
constexpr int k_tile = 128, k_step = 32, k_threads = 256;
constexpr int k_pad = 8; // halves of padding per shared-memory row

extern "C" __global__ void __launch_bounds__(k_threads) wmma_gemm(const half* __restrict__ a, const half* __restrict__ b,
                                                                 float* __restrict__ c, int n) {
  using namespace nvcuda;
  __shared__ __align__(32) half as[k_tile][k_step + k_pad]; // rows of A
  __shared__ __align__(32) half bs[k_tile][k_step + k_pad]; // columns of B
  int warp = threadIdx.x / 32;
  int wr = warp / 4, wc = warp % 4; // 2 x 4 warps: 64 rows x 32 columns each
  int row0 = blockIdx.y * k_tile, col0 = blockIdx.x * k_tile;
  wmma::fragment<wmma::accumulator, 16, 16, 16, float> acc[4][2];
#pragma unroll
  for (int i = 0; i < 4; ++i)
#pragma unroll
    for (int j = 0; j < 2; ++j) wmma::fill_fragment(acc[i][j], 0.0f);
  for (int k0 = 0; k0 < n; k0 += k_step) {
    // 128 rows x 32 halves of each: 512 chunks of 8 halves, 2 per thread.
#pragma unroll
    for (int l = 0; l < 2; ++l) {
      int chunk = threadIdx.x + l * k_threads;
      int r = chunk / 4, part = (chunk % 4) * 8;
      *reinterpret_cast<uint4*>(&as[r][part]) = *reinterpret_cast<const uint4*>(&a[std::size_t(row0 + r) * n + k0 + part]);
      *reinterpret_cast<uint4*>(&bs[r][part]) = *reinterpret_cast<const uint4*>(&b[std::size_t(col0 + r) * n + k0 + part]);
    }
    __syncthreads();
#pragma unroll
    for (int kk = 0; kk < k_step; kk += 16) {
      wmma::fragment<wmma::matrix_a, 16, 16, 16, half, wmma::row_major> fa[4];
      wmma::fragment<wmma::matrix_b, 16, 16, 16, half, wmma::col_major> fb[2];
#pragma unroll
      for (int i = 0; i < 4; ++i) wmma::load_matrix_sync(fa[i], &as[wr * 64 + i * 16][kk], k_step + k_pad);
#pragma unroll
      for (int j = 0; j < 2; ++j) wmma::load_matrix_sync(fb[j], &bs[wc * 32 + j * 16][kk], k_step + k_pad);
#pragma unroll
      for (int i = 0; i < 4; ++i)
#pragma unroll
        for (int j = 0; j < 2; ++j) wmma::mma_sync(acc[i][j], fa[i], fb[j], acc[i][j]);
    }
    __syncthreads();
  }
#pragma unroll
  for (int i = 0; i < 4; ++i)
#pragma unroll
    for (int j = 0; j < 2; ++j)
      wmma::store_matrix_sync(&c[std::size_t(row0 + wr * 64 + i * 16) * n + col0 + wc * 32 + j * 16], acc[i][j], n,
                              wmma::mem_row_major);
}

struct WmmaGemm : bench::Problem {
  bench::DeviceBuffer<half> a{std::size_t(k_n) * k_n}, b{std::size_t(k_n) * k_n};
  bench::DeviceBuffer<float> c{std::size_t(k_n) * k_n};
  std::vector<float> fa, fb; // the fp16 values, widened

  const char* kernel_name() const override { return "wmma_gemm"; }
  const void* builtin_kernel() const override { return reinterpret_cast<const void*>(&wmma_gemm); }
  void setup(bench::Random& rng) override {
    std::vector<half> ha(a.count), hb(b.count);
    fa.resize(a.count);
    fb.resize(b.count);
    for (std::size_t i = 0; i < ha.size(); ++i) {
      ha[i] = __float2half(rng.uniform(-1.0f, 1.0f));
      fa[i] = __half2float(ha[i]);
      hb[i] = __float2half(rng.uniform(-1.0f, 1.0f));
      fb[i] = __half2float(hb[i]);
    }
    a.upload(ha);
    b.upload(hb);
  }
  void launch(const void* kernel, cudaStream_t stream) override {
    const half *pa = a.ptr, *pb = b.ptr;
    float* pc = c.ptr;
    int n = k_n;
    void* args[] = {&pa, &pb, &pc, &n};
    BENCH_CUDA(cudaLaunchKernel(kernel, dim3(k_n / k_tile, k_n / k_tile), dim3(k_threads), args, 0, stream));
  }
  void clear_output() override { c.zero(); }
  bool check(std::string& why) override {
    // B is stored column-major: its column j is row j of fb.
    return bench::check_product_samples(
        c.download(), k_n, 17, [&](std::size_t i, std::size_t j, std::size_t k) { return double(fa[i * k_n + k]) * fb[j * k_n + k]; },
        why);
  }
};

BENCH_MAIN(WmmaGemm)
