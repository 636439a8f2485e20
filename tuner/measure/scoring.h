// An evaluation's score: each objective's samples (the benchmark runs'
// values as measured, or what ptxas reported in the trace) and the value
// the search compares, the median of the runs on the first GPU's scale
// (gpu_baselines.h), negated for objectives to maximise.
#pragma once

#include "tuner/measure/gpu_baselines.h"
#include "tuner/objectives/objectives.h"

#include <string>
#include <vector>

namespace ciq::tuner {

/// Appends to `samples` (one list per objective) this evaluation's: each
/// benchmark objective gets its value from every run of `bench_values`
/// (per run, the benchmark objectives' values in order), in run order; any
/// other objective what ptxas reported in `trace` for the kernels of
/// `kernels` (the --kernels glob).
void record_samples(const std::vector<Objective>& objectives, const std::string& kernels,
                    const std::vector<TracedModule>& trace, const std::vector<std::vector<double>>& bench_values,
                    std::vector<std::vector<double>>& samples);

/// The value of each objective the search compares (smaller is better):
/// for a benchmark objective the median of its samples, each scaled to the
/// first GPU by `defaults` (run i ran on run_gpus[i]); otherwise the first
/// sample; NaN without samples; negated where the objective is maximised.
std::vector<double> objective_values(const std::vector<Objective>& objectives,
                                     const std::vector<std::vector<double>>& samples,
                                     const std::vector<std::string>& run_gpus, const std::vector<GpuDefault>& defaults);

} // namespace ciq::tuner
