// The benchmark harness shared by bench/kernels/*.cu. Each program builds
// one kernel (extern "C", so a cubin names it plainly), checks it against a
// float64 CPU reference on fresh random data and times it:
//
//   bench_NAME                  check, then time: `time_ms: M` (median),
//                               `noise_pct: N` (IQR / median), `samples: S`
//   bench_NAME --check          check only; exit 1 on a wrong answer
//   bench_NAME --samples S      timed samples (default 50)
//   bench_NAME --no-check       time without checking first
//   bench_NAME --variants DIR   ground truth: load every DIR/*.cubin (one
//                               build of the kernel per control set), check
//                               each, then time them interleaved (a fresh
//                               shuffled order per round), one CSV row per
//                               sample: `config,sample,ms`
//   bench_NAME --cubin FILE     check and time the kernel of FILE instead
//                               of the linked-in build
//   bench_NAME --seed N         data seed (default: random, printed)
//   bench_NAME --serve          stay resident: make the inputs once, then
//                               read requests on stdin (`ciq-request: ID`,
//                               the options above one per line, an empty
//                               line ends each) and answer each on stdout,
//                               ended by a line `ciq-status: ID N`
//                               (ciq-tuner --bench-server)
//
// Every sample is one launch after the L2 is flushed (a 256 MiB memset),
// timed with CUDA events on one stream.
#pragma once

#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <dirent.h>
#include <random>
#include <string>
#include <vector>

#define BENCH_CUDA(call)                                                                           \
  do {                                                                                             \
    cudaError_t err_ = (call);                                                                     \
    if (err_ != cudaSuccess) {                                                                     \
      std::fprintf(stderr, "%s:%d: %s: %s\n", __FILE__, __LINE__, #call, cudaGetErrorString(err_)); \
      std::exit(2);                                                                                \
    }                                                                                              \
  } while (0)

namespace bench {

// A fast, seedable generator for large inputs (splitmix64).
struct Random {
  std::uint64_t state;
  explicit Random(std::uint64_t seed) : state(seed) {}
  std::uint64_t next() {
    std::uint64_t z = (state += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
  }
  // Uniform in [lo, hi).
  float uniform(float lo, float hi) { return lo + (hi - lo) * float(next() >> 40) * (1.0f / 16777216.0f); }
  std::size_t below(std::size_t n) { return std::size_t(next() % n); }
};

template <typename T> struct DeviceBuffer {
  T* ptr = nullptr;
  std::size_t count = 0;
  DeviceBuffer() = default;
  explicit DeviceBuffer(std::size_t n) : count(n) { BENCH_CUDA(cudaMalloc(&ptr, n * sizeof(T))); }
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;
  ~DeviceBuffer() { if (ptr) cudaFree(ptr); }
  void upload(const std::vector<T>& host) { BENCH_CUDA(cudaMemcpy(ptr, host.data(), count * sizeof(T), cudaMemcpyHostToDevice)); }
  // Into a host copy that is kept: a resident benchmark (--serve) checks
  // build after build, and a fresh vector per check (hundreds of MB, every
  // page faulted in again) costs more than the copy itself.
  const std::vector<T>& download() {
    host_.resize(count);
    BENCH_CUDA(cudaMemcpy(host_.data(), ptr, count * sizeof(T), cudaMemcpyDeviceToHost));
    return host_;
  }
  void zero() { BENCH_CUDA(cudaMemset(ptr, 0, count * sizeof(T))); }

private:
  std::vector<T> host_;
};

// Relative-or-absolute closeness, for float results against float64.
inline bool close(double got, double want, double rel, double abs_tol) {
  return std::isfinite(got) && std::fabs(got - want) <= abs_tol + rel * std::fabs(want);
}

// Checks 512 sampled entries of an n x n matrix product `c` against float64
// dot products; `product(i, j, k)` is A[i][k] * B[k][j] in double. The
// tolerance scales with the sum of |products| (fp32 accumulation error).
template <typename Product>
bool check_product_samples(const std::vector<float>& c, std::size_t n, std::uint64_t seed, Product product, std::string& why) {
  Random pick(seed);
  for (int t = 0; t < 512; ++t) {
    std::size_t i = pick.below(n), j = pick.below(n);
    double want = 0, mag = 0;
    for (std::size_t k = 0; k < n; ++k) {
      double p = product(i, j, k);
      want += p;
      mag += std::fabs(p);
    }
    if (!close(c[i * n + j], want, 0, 1e-5 * mag)) {
      why = "C[" + std::to_string(i) + "][" + std::to_string(j) + "] = " + std::to_string(c[i * n + j]) + ", want " +
            std::to_string(want);
      return false;
    }
  }
  return true;
}

// What one benchmark program provides.
struct Problem {
  virtual ~Problem() = default;
  virtual const char* kernel_name() const = 0;    // the extern "C" kernel
  virtual const void* builtin_kernel() const = 0; // the linked-in build of it
  virtual void setup(Random& rng) = 0;            // inputs, device buffers
  virtual void prepare(const void* kernel) {}     // per-build attributes (dynamic shared memory)
  virtual void launch(const void* kernel, cudaStream_t stream) = 0;
  virtual void clear_output() = 0;
  // Compares the output of one launch with the float64 reference; on a
  // mismatch, says where in `why`.
  virtual bool check(std::string& why) = 0;
};

struct Variant {
  std::string config;
  const void* kernel = nullptr;
};

inline double percentile(std::vector<double> v, double q) {
  std::sort(v.begin(), v.end());
  double pos = q * double(v.size() - 1);
  std::size_t lo = std::size_t(pos);
  std::size_t hi = std::min(lo + 1, v.size() - 1);
  return v[lo] + (v[hi] - v[lo]) * (pos - double(lo));
}

class Timer {
public:
  Timer() {
    BENCH_CUDA(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking));
    BENCH_CUDA(cudaEventCreate(&start_));
    BENCH_CUDA(cudaEventCreate(&stop_));
    BENCH_CUDA(cudaMalloc(&flush_, flush_bytes));
  }
  cudaStream_t stream() const { return stream_; }
  // One sample: flush the L2, then time one launch.
  double sample(Problem& problem, const void* kernel, int round) {
    BENCH_CUDA(cudaMemsetAsync(flush_, round & 0xff, flush_bytes, stream_));
    BENCH_CUDA(cudaEventRecord(start_, stream_));
    problem.launch(kernel, stream_);
    BENCH_CUDA(cudaGetLastError());
    BENCH_CUDA(cudaEventRecord(stop_, stream_));
    BENCH_CUDA(cudaEventSynchronize(stop_));
    float ms = 0;
    BENCH_CUDA(cudaEventElapsedTime(&ms, start_, stop_));
    return ms;
  }

private:
  static constexpr std::size_t flush_bytes = std::size_t(256) << 20;
  cudaStream_t stream_{};
  cudaEvent_t start_{}, stop_{};
  void* flush_ = nullptr;
};

inline bool run_check(Problem& problem, const void* kernel, cudaStream_t stream, std::string& why) {
  problem.clear_output();
  problem.launch(kernel, stream);
  BENCH_CUDA(cudaGetLastError());
  BENCH_CUDA(cudaStreamSynchronize(stream));
  return problem.check(why);
}

inline std::vector<Variant> load_variants(Problem& problem, const std::string& dir) {
  std::vector<std::string> names;
  if (DIR* d = opendir(dir.c_str())) {
    while (dirent* e = readdir(d)) {
      std::string n = e->d_name;
      if (n.size() > 6 && n.compare(n.size() - 6, 6, ".cubin") == 0) names.push_back(n);
    }
    closedir(d);
  } else {
    std::fprintf(stderr, "cannot read %s\n", dir.c_str());
    std::exit(2);
  }
  std::sort(names.begin(), names.end());
  std::vector<Variant> variants;
  for (const auto& n : names) {
    cudaLibrary_t library;
    cudaKernel_t kernel;
    std::string path = dir + "/" + n;
    BENCH_CUDA(cudaLibraryLoadFromFile(&library, path.c_str(), nullptr, nullptr, 0, nullptr, nullptr, 0));
    BENCH_CUDA(cudaLibraryGetKernel(&kernel, library, problem.kernel_name()));
    variants.push_back({n.substr(0, n.size() - 6), reinterpret_cast<const void*>(kernel)});
  }
  return variants;
}

// What one run is asked to do: the command line, or one request to a
// resident server.
struct Request {
  int samples = 50;
  bool check_only = false;
  bool no_check = false; // time without checking first (the tuner's --check request checks)
  std::string variants_dir;
  std::string cubin; // load the kernel from this cubin instead of the linked-in build
};

// Parses `args` into `request` (and, outside --serve, the seed and mode);
// on an unknown option says so in `error`.
inline bool parse_request(const std::vector<std::string>& args, Request& request, std::uint64_t* seed, bool* serve,
                          std::string& error) {
  for (std::size_t i = 0; i < args.size(); ++i) {
    const std::string& a = args[i];
    bool has_value = i + 1 < args.size();
    auto needs_value = [&] { error = a + " needs a value"; return false; };
    if (a == "--check") request.check_only = true;
    else if (a == "--no-check") request.no_check = true;
    else if (a == "--samples") { if (!has_value) return needs_value(); request.samples = std::max(1, std::atoi(args[++i].c_str())); }
    else if (a == "--variants") { if (!has_value) return needs_value(); request.variants_dir = args[++i]; }
    else if (a == "--cubin") { if (!has_value) return needs_value(); request.cubin = args[++i]; }
    else if (a == "--seed" && seed) { if (!has_value) return needs_value(); *seed = std::strtoull(args[++i].c_str(), nullptr, 10); }
    else if (a == "--serve" && serve) *serve = true;
    else {
      error = "unknown option " + a + "; usage: [--check | --no-check] [--samples N] [--cubin FILE | --variants DIR] [--seed N] [--serve]";
      return false;
    }
  }
  return true;
}

// One run: check every variant (the linked-in kernel, a --cubin, or every
// cubin of --variants), then time them. Prints results to stdout and
// problems to `diag`; returns the exit status (1: wrong answer, 2: bad input).
inline int run_request(Problem& problem, Timer& timer, const Request& request, std::uint64_t seed, FILE* diag) {
  std::vector<Variant> variants;
  cudaLibrary_t library = nullptr;
  if (!request.cubin.empty()) {
    cudaKernel_t kernel;
    if (cudaLibraryLoadFromFile(&library, request.cubin.c_str(), nullptr, nullptr, 0, nullptr, nullptr, 0) != cudaSuccess ||
        cudaLibraryGetKernel(&kernel, library, problem.kernel_name()) != cudaSuccess) {
      std::fprintf(diag, "cannot load %s from %s: %s\n", problem.kernel_name(), request.cubin.c_str(),
                   cudaGetErrorString(cudaGetLastError()));
      if (library) cudaLibraryUnload(library);
      return 2;
    }
    variants.push_back({"cubin", reinterpret_cast<const void*>(kernel)});
  } else if (!request.variants_dir.empty()) {
    variants = load_variants(problem, request.variants_dir);
  } else {
    variants.push_back({"builtin", problem.builtin_kernel()});
  }
  bool single = request.variants_dir.empty();
  auto done = [&](int status) {
    if (library) BENCH_CUDA(cudaLibraryUnload(library));
    return status;
  };

  std::vector<Variant> good;
  for (const auto& v : variants) {
    problem.prepare(v.kernel);
    std::string why;
    if (request.no_check || run_check(problem, v.kernel, timer.stream(), why)) {
      good.push_back(v);
      continue;
    }
    std::fprintf(diag, "WRONG ANSWER (%s): %s\n", v.config.c_str(), why.c_str());
    if (single) return done(1);
  }
  if (request.check_only) {
    std::printf("check: ok\n");
    return done(0);
  }

  // Warm up every build once more (clocks, instruction caches).
  for (const auto& v : good) timer.sample(problem, v.kernel, 0);

  std::vector<std::vector<double>> times(good.size());
  std::vector<std::size_t> order(good.size());
  for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::mt19937_64 shuffle(seed);
  for (int round = 0; round < request.samples; ++round) {
    std::shuffle(order.begin(), order.end(), shuffle);
    for (std::size_t i : order) times[i].push_back(timer.sample(problem, good[i].kernel, round + 1));
  }

  if (single) {
    double median = percentile(times[0], 0.5);
    double iqr = percentile(times[0], 0.75) - percentile(times[0], 0.25);
    std::printf("time_ms: %.6f\nnoise_pct: %.3f\nsamples: %d\n", median, 100.0 * iqr / median, request.samples);
    return done(0);
  }
  std::printf("config,sample,ms\n");
  for (std::size_t i = 0; i < good.size(); ++i)
    for (std::size_t s = 0; s < times[i].size(); ++s) std::printf("%s,%zu,%.6f\n", good[i].config.c_str(), s, times[i][s]);
  return done(0);
}

// --serve: the inputs are made once; then every request (`ciq-request: ID`,
// its options one per line, ended by an empty line) is one run, answered
// on stdout with its output and `ciq-status: ID N` (ciq-tuner
// --bench-server). A CUDA error still ends the process: the context is not
// trustworthy after one.
inline int serve(Problem& problem, Timer& timer, std::uint64_t seed) {
  static constexpr char k_request_prefix[] = "ciq-request: ";
  std::vector<std::string> args;
  std::string id;
  char line[4096];
  while (std::fgets(line, sizeof line, stdin)) {
    std::string word(line);
    if (!word.empty() && word.back() == '\n') word.pop_back();
    if (!word.empty() && args.empty() && id.empty() && word.rfind(k_request_prefix, 0) == 0) {
      id = word.substr(sizeof k_request_prefix - 1);
      continue;
    }
    if (!word.empty()) {
      args.push_back(word);
      continue;
    }
    if (id.empty()) { // a tuner from before request ids: it reads this status, and the reason
      std::printf("error: the request has no first line `ciq-request: ID`; use the ciq-tuner of this ciq\nciq-status: 2\n");
    } else {
      Request request;
      std::string error;
      int status = parse_request(args, request, nullptr, nullptr, error) ? run_request(problem, timer, request, seed, stdout) : 2;
      if (!error.empty()) std::printf("%s\n", error.c_str());
      std::printf("ciq-status: %s %d\n", id.c_str(), status);
    }
    std::fflush(stdout);
    args.clear();
    id.clear();
  }
  return 0;
}

inline int main(int argc, char** argv, Problem& problem) {
  Request request;
  bool serving = false;
  std::uint64_t seed = std::random_device{}() ^ (std::uint64_t(std::random_device{}()) << 32);
  std::string error;
  if (!parse_request(std::vector<std::string>(argv + 1, argv + argc), request, &seed, &serving, error)) {
    std::fprintf(stderr, "%s: %s\n", argv[0], error.c_str());
    return 2;
  }
  std::fprintf(stderr, "seed: %llu\n", static_cast<unsigned long long>(seed));
  Random rng(seed);
  problem.setup(rng);
  Timer timer;
  if (serving) return serve(problem, timer, seed);
  return run_request(problem, timer, request, seed, stderr);
}

} // namespace bench

#define BENCH_MAIN(ProblemType)                                                                    \
  int main(int argc, char** argv) {                                                                \
    ProblemType problem;                                                                           \
    return bench::main(argc, argv, problem);                                                       \
  }
