// Whether the best found is really better than the default: the winner
// pruned to the knobs that earn their place, the front ordered (the
// preferred point first), and each candidate of it re-measured against the
// default (interleaved, fresh processes, Welch's t-test; deterministic
// objectives from the search's own values) until one is significantly
// better by at least --min-effect. The GPU's conditions on both sides are
// compared: a difference that may be the GPU's is not shipped.
#pragma once

#include "tuner/measure/evaluator.h"
#include "tuner/run/options.h"
#include "tuner/run/progress.h"
#include "tuner/search/search.h"

#include <cmath>
#include <optional>
#include <string>
#include <vector>

namespace ciq::tuner {

/// How a verdict was reached.
enum class VerifyMethod {
  none,          // nothing was verified (the default was the best found, or re-measuring failed before a test)
  deterministic, // deterministic objectives only: the search's values compared
  welch,         // benchmark objectives re-measured and compared with Welch's t-test
};

/// "deterministic", "welch"; "" for none (the cache's provenance says it).
std::string method_name(VerifyMethod method);

struct Verdict {
  bool better = false;
  VerifyMethod method = VerifyMethod::none;
  std::vector<double> default_values; // per objective: median of the re-measurement (as printed)
  std::vector<double> best_values;
  double p_value = 1;                // of the first benchmark objective
  std::string reason;                // why it is (not) better, for people
  std::string conditions;            // how the GPU's state differed between the sides ("" = alike, or unread)
  bool measured = true;              // false: re-measuring failed (`reason` says why); the values say nothing
  // kernel-time: how the other kernels of the timed kernels' modules fared
  // ("" when not timed, or when they did not outweigh the gain): a winner
  // that slows them by more than it gains is not better.
  std::string collateral;
};

/// How the GPU's state differed between the default's runs (states[0]) and
/// the winner's (states[1]): slow-down reasons (power cap, thermal, ...)
/// seen on one side only, or SM clocks whose medians differ by more than
/// 2 %. "" when alike or not read.
std::string compare_conditions(const std::vector<GpuState> (&states)[2]);

/// Re-measures `best` against the default: deterministic objectives from
/// the search's own values; benchmark objectives `options.verify_runs`
/// times each, interleaved, in fresh processes (rebuilding between runs
/// unless the build goes into {workdir}); every value in verify/samples.csv.
Verdict verify(Evaluator& evaluator, const SearchSpace& space, const EvalRecord& default_record, const EvalRecord& best_record,
               const TuneOptions& options);

/// One kernel's part of a --separately verification.
struct PartVerdict {
  std::string kernel;
  bool better = false;                   // its part wins by its own time
  double default_ms = NAN, best_ms = NAN; // medians of its own time in the verification's runs
  std::optional<double> p_value;         // Welch's test on its own samples; none when not judged
  std::string reason;                    // why it is (not) better, for people
};

/// --separately: re-measures `composed` (each kernel's best part) against
/// the default as verify() does (interleaved, fresh processes, one GPU) and
/// judges each of `kernels` by its own samples (Welch's t-test and
/// --min-effect, as verify() judges an objective); `parts` gets a verdict
/// per kernel, in order. The verdict returned holds the summed objective's
/// values and p-value, and is `better` when some kernel's part is (never
/// under different GPU conditions). Every run's kernel times land in
/// verify/kernel_samples.csv.
Verdict verify_parts(Evaluator& evaluator, const SearchSpace& space, const EvalRecord& default_record, const Candidate& composed,
                     const std::vector<std::string>& kernels, const TuneOptions& options, std::vector<PartVerdict>& parts);

/// Drops every knob of a single best that does not earn its place (a tie
/// on spills must not ship an -O0 along with it); measured objectives allow
/// a quarter of the minimum effect for noise. The pruned candidate, when it
/// differs, becomes `result`'s best: it is what gets verified.
void prune_winner(const TuneOptions& o, const SearchSpace& space, Evaluator& evaluator, const EvaluateBatch& batch,
                  Progress& progress, SearchResult& result);

/// The best evaluations (one, or the Pareto front with several
/// objectives), the preferred point (preferred_point: the best preferred
/// objective that gives up no other) first: it is "the best" of the log,
/// summary.json and the report, and the first one verified. Printed when
/// there are several.
std::vector<const EvalRecord*> pareto_front(const TuneOptions& o, const SearchSpace& space, const Evaluator& evaluator,
                                            const SearchResult& result, const EvalRecord& def);

/// Verifies the front's candidates against the default, best first (at
/// most four), until one is significantly better: that one is `*winner`.
/// When none is, the verdict is the preferred point's.
Verdict verify_front(const TuneOptions& o, Evaluator& evaluator, const SearchSpace& space, const EvalRecord& def,
                     const std::vector<const EvalRecord*>& front, const EvalRecord** winner);

} // namespace ciq::tuner
