#include "tuner/run/verify.h"

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

// Verification stops before --verify-runs pairs when every benchmark
// objective already differs beyond doubt: a group-sequential test with a
// Haybittle-Peto boundary (each look after the third pair stops only at
// p < 0.001; the last look keeps --alpha), which leaves the overall false
// positive rate at --alpha to within rounding. Measured on an H100 (llm.c,
// bench/RESULTS.md): a program's confirmation of a replay winner spent
// 150 of its 230 s in 10 pairs whose p-values were 1e-20 to 1e-30.
constexpr int early_look_pairs = 3;
constexpr double early_stop_p = 0.001;

// The winner's values against the default's, in minimisation form (lower
// is better): Welch's t-test and the relative gain of the medians. What
// every verification decides by, at --alpha or at the early boundary.
struct Difference {
  double p_less = 1;  // one-sided: the winner's values are lower
  double effect = 0;  // (median(default) - median(winner)) / |median(default)|; 0 when that is 0
  bool better(double p, double min_effect) const { return p_less < p && effect >= min_effect; }
  bool worse(double p, double min_effect) const { return 1 - p_less < p && -effect >= min_effect; }
};

Difference difference(const std::vector<double>& def, const std::vector<double>& winner) {
  double base = std::fabs(median(def));
  return {welch_t_test(winner, def).p_less, base > 0 ? (median(def) - median(winner)) / base : 0};
}

// Minimisation form: an objective that is maximised, negated.
void minimisation_form(const Objective& objective, std::vector<double>& values) {
  if (objective.maximize)
    for (auto& x : values) x = -x;
}

// An objective's values compared, made minimisation form first.
Difference difference(const Objective& objective, std::vector<double> def, std::vector<double> winner) {
  minimisation_form(objective, def);
  minimisation_form(objective, winner);
  return difference(def, winner);
}

// Whether the pairs already settle it at the early boundary: the winner
// better or worse by at least the minimum effect, or (the futility side)
// its gain short of the minimum effect, so that it cannot be shipped:
// the winner's values higher than the default's moved down by the
// minimum effect (of the default's median). On the H100 a confirmation
// whose winner was 0.7 % better, against --min-effect 1 %, ran all 10
// pairs (217 s) where the others stopped after 3 (about 95 s).
bool clear_early(std::vector<double> def, std::vector<double> winner, double min_effect) {
  Difference d = difference(def, winner);
  if (d.better(early_stop_p, min_effect) || d.worse(early_stop_p, min_effect)) return true;
  if (min_effect <= 0) return false;
  double shift = min_effect * std::fabs(median(def));
  for (auto& x : def) x -= shift;
  return welch_t_test(def, winner).p_less < early_stop_p;
}

using OwnSamples = std::map<std::string, std::vector<double>>;

// Whether the pairs measured so far settle every benchmark objective, and
// with `own` (--separately, where each kernel is judged by its own time)
// every kernel's own time.
bool settled_early(const TuneOptions& options, const std::vector<std::vector<double>>& a, const std::vector<std::vector<double>>& b,
                   OwnSamples (*own)[2]) {
  const auto& objectives = options.setup.objectives;
  bool any = false;
  for (std::size_t k = 0; k < objectives.size(); ++k) {
    if (!objectives[k].needs_benchmark() || objectives[k].deterministic()) continue;
    std::vector<double> def = a[k], winner = b[k];
    minimisation_form(objectives[k], def);
    minimisation_form(objectives[k], winner);
    if (!clear_early(def, winner, options.min_effect)) return false;
    any = true;
  }
  if (own)
    for (const auto& [kernel, am] : (*own)[0]) {
      auto bm = (*own)[1].find(kernel);
      if (bm == (*own)[1].end() || !clear_early(am, bm->second, options.min_effect)) return false;
    }
  return any;
}

// Re-measures the default and the winner in interleaved pairs (A B A B ...,
// so that drift hits both alike) into `a` and `b`, per objective, and
// writes every value to verify/samples.csv; why it could not, or "".
// With `own` (--separately), each run's own time of every timed kernel
// too, per side, into verify/kernel_samples.csv.
std::string remeasure(Evaluator& evaluator, const SearchSpace& space, const EvalRecord& def, const EvalRecord& best,
                      const TuneOptions& options, std::vector<std::vector<double>>& a, std::vector<std::vector<double>>& b,
                      std::vector<GpuState> (&states)[2], std::vector<double> (&mates)[2], OwnSamples (*own)[2] = nullptr) {
  const auto& objectives = options.setup.objectives;
  auto dc = space.parse(def.candidate), bc = space.parse(best.candidate);
  if (!dc || !bc) return "cannot read back the candidates to verify";
  const ResolvedCandidate sides[2] = {space.resolve(*dc), space.resolve(*bc)};
  std::string root = join_path(options.out_dir, "verify");
  std::string dir_a = join_path(root, "default"), dir_b = join_path(root, "best");
  bool rebuild = !options.setup.build.empty() && options.setup.build.find("{workdir}") == std::string::npos;
  if (!rebuild) {
    if (auto t = evaluator.build(sides[0], dir_a); !t) return "verification build of the default failed: " + t.error().message;
    if (auto t = evaluator.build(sides[1], dir_b); !t) return "verification build of the winner failed: " + t.error().message;
  }
  int pairs = 0;
  bool early = false;
  for (int i = 0; i < options.verify_runs && !early; ++i) {
    for (int side = 0; side < 2; ++side) {
      const ResolvedCandidate& c = sides[side];
      const std::string& dir = side == 0 ? dir_a : dir_b;
      if (rebuild)
        if (auto t = evaluator.build(c, dir); !t) return "verification build failed: " + t.error().message;
      BenchRun run;
      run.gpu = evaluator.verification_gpu(); // both sides on one GPU: no GPU's difference in the comparison
      auto values = evaluator.bench_once(c, dir, run);
      if (run.state.read) states[side].push_back(run.state);
      if (!values) return "verification run failed: " + values.error().message;
      if (own)
        for (const auto& [kernel, ms] : run.kernel_ms) (*own)[side][kernel].push_back(ms);
      if (run.mates_ms >= 0) mates[side].push_back(run.mates_ms);
      std::size_t m = 0;
      for (std::size_t k = 0; k < objectives.size(); ++k)
        if (objectives[k].needs_benchmark()) (side == 0 ? a : b)[k].push_back((*values)[m++]);
    }
    pairs = i + 1;
    if (::isatty(2)) std::fprintf(stderr, "\r\033[Kciq-tuner: verifying: %d/%d interleaved pairs", pairs, options.verify_runs);
    early = pairs >= early_look_pairs && pairs < options.verify_runs && settled_early(options, a, b, own);
  }
  if (::isatty(2)) std::fprintf(stderr, "\n");
  if (early)
    std::fprintf(stderr, "ciq-tuner: verified over %d interleaved pairs (of --verify-runs %d: the outcome was already clear at p < %g)\n",
                 pairs, options.verify_runs, early_stop_p);
  else
    std::fprintf(stderr, "ciq-tuner: verified over %d interleaved pairs\n", pairs);
  // Every re-measured value, for `ciq-tuner report` (and for people).
  std::string csv = "side,objective,run,value\n";
  for (std::size_t k = 0; k < objectives.size(); ++k)
    for (int side = 0; side < 2; ++side) {
      const auto& values = side == 0 ? a[k] : b[k];
      for (std::size_t i = 0; i < values.size(); ++i)
        csv += std::string(side == 0 ? "default" : "best") + "," + csv_field(objectives[k].name) + "," + std::to_string(i) + "," +
               format_number(values[i]) + "\n";
    }
  // A replay builds nothing, so nothing has made the directory yet.
  if (auto made = make_dirs(root); !made) std::fprintf(stderr, "ciq-tuner: warning: %s\n", made.error().message.c_str());
  else if (auto w = write_file_atomic(join_path(root, "samples.csv"), csv); !w)
    std::fprintf(stderr, "ciq-tuner: warning: %s\n", w.error().message.c_str());
  if (own) {
    std::string per_kernel = "side,kernel,run,ms\n";
    for (int side = 0; side < 2; ++side)
      for (const auto& [kernel, values] : (*own)[side])
        for (std::size_t i = 0; i < values.size(); ++i)
          per_kernel += std::string(side == 0 ? "default" : "best") + "," + csv_field(kernel) + "," + std::to_string(i) + "," +
                        format_number(values[i]) + "\n";
    if (auto w = write_file_atomic(join_path(root, "kernel_samples.csv"), per_kernel); !w)
      std::fprintf(stderr, "ciq-tuner: warning: %s\n", w.error().message.c_str());
  }
  return "";
}

// kernel-time: whether the winner slows the other kernels of its modules
// by more than it gains (a module-wide option acts on every kernel of the
// module; measured on an H100, llm.c: `opt-level=1` made its target 19 %
// faster and the module's 26 kernels together 6 % slower). Each run's
// timed kernels and those others summed, compared as the objective is;
// significantly worse: what to say; else "".
std::string collateral(const TuneOptions& options, const std::vector<std::vector<double>>& a,
                       const std::vector<std::vector<double>>& b, const std::vector<double> (&mates)[2]) {
  const auto& objectives = options.setup.objectives;
  const Objective* timed = kernel_time_objective(objectives);
  std::size_t k = timed ? std::size_t(timed - objectives.data()) : objectives.size();
  if (k == objectives.size() || mates[0].size() != a[k].size() || mates[1].size() != b[k].size() || a[k].size() < 2 ||
      b[k].size() < 2)
    return "";
  std::vector<double> whole[2];
  for (std::size_t i = 0; i < a[k].size(); ++i) whole[0].push_back(a[k][i] + mates[0][i]);
  for (std::size_t i = 0; i < b[k].size(); ++i) whole[1].push_back(b[k][i] + mates[1][i]);
  WelchResult w = welch_t_test(whole[1], whole[0]);
  double before = median(whole[0]), after = median(whole[1]);
  if (!(1 - w.p_less < options.alpha && after > before)) return "";
  double others = median(mates[1]) - median(mates[0]);
  return "the other kernels of its module(s) took " + format_number(std::round(others * 1000) / 1000) +
         " ms more, so the module's kernels together took " + format_number(std::round((after / before - 1) * 1000) / 10) +
         " % longer (p = " + format_number(1 - w.p_less) + "): a module-wide option acts on every kernel of the module";
}

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
    PartVerdict p;
    p.kernel = kernel;
    const auto& a = own[0][kernel];
    const auto& b = own[1][kernel];
    if (!measured) {
      p.reason = v.reason;
    } else if (a.size() < 2 || b.size() < 2) {
      p.reason = "it did not run in the verification's runs, so it cannot be judged";
    } else {
      p.default_ms = median(a);
      p.best_ms = median(b);
      Difference d = difference(a, b);
      p.p_value = d.p_less;
      Verdict mine;
      mine.method = VerifyMethod::welch;
      mine.p_value = d.p_less;
      mine.conditions = v.conditions;
      mine.better = d.better(options.alpha, options.min_effect);
      bool worse = d.worse(options.alpha, options.min_effect);
      if (mine.better && !v.conditions.empty()) {
        mine.better = false;
        p.reason = "better than the default, but the two ran under different GPU conditions (" + v.conditions +
                   "), so the difference may be the GPU's: not shipped";
      } else {
        p.reason = verdict_reason(mine, worse, d.effect, options);
      }
      p.better = mine.better;
    }
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
