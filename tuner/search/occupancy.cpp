#include "tuner/search/occupancy.h"

#include <algorithm>
#include <cstdlib>

namespace ciq::tuner {

SmLimits sm_limits(std::string_view target) {
  SmLimits sm;
  if (target.substr(0, 3) != "sm_") return sm;
  int arch = std::atoi(std::string(target.substr(3)).c_str());
  if (arch == 75) {
    sm.warps = 32;
    sm.blocks = 16;
    sm.shared = 65536;
    sm.shared_reserved = 0;
  } else if (arch == 80) {
    sm.shared = 167936;
  } else if (arch == 86 || arch == 87) {
    sm.warps = 48;
    sm.blocks = 16;
    sm.shared = 102400;
  } else if (arch == 89) {
    sm.warps = 48;
    sm.blocks = 24;
    sm.shared = 102400;
  } else if (arch == 120 || arch == 121) {
    sm.warps = 48;
    sm.blocks = 24; // ptxas 13.0 ignores minnctapersm above 24 here
    sm.shared = 102400;
  } else if (arch == 110) {
    sm.warps = 48; // ptxas 13.0: 128 x 13 threads per SM are out of range, 24 blocks the most
    sm.blocks = 24;
  }
  return sm;
}

int shared_memory_blocks(const SmLimits& sm, double shared_bytes) {
  if (shared_bytes <= 0) return sm.blocks;
  long per_block = long(shared_bytes) + sm.shared_reserved;
  return int(std::min<long>(sm.blocks, sm.shared / per_block));
}

int register_limit(const SmLimits& sm, int warps_per_block, int blocks) {
  if (warps_per_block <= 0 || blocks <= 0 || blocks > sm.blocks || blocks * warps_per_block > sm.warps) return 0;
  // Registers are allocated per warp in units of 256: 8 per thread.
  int per_thread = sm.registers / (blocks * warps_per_block * 32) / 8 * 8;
  return std::min(per_thread, 255);
}

std::vector<OccupancyProbe> kernel_probes(const TracedKernel& kernel, const SmLimits& sm) {
  std::vector<OccupancyProbe> probes;
  int used = int(kernel.registers);
  if (used <= 0) return probes;
  int allocated = (used + 7) / 8 * 8;
  auto add = [&](int limit, std::string why) {
    if (limit < 16 || limit == allocated) return;
    for (const auto& p : probes)
      if (p.maxnreg == limit) return;
    probes.push_back({kernel.name, limit, std::move(why)});
  };
  if (kernel.block_threads > 0) {
    int warps = int((kernel.block_threads + 31) / 32);
    int now = 0;
    while (register_limit(sm, warps, now + 1) >= allocated) ++now;
    std::string threads = " of " + std::to_string(kernel.block_threads) + " threads";
    std::string now_text = " per SM, now " + std::to_string(now);
    // Registers cannot buy a block that shared memory does not allow.
    int more = now + 1 <= shared_memory_blocks(sm, kernel.shared) ? register_limit(sm, warps, now + 1) : 0;
    if (more > 0) add(more, std::to_string(now + 1) + " blocks" + threads + now_text);
    if (now >= 2) add(register_limit(sm, warps, now / 2), std::to_string(now / 2) + " blocks" + threads + now_text);
    return probes;
  }
  // The block size is not declared: the limits at which whole warps fit
  // (as if the SM's warps were one block).
  std::vector<int> levels;
  for (int warps : {8, 12, 16, 20, 24, 32, 40, 48, 64})
    if (int level = register_limit(sm, warps, 1)) levels.push_back(level);
  for (int level : levels)
    if (level < allocated) {
      add(level, std::to_string(sm.registers / (level * 32)) + " warps per SM (block size not declared)");
      break;
    }
  for (auto it = levels.rbegin(); it != levels.rend(); ++it)
    if (*it >= 2 * allocated) {
      add(*it, std::to_string(sm.registers / (*it * 32)) + " warps per SM (block size not declared)");
      break;
    }
  return probes;
}

std::vector<OccupancySeed> occupancy_seeds(const std::vector<TracedModule>& trace, const SearchSpace& space,
                                           std::size_t max) {
  struct Found {
    double registers;
    OccupancySeed seed;
  };
  std::vector<Found> found;
  for (const auto& module : trace)
    for (const auto& kernel : module.kernels) {
      std::size_t index = space.find(DimensionKind::directive, "maxnreg", kernel.name);
      if (index == space.dimensions.size()) continue;
      const Dimension* dim = &space.dimensions[index];
      for (auto& probe : kernel_probes(kernel, sm_limits(module.target))) {
        // The dimension may hold a grid of values: the largest not above the
        // limit still fits the blocks.
        int chosen = -1, chosen_value = 0;
        for (std::size_t v = 0; v < dim->values.size(); ++v) {
          int value = std::atoi(dim->values[v].c_str());
          if (value <= probe.maxnreg && value > chosen_value) {
            chosen = int(v);
            chosen_value = value;
          }
        }
        if (chosen < 0) continue;
        probe.maxnreg = chosen_value;
        Candidate c = space.default_candidate();
        c.genes[index] = chosen;
        bool duplicate = false;
        for (const auto& f : found) duplicate = duplicate || f.seed.candidate == c;
        if (!duplicate) found.push_back({kernel.registers, {std::move(c), std::move(probe)}});
      }
    }
  std::stable_sort(found.begin(), found.end(), [](const Found& a, const Found& b) { return a.registers > b.registers; });
  std::vector<OccupancySeed> seeds;
  for (auto& f : found)
    if (seeds.size() < max) seeds.push_back(std::move(f.seed));
  return seeds;
}

} // namespace ciq::tuner
