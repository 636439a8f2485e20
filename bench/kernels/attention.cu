// Register pressure: fused attention forward, fp32 on CUDA cores, 32 heads x
// 1024 positions x head size 64 (non-causal). One thread per query row keeps
// q, the output accumulator and the running max and sum in registers
// (online softmax); the block's 128 queries share 32-key tiles of K and V in
// shared memory.
#include "../common/bench.h"

constexpr int k_heads = 32, k_seq = 1024, k_dim = 64;
constexpr int k_threads = 128, k_keys = 32;

extern "C" __global__ void __launch_bounds__(k_threads) attention_fwd(const float* __restrict__ q, const float* __restrict__ k,
                                                                     const float* __restrict__ v, float* __restrict__ o,
                                                                     float scale) {
  __shared__ float ks[k_keys][k_dim];
  __shared__ float vs[k_keys][k_dim];
  const std::size_t head = std::size_t(blockIdx.y) * k_seq * k_dim;
  int row = blockIdx.x * k_threads + threadIdx.x;
  float qr[k_dim], acc[k_dim];
#pragma unroll
  for (int d = 0; d < k_dim; ++d) {
    qr[d] = q[head + std::size_t(row) * k_dim + d] * scale;
    acc[d] = 0;
  }
  float m = -INFINITY, l = 0;
  for (int t = 0; t < k_seq; t += k_keys) {
    for (int i = threadIdx.x; i < k_keys * k_dim; i += k_threads) {
      ks[i / k_dim][i % k_dim] = k[head + std::size_t(t) * k_dim + i];
      vs[i / k_dim][i % k_dim] = v[head + std::size_t(t) * k_dim + i];
    }
    __syncthreads();
    for (int j = 0; j < k_keys; ++j) {
      float s = 0;
#pragma unroll
      for (int d = 0; d < k_dim; ++d) s += qr[d] * ks[j][d];
      float m_new = fmaxf(m, s);
      float correction = __expf(m - m_new);
      float p = __expf(s - m_new);
      l = l * correction + p;
#pragma unroll
      for (int d = 0; d < k_dim; ++d) acc[d] = acc[d] * correction + p * vs[j][d];
      m = m_new;
    }
    __syncthreads();
  }
  float inv = 1.0f / l;
#pragma unroll
  for (int d = 0; d < k_dim; ++d) o[head + std::size_t(row) * k_dim + d] = acc[d] * inv;
}

struct Attention : bench::Problem {
  static constexpr std::size_t n = std::size_t(k_heads) * k_seq * k_dim;
  bench::DeviceBuffer<float> q{n}, k{n}, v{n}, o{n};
  std::vector<float> hq, hk, hv;
  float scale = 1.0f / std::sqrt(float(k_dim));

  const char* kernel_name() const override { return "attention_fwd"; }
  const void* builtin_kernel() const override { return reinterpret_cast<const void*>(&attention_fwd); }
  void setup(bench::Random& rng) override {
    hq.resize(n);
    hk.resize(n);
    hv.resize(n);
    for (auto& x : hq) x = rng.uniform(-2.0f, 2.0f);
    for (auto& x : hk) x = rng.uniform(-2.0f, 2.0f);
    for (auto& x : hv) x = rng.uniform(-1.0f, 1.0f);
    q.upload(hq);
    k.upload(hk);
    v.upload(hv);
  }
  void launch(const void* kernel, cudaStream_t stream) override {
    const float *a = q.ptr, *b = k.ptr, *c = v.ptr;
    float* d = o.ptr;
    float s = scale;
    void* args[] = {&a, &b, &c, &d, &s};
    BENCH_CUDA(cudaLaunchKernel(kernel, dim3(k_seq / k_threads, k_heads), dim3(k_threads), args, 0, stream));
  }
  void clear_output() override { o.zero(); }
  bool check(std::string& why) override {
    const std::vector<float>& got = o.download();
    bench::Random pick(23);
    std::vector<double> s(k_seq);
    for (int t = 0; t < 48; ++t) {
      std::size_t h = pick.below(k_heads), r = pick.below(k_seq);
      std::size_t head = h * k_seq * k_dim;
      double m = -1e300, l = 0;
      for (int j = 0; j < k_seq; ++j) {
        double dot = 0;
        for (int d = 0; d < k_dim; ++d) dot += double(hq[head + r * k_dim + d]) * scale * hk[head + std::size_t(j) * k_dim + d];
        s[j] = dot;
        m = std::max(m, dot);
      }
      for (int j = 0; j < k_seq; ++j) l += std::exp(s[j] - m);
      for (int d = 0; d < k_dim; ++d) {
        double want = 0;
        for (int j = 0; j < k_seq; ++j) want += std::exp(s[j] - m) / l * hv[head + std::size_t(j) * k_dim + d];
        if (!bench::close(got[head + r * k_dim + d], want, 1e-3, 1e-4)) {
          why = "head " + std::to_string(h) + " row " + std::to_string(r) + " dim " + std::to_string(d) + ": " +
                std::to_string(got[head + r * k_dim + d]) + ", want " + std::to_string(want);
          return false;
        }
      }
    }
    return true;
  }
};

BENCH_MAIN(Attention)
