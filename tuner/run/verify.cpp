#include "tuner/run/verify.h"

#include "tuner/run/verify_pairs.h"

#include "tuner/measure/gpu_monitor.h"
#include "tuner/objectives/statistics.h"
#include "utils/files.h"
#include "utils/text.h"

#include <algorithm>
#include <map>
#include <cmath>
#include <cstdio>
#include <unistd.h>

namespace ciq::tuner {

namespace {

// The benchmark (noisy) objectives compared: Welch's t-test on the
// re-measured values (compile-time's from the search's samples), in
// minimisation form. Sets the verdict's values, p-value and conditions;
// `better`/`worse`: some objective is significantly so, by the minimum
// effect; `first_effect`: the first one's relative gain. False (and the
// reason set) when re-measuring failed.
bool compare_noisy(Evaluator& evaluator, const SearchSpace& space, const EvalRecord& def, const EvalRecord& best,
                   const TuneOptions& options, const std::vector<std::size_t>& noisy, Verdict& v, bool& better, bool& worse,
                   double& first_effect, OwnSamples (*own)[2] = nullptr) {
  const auto& objectives = options.setup.objectives;
  std::vector<std::vector<double>> a(objectives.size()), b(objectives.size());
  std::vector<GpuState> states[2];
  std::vector<double> mates[2];
  if (auto why = remeasure(evaluator, space, def, best, options, a, b, states, mates, own); !why.empty()) {
    v.reason = why;
    return false;
  }
  v.conditions = compare_conditions(states);
  v.collateral = collateral(options, a, b, mates);
  bool first = true;
  for (auto k : noisy) {
    if (!objectives[k].needs_benchmark()) { // compile-time: use the search's samples
      a[k] = def.samples[k];
      b[k] = best.samples[k];
    }
    v.default_values[k] = median(a[k]);
    v.best_values[k] = median(b[k]);
    Difference d = difference(objectives[k], a[k], b[k]);
    if (first) v.p_value = d.p_less, first_effect = d.effect;
    first = false;
    if (d.better(options.alpha, options.min_effect)) better = true;
    if (d.worse(options.alpha, options.min_effect)) worse = true;
  }
  return true;
}

// The verdict's reason, for people, once `v.better` is known.
std::string verdict_reason(const Verdict& v, bool any_worse, double first_effect, const TuneOptions& options) {
  std::string reason;
  if (v.better) reason = "better than the default";
  else if (any_worse) reason = "worse than the default on at least one objective";
  else if (v.method == VerifyMethod::welch && v.p_value < options.alpha && first_effect > 0)
    reason = "better than the default by only " + format_number(std::round(first_effect * 1000) / 10) +
             " %, less than the minimum effect of " + format_number(options.min_effect * 100) + " % (p = " +
             format_number(v.p_value) + ")";
  else reason = "not significantly better than the default (p = " + format_number(v.p_value) + ", minimum effect " +
                format_number(options.min_effect * 100) + " %)";
  if (!v.better && !v.conditions.empty()) reason += "; note: the two ran under different GPU conditions (" + v.conditions + ")";
  return reason;
}

} // namespace

std::string method_name(VerifyMethod method) {
  switch (method) {
  case VerifyMethod::none: return "";
  case VerifyMethod::deterministic: return "deterministic";
  case VerifyMethod::welch: return "welch";
  }
  return "";
}

// How the GPU's state differed between the default's runs and the
// winner's: slow-down reasons (power cap, thermal, ...) seen on one side
// only, or SM clocks whose medians differ by more than 2 %. "" when alike
// or not read.
std::string compare_conditions(const std::vector<GpuState> (&states)[2]) {
  if (states[0].empty() || states[1].empty()) return "";
  std::uint64_t reasons[2] = {0, 0};
  std::vector<double> clocks[2];
  for (int side = 0; side < 2; ++side)
    for (const auto& s : states[side]) {
      reasons[side] |= slowdown_reasons(s.reasons);
      clocks[side].push_back(s.sm_mhz_min);
    }
  std::string out;
  if (reasons[0] != reasons[1]) {
    auto names = [](std::uint64_t r) { return r ? clock_event_names(r) : std::string("none"); };
    out = "clock slow-downs: default " + names(reasons[0]) + ", winner " + names(reasons[1]);
  }
  double c0 = median(clocks[0]), c1 = median(clocks[1]);
  if (c0 > 0 && c1 > 0 && std::fabs(c0 - c1) / c0 > 0.02)
    out += (out.empty() ? "" : "; ") + std::string("lowest SM clock (median of runs): default ") + format_number(c0) +
           " MHz, winner " + format_number(c1) + " MHz";
  return out;
}

Verdict verify(Evaluator& evaluator, const SearchSpace& space, const EvalRecord& def, const EvalRecord& best,
               const TuneOptions& options) {
  Verdict v;
  const auto& objectives = options.setup.objectives;
  std::vector<std::size_t> noisy;
  for (std::size_t k = 0; k < objectives.size(); ++k)
    if (!objectives[k].deterministic()) noisy.push_back(k);

  v.default_values.resize(objectives.size());
  v.best_values.resize(objectives.size());
  bool any_better = false, any_worse = false;
  for (std::size_t k = 0; k < objectives.size(); ++k) {
    if (!objectives[k].deterministic()) continue;
    double a = def.evaluation.objectives[k], b = best.evaluation.objectives[k];
    v.default_values[k] = objectives[k].maximize ? -a : a;
    v.best_values[k] = objectives[k].maximize ? -b : b;
    any_better |= b < a;
    any_worse |= b > a;
  }
  v.method = VerifyMethod::deterministic;

  double first_effect = 0; // the first objective's relative gain in the verification
  if (!noisy.empty()) {
    v.method = VerifyMethod::welch;
    if (!compare_noisy(evaluator, space, def, best, options, noisy, v, any_better, any_worse, first_effect)) {
      v.measured = false;
      return v;
    }
  }
  v.better = any_better && !any_worse;
  if (v.better && !v.collateral.empty()) {
    v.better = false;
    v.reason = "its own kernels are faster, but " + v.collateral + ": not shipped";
    return v;
  }
  if (v.better && !v.conditions.empty()) {
    // The difference may be the GPU's, not the code's: not shipped on it.
    v.better = false;
    v.reason = "better than the default, but the two ran under different GPU conditions (" + v.conditions +
               "), so the difference may be the GPU's: not shipped; tune again when the GPU is steady";
    return v;
  }
  v.reason = verdict_reason(v, any_worse, first_effect, options);
  return v;
}

// One kernel's part of a joint verification, by its own times with the
// default (`a`) and with the winner (`b`).
PartVerdict judge_part(const std::string& kernel, const std::vector<double>& a, const std::vector<double>& b,
                       const std::string& conditions, const TuneOptions& options) {
  PartVerdict p;
  p.kernel = kernel;
  if (a.size() < 2 || b.size() < 2) {
    p.reason = "it did not run in the verification's runs, so it cannot be judged";
    return p;
  }
  p.default_ms = median(a);
  p.best_ms = median(b);
  Difference d = difference(a, b);
  p.p_value = d.p_less;
  Verdict mine;
  mine.method = VerifyMethod::welch;
  mine.p_value = d.p_less;
  mine.conditions = conditions;
  mine.better = d.better(options.alpha, options.min_effect);
  bool worse = d.worse(options.alpha, options.min_effect);
  if (mine.better && !conditions.empty()) {
    mine.better = false;
    p.reason = "better than the default, but the two ran under different GPU conditions (" + conditions +
               "), so the difference may be the GPU's: not shipped";
  } else {
    p.reason = verdict_reason(mine, worse, d.effect, options);
  }
  p.better = mine.better;
  return p;
}

Verdict verify_parts(Evaluator& evaluator, const SearchSpace& space, const EvalRecord& def, const Candidate& composed,
                     const std::vector<std::string>& kernels, const TuneOptions& options, std::vector<PartVerdict>& parts) {
  const auto& objectives = options.setup.objectives;
  EvalRecord best;
  best.candidate = space.canonical(composed);
  Verdict v;
  v.method = VerifyMethod::welch;
  v.default_values.assign(objectives.size(), NAN);
  v.best_values.assign(objectives.size(), NAN);
  std::vector<std::size_t> noisy;
  for (std::size_t k = 0; k < objectives.size(); ++k) noisy.push_back(k);
  bool sum_better = false, sum_worse = false;
  double sum_effect = 0;
  OwnSamples own[2];
  bool measured = compare_noisy(evaluator, space, def, best, options, noisy, v, sum_better, sum_worse, sum_effect, &own);
  std::string won;
  for (const auto& kernel : kernels) {
    PartVerdict p = measured ? judge_part(kernel, own[0][kernel], own[1][kernel], v.conditions, options) : PartVerdict{};
    if (!measured) p.kernel = kernel, p.reason = v.reason;
    if (p.better) won += (won.empty() ? "" : ", ") + kernel;
    parts.push_back(std::move(p));
  }
  if (!measured) {
    v.measured = false;
    return v;
  }
  std::size_t winners = std::count_if(parts.begin(), parts.end(), [](const PartVerdict& p) { return p.better; });
  v.better = winners > 0;
  v.reason = v.better ? "better than the default for " + std::to_string(winners) + " of " + std::to_string(kernels.size()) +
                            " kernel(s) verified, each by its own time: " + won
                      : "no kernel's part is better than the default by its own time (" + std::to_string(kernels.size()) +
                            " judged)";
  if (!v.better && !v.conditions.empty()) v.reason += "; note: the two ran under different GPU conditions (" + v.conditions + ")";
  return v;
}

void prune_winner(const TuneOptions& o, const SearchSpace& space, Evaluator& evaluator, const EvaluateBatch& batch,
                         Progress& progress, SearchResult& result) {
  bool deterministic = std::all_of(o.setup.objectives.begin(), o.setup.objectives.end(), [](auto& x) { return x.deterministic(); });
  if (result.best.size() == 1 && result.evaluated[result.best[0]].candidate != space.default_candidate()) {
    const Evaluated& top = result.evaluated[result.best[0]];
    auto same_code = [&](const Candidate& a, const Candidate& b) {
      const EvalRecord* ra = evaluator.find(space.canonical(a));
      const EvalRecord* rb = evaluator.find(space.canonical(b));
      return ra && rb && !ra->digest.empty() && ra->digest == rb->digest;
    };
    progress.pruning();
    Candidate pruned = prune(space, top.candidate, top.evaluation, batch, top.generation + 1,
                             deterministic ? 0.0 : o.min_effect / 4, same_code);
    if (!(pruned == top.candidate)) {
      std::fprintf(stderr, "ciq-tuner: pruned the winner to %s\n", space.canonical(pruned).c_str());
      if (const EvalRecord* r = evaluator.find(space.canonical(pruned))) {
        result.evaluated.push_back(Evaluated{pruned, r->evaluation, r->generation});
        result.best = {result.evaluated.size() - 1};
      }
    }
  }
}

std::vector<const EvalRecord*> pareto_front(const TuneOptions& o, const SearchSpace& space, const Evaluator& evaluator,
                                                   const SearchResult& result, const EvalRecord& def) {
  std::vector<const EvalRecord*> front;
  for (auto i : result.best) front.push_back(evaluator.find(space.canonical(result.evaluated[i].candidate)));
  std::sort(front.begin(), front.end(), [](auto a, auto b) { return a->evaluation.objectives < b->evaluation.objectives; });
  std::vector<const Evaluation*> points;
  for (auto* r : front) points.push_back(&r->evaluation);
  if (std::size_t p = preferred_point(points, &def.evaluation, o.prefer); p != SIZE_MAX && p > 0)
    std::rotate(front.begin(), front.begin() + std::ptrdiff_t(p), front.begin() + std::ptrdiff_t(p) + 1);
  say_front(o, front);
  return front;
}

Verdict verify_front(const TuneOptions& o, Evaluator& evaluator, const SearchSpace& space, const EvalRecord& def,
                            const std::vector<const EvalRecord*>& front, const EvalRecord** winner) {
  std::string default_key = space.canonical(space.default_candidate());
  Verdict verdict;
  verdict.reason = "the default was the best candidate found";
  verdict.default_values.resize(o.setup.objectives.size());
  verdict.best_values.resize(o.setup.objectives.size());
  for (std::size_t k = 0; k < o.setup.objectives.size(); ++k) verdict.default_values[k] = verdict.best_values[k] = shown(o, def, k);
  for (std::size_t i = 0; i < front.size() && i < 4; ++i) {
    if (front[i]->candidate == default_key) continue;
    std::fprintf(stderr, "ciq-tuner: verifying %s against the default\n", front[i]->candidate.c_str());
    Verdict v = verify(evaluator, space, def, *front[i], o);
    // A point the verification could not measure (its runs failed: a GPU
    // gone bad) ends it without a verdict: a later point verified on that
    // GPU would ship in place of the preferred one.
    if (!v.measured) return v;
    // When nothing ships, the verdict told is the preferred point's (the
    // front's first; when that is the default, the default's).
    if (i == 0 || v.better) verdict = v;
    if (v.better) {
      *winner = front[i];
      break;
    }
  }

  return verdict;
}

} // namespace ciq::tuner
