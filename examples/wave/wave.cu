// A whole program, not a benchmark: a small seismic forward model (the
// acoustic wave equation on a 3D grid, 8th order in space, 2nd in time) of
// the kind a kernel engineer ships, with several kernels of very different
// weight. It prints what such a program prints (progress and the final
// field energy), never a timing; the examples of "Tune a whole program"
// (README) profile it and tune its hot kernels by their GPU time measured
// inside its own run.
//
//   wave [--steps N] [--grid NX NY NZ] [-o FILE] [--checkpoint DIR]
//       runs N time steps (default 100) and writes the receivers' traces and
//       the energy history to FILE (raw float32, see write_output)
//   wave --compare REF OUT [--rtol R]
//       exits 0 when OUT matches REF to a relative L2 error below R (default
//       1e-4), 1 otherwise: the correctness check of a tuning run (a
//       compiler control that changes the answer must not ship)
//
// The kernels, by their share of GPU time on an H200 (ciq-tuner profile):
//   propagate      the 25-point stencil; needs ~100 registers, but the
//                  project caps every kernel's registers (CMakeLists.txt), so
//                  it spills: what a per-kernel control can fix
//   absorb         the absorbing sponge at the boundary, memory-bound
//   field_energy   a reduction every --energy-every steps
//   inject_source, record_receivers   tiny
//   pack_checkpoint  compiled but run only with --checkpoint: a kernel the
//                  tuner should not spend evaluations on
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <cuda_runtime.h>
#include <string>
#include <vector>

namespace wave {

constexpr int R = 4;        // stencil radius
constexpr int BX = 32, BY = 4;
constexpr int ROWS = 6;     // y rows a propagate thread carries along z
constexpr int SPONGE = 20;  // absorbing layer width, cells
constexpr float DT = 1e-3f, DH = 10.0f;

#define WAVE_CUDA(call)                                                              \
  do {                                                                               \
    cudaError_t e_ = (call);                                                         \
    if (e_ != cudaSuccess) {                                                         \
      std::fprintf(stderr, "wave: %s: %s\n", #call, cudaGetErrorString(e_));         \
      std::exit(2);                                                                  \
    }                                                                                \
  } while (0)

__constant__ float c_w[R + 1];  // second-derivative weights, / DH^2

// next = 2u - prev + (vel * DT)^2 * laplacian(u). Each thread owns ROWS
// consecutive y rows of one x column and marches in z, keeping each row's
// 2R+1 z-neighbours in registers.
__global__ void propagate(const float* __restrict__ u, const float* __restrict__ prev,
                          const float* __restrict__ vel, float* __restrict__ next,
                          int nx, int ny, int nz) {
  const int x = blockIdx.x * BX + threadIdx.x + R;
  const int y0 = (blockIdx.y * BY + threadIdx.y) * ROWS + R;
  if (x >= nx - R || y0 + ROWS > ny - R) return;
  const long sxy = long(nx) * ny;
  float q[ROWS][2 * R + 1];
#pragma unroll
  for (int j = 0; j < ROWS; ++j)
#pragma unroll
    for (int k = 0; k < 2 * R; ++k) q[j][k + 1] = u[k * sxy + long(y0 + j) * nx + x];
  for (int z = R; z < nz - R; ++z) {
#pragma unroll
    for (int j = 0; j < ROWS; ++j) {
#pragma unroll
      for (int k = 0; k < 2 * R; ++k) q[j][k] = q[j][k + 1];
      q[j][2 * R] = u[(z + R) * sxy + long(y0 + j) * nx + x];
    }
#pragma unroll
    for (int j = 0; j < ROWS; ++j) {
      const long p = z * sxy + long(y0 + j) * nx + x;
      float lap = 3.0f * c_w[0] * q[j][R];
#pragma unroll
      for (int r = 1; r <= R; ++r)
        lap += c_w[r] * (q[j][R - r] + q[j][R + r] + u[p - r] + u[p + r] + u[p - r * nx] + u[p + r * nx]);
      const float c = vel[p] * DT;
      next[p] = 2.0f * q[j][R] - prev[p] + c * c * lap;
    }
  }
}

// Damps both time levels in the outer SPONGE cells of every face.
__global__ void absorb(float* __restrict__ u, float* __restrict__ prev, int nx, int ny, int nz) {
  const long cells = long(nx) * ny * nz;
  for (long i = blockIdx.x * long(blockDim.x) + threadIdx.x; i < cells; i += long(gridDim.x) * blockDim.x) {
    const int x = int(i % nx), y = int(i / nx % ny), z = int(i / (long(nx) * ny));
    const int d = min(min(min(x, nx - 1 - x), min(y, ny - 1 - y)), min(z, nz - 1 - z));
    if (d >= SPONGE) continue;
    const float a = 0.015f * float(SPONGE - d);
    const float f = expf(-a * a);
    u[i] *= f;
    prev[i] *= f;
  }
}

// A Ricker wavelet (25 Hz) added at one cell.
__global__ void inject_source(float* u, long cell, int step) {
  const float t = step * DT - 0.04f, a = 3.14159265f * 25.0f * t;
  u[cell] += 1e3f * (1.0f - 2.0f * a * a) * expf(-a * a);
}

// A line of receivers along x at (y, z): one sample each per step.
__global__ void record_receivers(const float* __restrict__ u, float* __restrict__ traces, int nx, int ny, int y, int z,
                                 int step) {
  const int x = blockIdx.x * blockDim.x + threadIdx.x;
  if (x < nx) traces[long(step) * nx + x] = u[(long(z) * ny + y) * nx + x];
}

// Sum of u^2 over the grid, in double.
__global__ void field_energy(const float* __restrict__ u, long cells, double* __restrict__ sum) {
  __shared__ double partial[256];
  double acc = 0;
  for (long i = blockIdx.x * long(blockDim.x) + threadIdx.x; i < cells; i += long(gridDim.x) * blockDim.x)
    acc += double(u[i]) * u[i];
  partial[threadIdx.x] = acc;
  __syncthreads();
  for (int s = blockDim.x / 2; s > 0; s /= 2) {
    if (threadIdx.x < s) partial[threadIdx.x] += partial[threadIdx.x + s];
    __syncthreads();
  }
  if (threadIdx.x == 0) atomicAdd(sum, partial[0]);
}

// Half precision snapshot of the field, for a restart file.
__global__ void pack_checkpoint(const float* __restrict__ u, unsigned short* __restrict__ out, long cells) {
  for (long i = blockIdx.x * long(blockDim.x) + threadIdx.x; i < cells; i += long(gridDim.x) * blockDim.x) {
    unsigned int bits = __float_as_uint(u[i]);
    out[i] = (unsigned short)(((bits >> 16) & 0x8000u) | ((((bits >> 23) & 0xffu) - 112u) << 10 & 0x7c00u) |
                              ((bits >> 13) & 0x3ffu));
  }
}

struct Options {
  int steps = 100, nx = 448, ny = 440, nz = 256, energy_every = 5;
  std::string output, checkpoint;
};

bool read_floats(const char* path, std::vector<float>& values) {
  FILE* f = std::fopen(path, "rb");
  if (!f) return false;
  float v;
  while (std::fread(&v, sizeof v, 1, f) == 1) values.push_back(v);
  std::fclose(f);
  return true;
}

int compare(const char* ref_path, const char* out_path, double rtol) {
  std::vector<float> ref, out;
  if (!read_floats(ref_path, ref) || !read_floats(out_path, out)) {
    std::fprintf(stderr, "wave: cannot read %s or %s\n", ref_path, out_path);
    return 2;
  }
  if (ref.size() != out.size() || ref.empty()) {
    std::fprintf(stderr, "wave: %s has %zu values, %s %zu\n", ref_path, ref.size(), out_path, out.size());
    return 1;
  }
  double diff = 0, norm = 0;
  for (std::size_t i = 0; i < ref.size(); ++i) {
    if (!std::isfinite(out[i])) {
      std::fprintf(stderr, "wave: value %zu is not finite\n", i);
      return 1;
    }
    diff += (double(out[i]) - ref[i]) * (double(out[i]) - ref[i]);
    norm += double(ref[i]) * ref[i];
  }
  const double error = std::sqrt(diff / (norm > 0 ? norm : 1));
  std::printf("relative L2 error %.3g (limit %.3g)\n", error, rtol);
  return error < rtol ? 0 : 1;
}

int usage() {
  std::fprintf(stderr, "usage: wave [--steps N] [--grid NX NY NZ] [--energy-every K] [-o FILE] [--checkpoint DIR]\n"
                       "       wave --compare REF OUT [--rtol R]\n");
  return 2;
}

} // namespace wave

using namespace wave;

int main(int argc, char** argv) {
  Options o;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    auto next_int = [&](int& v) { return i + 1 < argc && (v = std::atoi(argv[++i])) > 0; };
    if (a == "--compare" && i + 2 < argc) {
      double rtol = 1e-4;
      if (i + 4 < argc && std::string(argv[i + 3]) == "--rtol") rtol = std::atof(argv[i + 4]);
      return compare(argv[i + 1], argv[i + 2], rtol);
    } else if (a == "--steps") {
      if (!next_int(o.steps)) return usage();
    } else if (a == "--energy-every") {
      if (!next_int(o.energy_every)) return usage();
    } else if (a == "--grid") {
      if (!next_int(o.nx) || !next_int(o.ny) || !next_int(o.nz)) return usage();
    } else if (a == "-o" && i + 1 < argc) {
      o.output = argv[++i];
    } else if (a == "--checkpoint" && i + 1 < argc) {
      o.checkpoint = argv[++i];
    } else {
      return usage();
    }
  }
  if (o.nx < 4 * SPONGE || o.ny < 4 * SPONGE || o.nz < 4 * SPONGE || (o.ny - 2 * R) % (BY * ROWS) != 0) {
    std::fprintf(stderr, "wave: the grid must be at least %d cells in each direction, and NY - %d a multiple of %d\n",
                 4 * SPONGE, 2 * R, BY * ROWS);
    return 2;
  }
  const long cells = long(o.nx) * o.ny * o.nz;

  // A layered velocity model (1500 to 3500 m/s with depth) and a quiet start.
  std::vector<float> velocity(cells);
  for (int z = 0; z < o.nz; ++z) {
    const float v = 1500.0f + 2000.0f * float(z) / float(o.nz - 1) + ((z / 32) % 2 ? 150.0f : 0.0f);
    for (long i = 0; i < long(o.nx) * o.ny; ++i) velocity[z * long(o.nx) * o.ny + i] = v;
  }
  const float d2[R + 1] = {-2.84722222f, 1.6f, -0.2f, 0.0253968254f, -0.00178571429f};
  float w[R + 1];
  for (int r = 0; r <= R; ++r) w[r] = d2[r] / (DH * DH);
  WAVE_CUDA(cudaMemcpyToSymbol(c_w, w, sizeof w));

  float *u, *prev, *next, *vel, *traces;
  double* energy;
  const std::size_t bytes = std::size_t(cells) * sizeof(float);
  WAVE_CUDA(cudaMalloc(&u, bytes));
  WAVE_CUDA(cudaMalloc(&prev, bytes));
  WAVE_CUDA(cudaMalloc(&next, bytes));
  WAVE_CUDA(cudaMalloc(&vel, bytes));
  WAVE_CUDA(cudaMalloc(&traces, std::size_t(o.steps) * o.nx * sizeof(float)));
  WAVE_CUDA(cudaMalloc(&energy, sizeof(double)));
  WAVE_CUDA(cudaMemset(u, 0, bytes));
  WAVE_CUDA(cudaMemset(prev, 0, bytes));
  WAVE_CUDA(cudaMemset(next, 0, bytes));
  WAVE_CUDA(cudaMemcpy(vel, velocity.data(), bytes, cudaMemcpyHostToDevice));

  const long source = (long(SPONGE + 8) * o.ny + o.ny / 2) * o.nx + o.nx / 2;
  const dim3 block(BX, BY), grid((o.nx - 2 * R + BX - 1) / BX, (o.ny - 2 * R) / (BY * ROWS));
  const int sms = [] { int n = 0; cudaDeviceGetAttribute(&n, cudaDevAttrMultiProcessorCount, 0); return n > 0 ? n : 80; }();
  std::vector<double> energies;
  for (int step = 0; step < o.steps; ++step) {
    inject_source<<<1, 1>>>(u, source, step);
    propagate<<<grid, block>>>(u, prev, vel, next, o.nx, o.ny, o.nz);
    absorb<<<sms * 8, 256>>>(next, u, o.nx, o.ny, o.nz);
    record_receivers<<<(o.nx + 127) / 128, 128>>>(next, traces, o.nx, o.ny, o.ny / 2, SPONGE + 4, step);
    WAVE_CUDA(cudaGetLastError());
    float* oldest = prev;
    prev = u;
    u = next;
    next = oldest;
    if ((step + 1) % o.energy_every == 0 || step + 1 == o.steps) {
      WAVE_CUDA(cudaMemset(energy, 0, sizeof(double)));
      field_energy<<<sms * 4, 256>>>(u, cells, energy);
      double e = 0;
      WAVE_CUDA(cudaMemcpy(&e, energy, sizeof e, cudaMemcpyDeviceToHost));
      energies.push_back(e);
      if ((step + 1) % (o.energy_every * 10) == 0) std::printf("step %d: field energy %.6e\n", step + 1, e);
    }
  }
  if (!o.checkpoint.empty()) {
    unsigned short* half;
    WAVE_CUDA(cudaMalloc(&half, std::size_t(cells) * sizeof(unsigned short)));
    pack_checkpoint<<<sms * 8, 256>>>(u, half, cells);
    std::vector<unsigned short> host(cells);
    WAVE_CUDA(cudaMemcpy(host.data(), half, host.size() * sizeof(unsigned short), cudaMemcpyDeviceToHost));
    std::string path = o.checkpoint + "/wave.ckpt";
    FILE* f = std::fopen(path.c_str(), "wb");
    if (!f || std::fwrite(host.data(), sizeof(unsigned short), host.size(), f) != host.size()) {
      std::fprintf(stderr, "wave: cannot write %s\n", path.c_str());
      return 1;
    }
    std::fclose(f);
  }
  WAVE_CUDA(cudaDeviceSynchronize());
  std::printf("done: %d steps on a %dx%dx%d grid, final field energy %.6e\n", o.steps, o.nx, o.ny, o.nz,
              energies.empty() ? 0.0 : energies.back());
  if (!o.output.empty()) {
    // The receivers' traces (steps x nx) then the energy history, float32.
    std::vector<float> out(std::size_t(o.steps) * o.nx);
    WAVE_CUDA(cudaMemcpy(out.data(), traces, out.size() * sizeof(float), cudaMemcpyDeviceToHost));
    for (double e : energies) out.push_back(float(e));
    FILE* f = std::fopen(o.output.c_str(), "wb");
    if (!f || std::fwrite(out.data(), sizeof(float), out.size(), f) != out.size()) {
      std::fprintf(stderr, "wave: cannot write %s\n", o.output.c_str());
      return 1;
    }
    std::fclose(f);
  }
  return 0;
}
