// Occupancy probes: per-kernel register limits worth measuring first.
// A kernel's time often jumps where its register count crosses a limit at
// which one more (or one fewer) block fits on an SM, and a random draw over
// maxnreg 16..255 rarely lands on those few values within a small budget.
// From the discovery trace (registers, the block size the PTX declares, the
// target) the first generation gets, per kernel, the limit that fits one
// more block per SM (unless its static shared memory leaves no room for
// one) and the one that gives each thread about twice the registers at
// half the blocks. They are ordinary candidates: measured,
// verified and shipped (or not) like any other.
#pragma once

#include "tuner/search/candidate.h"
#include "tuner/objectives/objectives.h"

#include <string>
#include <string_view>
#include <vector>

namespace ciq::tuner {

struct SmLimits {
  int registers = 65536;   // per SM
  int warps = 64;          // resident warps per SM
  int blocks = 32;         // resident blocks per SM
  long shared = 233472;    // shared memory per SM, bytes
  long shared_reserved = 1024; // the runtime's share per block
};

/// Blocks per SM that a kernel's static shared memory allows (`sm.blocks`
/// when it uses none; dynamic shared memory is not in the trace).
int shared_memory_blocks(const SmLimits& sm, double shared_bytes);

/// The per-SM limits of an `sm_XY[a|f]` target; unknown targets get the
/// sm_90 ones.
SmLimits sm_limits(std::string_view target);

/// Registers per thread (a multiple of 8, at most 255) at which `blocks`
/// blocks of `warps_per_block` warps fit on one SM; 0 when they cannot.
int register_limit(const SmLimits& sm, int warps_per_block, int blocks);

struct OccupancyProbe {
  std::string kernel;
  int maxnreg = 0;
  std::string why; // "2 blocks of 256 threads per SM, now 1"
};

/// The probes for one kernel: none when ptxas reported no registers.
std::vector<OccupancyProbe> kernel_probes(const TracedKernel& kernel, const SmLimits& sm);

struct OccupancySeed {
  Candidate candidate;
  OccupancyProbe probe;
};

/// Probes of the traced kernels that `space` has a maxnreg directive for,
/// most registers first, at most `max`, as candidates that set only that
/// kernel's maxnreg.
std::vector<OccupancySeed> occupancy_seeds(const std::vector<TracedModule>& trace, const SearchSpace& space,
                                           std::size_t max);

} // namespace ciq::tuner
