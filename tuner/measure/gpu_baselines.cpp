#include "tuner/measure/gpu_baselines.h"

#include "tuner/objectives/statistics.h"
#include "utils/text.h"

#include <algorithm>
#include <cmath>

namespace ciq::tuner {

bool per_gpu_baselines_apply(const TuningSetup& setup, std::size_t slots, bool scheduler_places_runs) {
  return setup.gpu_baselines && !setup.replay && slots > 1 && !scheduler_places_runs &&
         std::any_of(setup.objectives.begin(), setup.objectives.end(), [](auto& o) { return o.needs_benchmark(); });
}

LearntDefaults learn_gpu_defaults(const std::vector<Objective>& objectives, const std::vector<std::string>& slots,
                                  const EvalRecord& def) {
  LearntDefaults learnt;
  for (const auto& gpu : slots) {
    GpuDefault d{gpu, std::vector<double>(objectives.size(), NAN), 0};
    for (std::size_t k = 0; k < objectives.size(); ++k) {
      if (!objectives[k].needs_benchmark()) continue;
      std::vector<double> there;
      for (std::size_t i = 0; i < def.run_gpus.size() && k < def.samples.size() && i < def.samples[k].size(); ++i)
        if (def.run_gpus[i] == gpu) there.push_back(def.samples[k][i]);
      d.runs = int(there.size());
      if (!there.empty()) d.values[k] = median(there);
    }
    for (std::size_t k = 0; k < d.values.size(); ++k)
      if (objectives[k].needs_benchmark() && !(d.values[k] > 0) && d.runs > 0)
        return {{}, "the default's " + objectives[k].name + " on GPU '" + gpu + "' is " + format_number(d.values[k]) +
                        ", which cannot scale other runs: each run is compared with one default, not with its own GPU's"};
    if (d.runs == 0) // a journal from a run with other --gpus: its default says nothing of this one
      return {{}, "the journal's default was not measured on GPU '" + gpu + "': each run is compared with one default, "
                  "not with its own GPU's (start a new run for per-GPU baselines)"};
    learnt.defaults.push_back(std::move(d));
  }
  return learnt;
}

double scale_to_first_gpu(const std::vector<GpuDefault>& defaults, double value, const std::string& gpu, std::size_t k) {
  if (defaults.size() < 2) return value;
  double reference = defaults.front().values[k];
  for (const auto& d : defaults)
    if (d.gpu == gpu) {
      double here = d.values[k];
      if (!std::isfinite(here) || !std::isfinite(reference) || here == 0) return value;
      return value * (reference / here);
    }
  return value;
}

} // namespace ciq::tuner
