// After the search: is the winner really better than the default, and if
// so, write it to the cache under every key it was compiled for, with its
// provenance; if not, record that these kernels were tuned with no gain.
#pragma once

#include "tuner/measure/evaluator.h"
#include "tuner/orchestrate/run.h"

#include <string>
#include <vector>

namespace ciq::tuner {

struct Verdict {
  bool better = false;
  std::string how;                   // "deterministic", "welch"
  std::vector<double> default_values; // per objective: median of the re-measurement (as printed)
  std::vector<double> best_values;
  double p_value = 1;                // of the first benchmark objective
  std::string reason;                // why it is (not) better, for people
  std::string conditions;            // how the GPU's state differed between the sides ("" = alike, or unread)
};

/// Re-measures `best` against the default: deterministic objectives from
/// the search's own values; benchmark objectives `runs` times each,
/// interleaved, in fresh processes (rebuilding between runs unless the
/// build goes into {workdir}).
Verdict verify(Evaluator& evaluator, const SearchSpace& space, const EvalRecord& default_record,
               const EvalRecord& best_record, const TuneOptions& options);

/// Writes the records; returns the keys written (raw bytes).
Result<std::vector<Hash128>> ship(const SearchSpace& space, const EvalRecord& winner, const std::vector<TracedModule>& trace,
                 const Verdict& verdict, const TuneOptions& options, int evaluations, bool no_gain);

} // namespace ciq::tuner
