#include "tuner/commands/replay_fallback.h"

#include "spaces/control_set.h"
#include "tuner/measure/step.h"
#include "tuner/rundir/best_controls.h"
#include "tuner/rundir/journal.h"
#include "tuner/search/candidate.h"
#include "utils/files.h"

namespace ciq::tuner {

namespace {

bool module_wide(const spaces::ControlSet& set) { return !set.options.empty() || set.acf || !set.nvcc.empty(); }

} // namespace

bool sets_module_wide(const std::string& path) {
  auto set = read_controls_file(path);
  return set && module_wide(*set);
}

std::optional<DirectiveCandidate> best_directive_candidate(const std::string& replay_dir, double min_effect) {
  auto records = read_journal(join_path(replay_dir, "journal.jsonl"));
  if (!records) return std::nullopt;
  std::optional<double> base;
  for (const auto& r : *records)
    if (r.candidate == k_default_candidate && r.status == EvalStatus::ok && r.evaluation.valid && !r.evaluation.objectives.empty())
      base = r.evaluation.objectives.front();
  if (!base || *base <= 0) return std::nullopt;
  std::optional<DirectiveCandidate> best;
  double best_time = 0;
  for (const auto& r : *records) {
    if (r.status != EvalStatus::ok || !r.evaluation.valid || r.evaluation.objectives.empty() || r.workdir.empty()) continue;
    double time = r.evaluation.objectives.front();
    if (best && time >= best_time) continue;
    // The evaluation's own directory under this run (the journal's path is
    // where the run was when it ran).
    std::string file = controls_path(join_path(join_path(replay_dir, "evals"), base_name(r.workdir)));
    auto set = read_controls_file(file);
    if (!set || set->kernels.empty() || module_wide(*set)) continue;
    best = DirectiveCandidate{file, spaces::summarise_control_set(*set), time / *base - 1};
    best_time = time;
  }
  if (!best || -best->change < min_effect) return std::nullopt;
  return best;
}

} // namespace ciq::tuner
