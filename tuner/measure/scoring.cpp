#include "tuner/measure/scoring.h"

#include "tuner/objectives/statistics.h"

#include <algorithm>
#include <cmath>

namespace ciq::tuner {

void record_samples(const std::vector<Objective>& objectives, const std::string& kernels,
                    const std::vector<TracedModule>& trace, const std::vector<std::vector<double>>& bench_values,
                    std::vector<std::vector<double>>& samples) {
  samples.resize(std::max(samples.size(), objectives.size()));
  std::size_t metric = 0;
  for (std::size_t k = 0; k < objectives.size(); ++k) {
    if (objectives[k].needs_benchmark()) {
      for (const auto& run : bench_values) samples[k].push_back(run[metric]);
      ++metric;
    } else {
      samples[k].push_back(trace_objective(objectives[k], trace, kernels));
    }
  }
}

std::vector<double> objective_values(const std::vector<Objective>& objectives,
                                     const std::vector<std::vector<double>>& samples,
                                     const std::vector<std::string>& run_gpus, const std::vector<GpuDefault>& defaults) {
  std::vector<double> values;
  for (std::size_t k = 0; k < objectives.size(); ++k) {
    const Objective& o = objectives[k];
    const std::vector<double> none;
    const std::vector<double>& mine = k < samples.size() ? samples[k] : none;
    double value = mine.empty() ? NAN : mine.front();
    if (o.needs_benchmark()) {
      std::vector<double> scaled;
      for (std::size_t i = 0; i < mine.size(); ++i)
        scaled.push_back(scale_to_first_gpu(defaults, mine[i], i < run_gpus.size() ? run_gpus[i] : "", k));
      value = median(scaled);
    }
    values.push_back(o.maximize ? -value : value);
  }
  return values;
}

} // namespace ciq::tuner
