// `ciq-tuner run --separately`: several targeted kernels tuned in the same
// program runs. A candidate is then the union of one part per kernel (the
// dimensions that act on that kernel alone: its directives), and each
// program run times every kernel on its own (EvalRecord::kernel_samples).
// The search is one search per kernel in lockstep (search/lockstep.h), each
// scored by its own kernel's time, whose i-th candidates make one program
// run. Afterwards each kernel's best part is the part with the lowest time
// of THAT kernel over every run that carried it, whatever the other parts
// of those runs were. The composition of the best parts is verified
// against the default (verify.h: verify_parts), each kernel by its own
// samples; a part that does not win goes back to the default.
#pragma once

#include "tuner/rundir/journal.h"
#include "tuner/search/candidate.h"

#include <cstddef>
#include <string>
#include <vector>

namespace ciq::tuner {

/// One targeted kernel's part of the candidates, and what was found for it.
struct KernelPart {
  std::string kernel;
  std::vector<std::size_t> dims; // its dimensions in the space
  Candidate best;                // the default candidate with this part set to its best (the default when none beat it)
  double default_ms = 0;         // median of its own time over the runs with its part at the default (NaN: none)
  double best_ms = 0;            // ... with its part at the best (NaN: none)
  int parts = 0;                 // distinct parts of it measured
};

/// The part of each kernel of `kernels` in `space`: its directive
/// dimensions (a kernel without any has none, and always stays default).
std::vector<KernelPart> kernel_parts(const SearchSpace& space, const std::vector<std::string>& kernels);

/// Each part's best from the valid records' own times of its kernel: per
/// distinct setting of the part, the median of that kernel's samples in all
/// runs that carried it; the lowest wins, ties going to the part that sets
/// fewer knobs (and to the default). Sets `best`, `default_ms`, `best_ms`
/// and `parts`.
void find_best_parts(const SearchSpace& space, const std::vector<EvalRecord>& records, std::vector<KernelPart>& parts);

/// The candidate that gives each kernel of `parts` its best part (those of
/// `keep` only, when given: the others stay at the default).
Candidate compose_parts(const SearchSpace& space, const std::vector<KernelPart>& parts, const std::vector<bool>* keep = nullptr);

/// The canonical text of `part`'s setting in `c` alone ("default" when it
/// sets none): how the summary names a kernel's controls.
std::string part_text(const SearchSpace& space, const KernelPart& part, const Candidate& c);

} // namespace ciq::tuner
