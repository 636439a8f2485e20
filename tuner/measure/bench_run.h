// One benchmark run of what a candidate's build made: a GPU slot taken
// from the pool (gpu_pool.h), the run's kernels timed into a folder of its
// own (kernel-time objectives, libciq-inject), the GPU's state and energy
// read through NVML while it lasts, a fresh resident benchmark asked again
// (its start-up is in the first answer), and the value of every benchmark
// objective taken from what the run printed, timed or used.
#pragma once

#include "tuner/measure/gpu_monitor.h"
#include "tuner/measure/gpu_pool.h"
#include "tuner/measure/step.h"
#include "tuner/objectives/objectives.h"
#include "tuner/formats/kernel_trace.h"

#include <map>
#include <string>
#include <vector>

namespace ciq::tuner {

/// One benchmark run's placement and what the GPU did meanwhile.
struct BenchRun {
  std::string gpu;      // in: the slot to run on ("" = the first free one); out: the slot it ran on
  GpuState state;       // out: what the GPU ran under (gpu_monitor.h; unread without NVML)
  double gpu_wait = 0;  // out: seconds spent waiting for the slot
  // out: with setup.own_kernels, each of those kernels' time in ms in this
  // run (summed over its launches and the run's processes); a kernel that
  // did not run is absent.
  std::map<std::string, double> kernel_ms;
  // out: with setup.module_mates, their time in this run summed, in ms;
  // negative when not timed.
  double mates_ms = -1;
};

/// Runs --bench once for `c` in `workdir` on `run.gpu` (or the first free
/// slot of `gpus`): the value of every benchmark objective, in the
/// objectives' order, as measured (not negated, not scaled to a baseline).
/// Fails with the code "bench", "timeout", "no-energy" or an objective's,
/// and a message for the candidate's reason.
Result<std::vector<double>> run_benchmark(const StepRunner& steps, GpuPool& gpus, const ResolvedCandidate& c,
                                          const std::string& workdir, BenchRun& run);

/// The time in ms of each kernel of `names` in `kernels` (by its mangled
/// or demangled name, exactly), summed over its launches and processes;
/// kernels that did not run are absent.
std::map<std::string, double> own_kernel_times(const std::vector<std::string>& names, const formats::KernelTrace& kernels);

/// What a finished run measured, for the benchmark objectives of
/// `objectives` in order: energy or power from `state`, kernel time from
/// `kernels` (read from `kernels_dir`; required when an objective is
/// kernel-time), a metric from `output`. `log` and `gpu` name the run in
/// the errors: no energy reading, a counter that did not move, a kernel or
/// metric missing. With `reference` (the default's first run's launches),
/// kernels that ran another number of times are scored at those launches
/// (kernel_time_ms()), and said so on stderr once per kernel.
Result<std::vector<double>> benchmark_values(const std::vector<Objective>& objectives, const std::string& output,
                                             const std::string& log, const GpuState& state,
                                             const formats::KernelTrace* kernels, const std::string& kernels_dir,
                                             const std::string& gpu, const LaunchCounts* reference = nullptr);

/// How far an energy figure of a run of `seconds` can be off, in percent:
/// NVML's energy counter moves every 100 ms (measured on an H100 and an
/// H200), so a run is read to within about +-0.1 s of its power.
double energy_uncertainty_percent(double seconds);

} // namespace ciq::tuner
