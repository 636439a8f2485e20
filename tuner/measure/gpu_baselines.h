// Per-GPU baselines: with several GPUs and a benchmark, the default runs
// --repeats times on each, and every later run's value is scaled by
// (the default on the first GPU) / (the default on the GPU it ran on), so
// that a candidate is compared with the default of the GPU it ran on, not
// with a GPU that happens to be faster. The arithmetic lives here; the
// Evaluator (evaluator.h) decides when to learn the defaults and runs them.
#pragma once

#include "tuner/measure/setup.h"
#include "tuner/rundir/journal.h"

#include <cstddef>
#include <string>
#include <vector>

namespace ciq::tuner {

/// The default as measured on one GPU.
struct GpuDefault {
  std::string gpu;
  std::vector<double> values; // per objective, the median of its runs there; NaN for compile-time objectives
  int runs = 0;
};

/// Whether a run uses per-GPU baselines: asked for (setup.gpu_baselines),
/// no replay, more than one slot that the tuner places runs on itself (not
/// a scheduler), and some objective needs the benchmark.
bool per_gpu_baselines_apply(const TuningSetup& setup, std::size_t slots, bool scheduler_places_runs);

/// The defaults learnt from a record, or why none were.
struct LearntDefaults {
  std::vector<GpuDefault> defaults; // one per slot, in the slots' order; empty when `warning` is set
  std::string warning;              // "" or why each run is compared with one default instead (for the user)
};

/// The default on each of `slots`, from the default's record: the median of
/// its samples (per benchmark objective) that `def.run_gpus` places on that
/// slot. None, with a warning, when a slot has no run (a journal of a run
/// with other --gpus) or a value that cannot scale (not > 0).
LearntDefaults learn_gpu_defaults(const std::vector<Objective>& objectives, const std::vector<std::string>& slots,
                                  const EvalRecord& def);

/// `value` of objective `k`, measured on `gpu`, on the first GPU's scale:
/// value * (default on the first) / (default on `gpu`). Unchanged with
/// fewer than two defaults, for a GPU without one, or where either default
/// is not finite or that of `gpu` is 0.
double scale_to_first_gpu(const std::vector<GpuDefault>& defaults, double value, const std::string& gpu, std::size_t k);

} // namespace ciq::tuner
