#include "tuner/run/kernel_parts.h"

#include "tuner/objectives/statistics.h"

#include <cmath>
#include <map>

namespace ciq::tuner {

namespace {

// The part's genes in `c`, as a key for grouping runs.
std::vector<std::optional<int>> genes_of(const KernelPart& part, const Candidate& c) {
  std::vector<std::optional<int>> out;
  for (std::size_t d : part.dims) out.push_back(c.genes[d]);
  return out;
}

int set_count(const std::vector<std::optional<int>>& genes) {
  int n = 0;
  for (const auto& g : genes) n += g.has_value();
  return n;
}

} // namespace

std::vector<KernelPart> kernel_parts(const SearchSpace& space, const std::vector<std::string>& kernels) {
  std::vector<KernelPart> parts;
  for (const auto& kernel : kernels) {
    KernelPart p;
    p.kernel = kernel;
    for (std::size_t d = 0; d < space.dimensions.size(); ++d)
      if (space.dimensions[d].kind == DimensionKind::directive && space.dimensions[d].kernel == kernel) p.dims.push_back(d);
    p.best = space.default_candidate();
    p.default_ms = p.best_ms = NAN;
    parts.push_back(std::move(p));
  }
  return parts;
}

void find_best_parts(const SearchSpace& space, const std::vector<EvalRecord>& records, std::vector<KernelPart>& parts) {
  for (auto& part : parts) {
    // Per setting of the part: that kernel's samples in every run that carried it.
    std::map<std::vector<std::optional<int>>, std::vector<double>> samples;
    for (const auto& r : records) {
      if (!r.evaluation.valid) continue;
      auto it = r.kernel_samples.find(part.kernel);
      if (it == r.kernel_samples.end() || it->second.empty()) continue;
      auto c = space.parse(r.candidate);
      if (!c) continue;
      auto& mine = samples[genes_of(part, *c)];
      mine.insert(mine.end(), it->second.begin(), it->second.end());
    }
    part.parts = int(samples.size());
    std::vector<std::optional<int>> none(part.dims.size());
    Candidate best = space.default_candidate();
    part.best = best;
    part.default_ms = part.best_ms = NAN;
    if (auto it = samples.find(none); it != samples.end()) part.default_ms = part.best_ms = median(it->second);
    // The lowest time; on a tie the part that sets fewer knobs (the default sets none).
    const std::vector<std::optional<int>>* chosen = nullptr;
    int chosen_knobs = 0;
    for (const auto& [genes, values] : samples) {
      double ms = median(values);
      int knobs = set_count(genes);
      if (chosen && !(ms < part.best_ms || (ms == part.best_ms && knobs < chosen_knobs))) continue;
      part.best_ms = ms;
      chosen = &genes;
      chosen_knobs = knobs;
    }
    if (chosen)
      for (std::size_t i = 0; i < part.dims.size(); ++i) part.best.genes[part.dims[i]] = (*chosen)[i];
  }
}

Candidate compose_parts(const SearchSpace& space, const std::vector<KernelPart>& parts, const std::vector<bool>* keep) {
  Candidate c = space.default_candidate();
  for (std::size_t p = 0; p < parts.size(); ++p) {
    if (keep && !(*keep)[p]) continue;
    for (std::size_t d : parts[p].dims) c.genes[d] = parts[p].best.genes[d];
  }
  return c;
}

std::string part_text(const SearchSpace& space, const KernelPart& part, const Candidate& c) {
  Candidate only = space.default_candidate();
  for (std::size_t d : part.dims) only.genes[d] = c.genes[d];
  return space.canonical(only);
}

} // namespace ciq::tuner
