// The interleaved re-measurement that every verification decides by: the
// default and the winner run in pairs (A B A B ..., so that drift hits
// both alike) on one GPU, compared by Welch's t-test and the relative gain
// of the medians, with a group-sequential early stop; and, with
// kernel-time, the winner's cost to its module-mates. verify.cpp turns
// what these measure into a Verdict.
#pragma once

#include "tuner/measure/evaluator.h"
#include "tuner/run/options.h"

#include <map>
#include <string>
#include <vector>

namespace ciq::tuner {

// The winner's values against the default's, in minimisation form (lower
// is better): Welch's t-test and the relative gain of the medians. What
// every verification decides by, at --alpha or at the early boundary.
struct Difference {
  double p_less = 1;  // one-sided: the winner's values are lower
  double effect = 0;  // (median(default) - median(winner)) / |median(default)|; 0 when that is 0
  bool better(double p, double min_effect) const { return p_less < p && effect >= min_effect; }
  bool worse(double p, double min_effect) const { return 1 - p_less < p && -effect >= min_effect; }
};

/// The two sides' values compared as they are (lower is better).
Difference difference(const std::vector<double>& def, const std::vector<double>& winner);
/// An objective's values compared, made minimisation form first (an
/// objective that is maximised, negated).
Difference difference(const Objective& objective, std::vector<double> def, std::vector<double> winner);

/// Each timed kernel's own time per run (--separately), by kernel.
using OwnSamples = std::map<std::string, std::vector<double>>;

/// Re-measures the default and the winner in interleaved pairs into `a`
/// and `b`, per objective (--verify-runs pairs, fewer when every benchmark
/// objective is settled early), with the GPU's state of each run in
/// `states` and, with kernel-time, the module-mates' time in `mates`; every
/// value into verify/samples.csv. With `own` (--separately), each run's own
/// time of every timed kernel too, per side, into verify/kernel_samples.csv.
/// Why it could not, or "".
std::string remeasure(Evaluator& evaluator, const SearchSpace& space, const EvalRecord& def, const EvalRecord& best,
                      const TuneOptions& options, std::vector<std::vector<double>>& a, std::vector<std::vector<double>>& b,
                      std::vector<GpuState> (&states)[2], std::vector<double> (&mates)[2], OwnSamples (*own)[2] = nullptr);

/// kernel-time: whether the winner slows the other kernels of its modules
/// by more than it gains (a module-wide option acts on every kernel of the
/// module; measured on an H100, llm.c: `opt-level=1` made its target 19 %
/// faster and the module's 26 kernels together 6 % slower). Each run's
/// timed kernels and those others summed, compared as the objective is;
/// significantly worse: what to say; else "".
std::string collateral(const TuneOptions& options, const std::vector<std::vector<double>>& a,
                       const std::vector<std::vector<double>>& b, const std::vector<double> (&mates)[2]);

} // namespace ciq::tuner
