#include "tuner/run/verify_pairs.h"

#include "tuner/objectives/statistics.h"
#include "utils/files.h"
#include "utils/text.h"

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

// Minimisation form: an objective that is maximised, negated.
void minimisation_form(const Objective& objective, std::vector<double>& values) {
  if (objective.maximize)
    for (auto& x : values) x = -x;
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

// Every re-measured value into ROOT/samples.csv, for `ciq-tuner report`
// (and for people); with `own`, each kernel's own time into
// kernel_samples.csv. A failure to write is a warning: the verdict stands.
void write_samples(const std::string& root, const std::vector<Objective>& objectives, const std::vector<std::vector<double>>& a,
                   const std::vector<std::vector<double>>& b, OwnSamples (*own)[2]) {
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
}

// One benchmark run of one side, built in `dir`, on the verification GPU
// (both sides on one GPU: no GPU's difference in the comparison): its
// benchmark objectives' values, GPU state, module-mates' time and, with
// `own`, each timed kernel's own time appended. Why it failed, or "".
std::string run_side(Evaluator& evaluator, const ResolvedCandidate& c, const std::string& dir, const std::vector<Objective>& objectives,
                     std::vector<std::vector<double>>& values, std::vector<GpuState>& states, std::vector<double>& mates,
                     OwnSamples* own) {
  BenchRun run;
  run.gpu = evaluator.verification_gpu();
  auto measured = evaluator.bench_once(c, dir, run);
  if (run.state.read) states.push_back(run.state);
  if (!measured) return "verification run failed: " + measured.error().message;
  if (own)
    for (const auto& [kernel, ms] : run.kernel_ms) (*own)[kernel].push_back(ms);
  if (run.mates_ms >= 0) mates.push_back(run.mates_ms);
  std::size_t m = 0;
  for (std::size_t k = 0; k < objectives.size(); ++k)
    if (objectives[k].needs_benchmark()) values[k].push_back((*measured)[m++]);
  return "";
}

} // namespace

Difference difference(const std::vector<double>& def, const std::vector<double>& winner) {
  double base = std::fabs(median(def));
  return {welch_t_test(winner, def).p_less, base > 0 ? (median(def) - median(winner)) / base : 0};
}

Difference difference(const Objective& objective, std::vector<double> def, std::vector<double> winner) {
  minimisation_form(objective, def);
  minimisation_form(objective, winner);
  return difference(def, winner);
}

std::string remeasure(Evaluator& evaluator, const SearchSpace& space, const EvalRecord& def, const EvalRecord& best,
                      const TuneOptions& options, std::vector<std::vector<double>>& a, std::vector<std::vector<double>>& b,
                      std::vector<GpuState> (&states)[2], std::vector<double> (&mates)[2], OwnSamples (*own)[2]) {
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
      const std::string& dir = side == 0 ? dir_a : dir_b;
      if (rebuild)
        if (auto t = evaluator.build(sides[side], dir); !t) return "verification build failed: " + t.error().message;
      auto why = run_side(evaluator, sides[side], dir, objectives, side == 0 ? a : b, states[side], mates[side], own ? &(*own)[side] : nullptr);
      if (!why.empty()) return why;
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
  write_samples(join_path(options.out_dir, "verify"), objectives, a, b, own);
  return "";
}

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


} // namespace ciq::tuner
