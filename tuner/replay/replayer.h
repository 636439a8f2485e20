// The GPU side of a replay: one device's primary context, the captures'
// memory loaded once (a pristine copy of each allocation from its
// mem-<i>.bin, and a working copy the kernel runs on), the candidates'
// modules, and launches restored, flushed and timed one by one.
//
// A sample is: restore the working allocations from their pristine copies
// (cuMemcpyDtoDAsync: all of them at a request's first launch, then those
// the program's own launch wrote, by the capture's digests), flush L2 by writing a scratch buffer of twice its
// size (cuMemsetD8Async), then events around the launch alone
// (cuEventRecord, cuLaunchKernel, cuEventRecord). So each launch sees the
// captured inputs in DRAM, as the program's launch mostly did, and no
// restore or flush is in its time.
#pragma once

#include "tuner/formats/capture.h"
#include "tuner/replay/compare.h"
#include "utils/cuda_driver.h"
#include "utils/result.h"

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace ciq::replay {

/// Samples of one capture under one module.
struct Timing {
  std::vector<double> samples_ms;
  double median_ms = 0;
};

class Replayer {
public:
  /// Opens device `ordinal` (as this process sees it: after
  /// CUDA_VISIBLE_DEVICES) and loads every capture's memory. Fails ("cuda",
  /// "no-driver", "io") with the call, the device, the capture or file.
  static Result<std::unique_ptr<Replayer>> open(int ordinal, std::vector<formats::Capture> captures);
  ~Replayer();
  Replayer(const Replayer&) = delete;
  Replayer& operator=(const Replayer&) = delete;

  const std::vector<formats::Capture>& captures() const { return captures_; }
  /// "NVIDIA H100 80GB HBM3 (device 0, sm_90, L2 50 MiB)".
  const std::string& device_description() const { return description_; }

  /// A loaded module, by path: loaded again when the file changed (its
  /// size, mtime or inode), kept while among the last few used; `pinned`
  /// ones (the reference) stay loaded. Fails ("module") with the driver's
  /// error log, or naming a captured kernel the cubin lacks.
  struct Module;
  Result<Module*> load_module(const std::string& cubin, bool pinned = false);

  /// Replays capture `index` once with `module` and copies every
  /// allocation's bytes afterwards into `into` (one HostBytes per
  /// allocation). Buffers `into` already holds at the right sizes are
  /// reused, not made again: a new one is zero-filled, page by page, first
  /// (for llm.c's adamw, 4 captures of 1.9 GB, 7.6 GB per candidate's check).
  Result<void> outputs(std::size_t index, Module& module, std::vector<HostBytes>& into);

  /// `warmup` untimed launches, then samples until `samples` or
  /// `max_seconds` of wall time (at least one sample).
  Result<Timing> time(std::size_t index, Module& module, int warmup, int samples, double max_seconds);

  /// True once a launch failed in a way that leaves the context unusable
  /// (an illegal address, a trap): every later call fails too.
  bool broken() const { return broken_; }

private:
  struct Loaded;
  Replayer() = default;
  Result<void> restore(std::size_t index, bool all);  // all: every allocation; else those the program's launch wrote
  Result<void> launch(std::size_t index, Module& module);
  Result<void> check(const char* call, CUresult code);
  // Capture `c`'s allocations into device memory (pristine, from its
  // images, checked as they load, and a working copy) and its parameters
  // relocated to the working copies: one more entry of loaded_.
  Result<void> load(const formats::Capture& c);

  const CudaApi* api_ = nullptr;
  CUdevice device_ = 0;
  bool context_retained_ = false;
  CUcontext context_ = nullptr;
  CUstream stream_ = nullptr;
  CUevent start_ = nullptr, stop_ = nullptr;
  CUdeviceptr scratch_ = 0;
  std::size_t scratch_bytes_ = 0;
  std::string description_;
  std::vector<formats::Capture> captures_;
  std::vector<std::unique_ptr<Loaded>> loaded_;
  std::vector<std::unique_ptr<Module>> modules_;
  std::uint64_t module_clock_ = 0;
  bool broken_ = false;
};

} // namespace ciq::replay
