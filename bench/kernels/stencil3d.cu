// Register pressure: one time step of an 8th-order acoustic wave equation on
// a 512 x 512 x 256 grid (the inner loop of reverse-time migration):
// next = 2u - prev + vel * laplacian(u), 25-point star. Each thread walks
// four (x, y) columns along z, with their nine z-neighbours in register
// queues and the plane's twelve y-neighbours in registers (shared by the
// four); x neighbours come through the caches.
#include "../common/bench.h"

constexpr int k_nx = 512, k_ny = 512, k_nz = 256, k_r = 4;
// Central-difference weights of the 8th-order second derivative.
__host__ __device__ constexpr float coefficient(int r) {
  return r == 0 ? -2.84722222f : r == 1 ? 1.6f : r == 2 ? -0.2f : r == 3 ? 0.0253968254f : -0.00178571429f;
}

constexpr int k_rows = 4; // y rows per thread

extern "C" __global__ void __launch_bounds__(128) wave_step(const float* __restrict__ u, const float* __restrict__ prev,
                                                           const float* __restrict__ vel, float* __restrict__ next) {
  int x = blockIdx.x * 32 + threadIdx.x % 32;
  int y0 = (blockIdx.y * 4 + threadIdx.x / 32) * k_rows;
  // With k_rows = k_r, a thread's rows are all interior or all boundary.
  if (x < k_r || x >= k_nx - k_r || y0 < k_r || y0 + k_rows > k_ny - k_r) return;
  const std::size_t sy = k_nx, sz = std::size_t(k_nx) * k_ny;
  const std::size_t base = std::size_t(y0) * sy + x;
  float q[k_rows][2 * k_r + 1]; // per row, the z-neighbours
#pragma unroll
  for (int j = 0; j < k_rows; ++j)
#pragma unroll
    for (int i = 0; i < 2 * k_r; ++i) q[j][i + 1] = u[base + j * sy + i * sz];
  for (int z = k_r; z < k_nz - k_r; ++z) {
    const std::size_t p = base + z * sz;
    float col[k_rows + 2 * k_r]; // rows y0-k_r .. y0+k_rows+k_r-1 of this plane
#pragma unroll
    for (int j = 0; j < k_rows; ++j) {
#pragma unroll
      for (int i = 0; i < 2 * k_r; ++i) q[j][i] = q[j][i + 1];
      q[j][2 * k_r] = u[p + j * sy + k_r * sz];
      col[k_r + j] = q[j][k_r];
    }
#pragma unroll
    for (int i = 0; i < k_r; ++i) {
      col[i] = u[p - (k_r - i) * sy];
      col[k_r + k_rows + i] = u[p + (k_rows + i) * sy];
    }
#pragma unroll
    for (int j = 0; j < k_rows; ++j) {
      const std::size_t pj = p + j * sy;
      float lap = 3.0f * coefficient(0) * q[j][k_r];
#pragma unroll
      for (int r = 1; r <= k_r; ++r)
        lap += coefficient(r) * (q[j][k_r - r] + q[j][k_r + r] + u[pj - r] + u[pj + r] + col[k_r + j - r] + col[k_r + j + r]);
      next[pj] = 2.0f * q[j][k_r] - prev[pj] + vel[pj] * lap;
    }
  }
}

struct Wave : bench::Problem {
  static constexpr std::size_t n = std::size_t(k_nx) * k_ny * k_nz;
  bench::DeviceBuffer<float> u{n}, prev{n}, vel{n}, next{n};
  std::vector<float> hu, hp, hv;

  const char* kernel_name() const override { return "wave_step"; }
  const void* builtin_kernel() const override { return reinterpret_cast<const void*>(&wave_step); }
  void setup(bench::Random& rng) override {
    hu.resize(n);
    hp.resize(n);
    hv.resize(n);
    for (auto& v : hu) v = rng.uniform(-1.0f, 1.0f);
    for (auto& v : hp) v = rng.uniform(-1.0f, 1.0f);
    for (auto& v : hv) v = rng.uniform(0.01f, 0.1f);
    u.upload(hu);
    prev.upload(hp);
    vel.upload(hv);
  }
  void launch(const void* kernel, cudaStream_t stream) override {
    const float *a = u.ptr, *b = prev.ptr, *c = vel.ptr;
    float* d = next.ptr;
    void* args[] = {&a, &b, &c, &d};
    BENCH_CUDA(cudaLaunchKernel(kernel, dim3(k_nx / 32, k_ny / (4 * k_rows)), dim3(128), args, 0, stream));
  }
  void clear_output() override { next.zero(); }
  bool check(std::string& why) override {
    const std::vector<float>& got = next.download();
    bench::Random pick(19);
    const std::size_t sy = k_nx, sz = std::size_t(k_nx) * k_ny;
    for (int t = 0; t < 20000; ++t) {
      std::size_t x = pick.below(k_nx), y = pick.below(k_ny), z = pick.below(k_nz);
      std::size_t p = z * sz + y * sy + x;
      bool inside = x >= k_r && x < k_nx - k_r && y >= k_r && y < k_ny - k_r && z >= k_r && z < k_nz - k_r;
      double want = 0;
      if (inside) {
        double lap = 3.0 * coefficient(0) * hu[p];
        for (int r = 1; r <= k_r; ++r)
          lap += double(coefficient(r)) * (double(hu[p - r * sz]) + hu[p + r * sz] + hu[p - r] + hu[p + r] + hu[p - r * sy] + hu[p + r * sy]);
        want = 2.0 * hu[p] - hp[p] + double(hv[p]) * lap;
      }
      if (!bench::close(got[p], want, 1e-5, 1e-5)) {
        why = "point " + std::to_string(x) + "," + std::to_string(y) + "," + std::to_string(z) + ": " + std::to_string(got[p]) +
              ", want " + std::to_string(want);
        return false;
      }
    }
    return true;
  }
};

BENCH_MAIN(Wave)
