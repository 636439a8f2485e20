#include "tuner/measure/step.h"

#include "cache/compile_trace.h"

#include "utils/config.h"
#include "utils/files.h"
#include "utils/text.h"

namespace ciq::tuner {

std::string controls_path(const std::string& workdir) { return join_path(workdir, "candidate.controls"); }

std::map<std::string, std::string> step_placeholders(const ResolvedCandidate& c, const std::string& workdir, const std::string& gpu) {
  std::map<std::string, std::string> v{{"controls", controls_path(workdir)}, {"workdir", workdir}, {"gpu", gpu}};
  for (const auto& [name, value] : c.params) v["param:" + name] = value;
  return v;
}

StepEnv step_environment(const TuningSetup& setup, const SearchSpace& space, const std::string& workdir, const StepEnv& extra) {
  StepEnv env = {{env_name(Env::controls), controls_path(workdir)}, {env_name(Env::trace), join_path(workdir, "trace")}};
  if (!setup.kernels.empty()) env.emplace_back(env_name(Env::kernels), setup.kernels);
  // NVVM-stage knobs reach only the translation units of targeted kernels.
  if (!space.units.empty()) {
    std::string units;
    for (const auto& u : space.units) units += (units.empty() ? "" : ",") + u;
    env.emplace_back(env_name(Env::units), units);
  }
  // ACF candidates are blobs in the tuner's cache: ciq-ptxas reads them there.
  if (!setup.acf_cache_dir.empty()) env.emplace_back(env_name(Env::cache_dir), setup.acf_cache_dir);
  if (setup.memo && !setup.memo_dir.empty()) env.emplace_back(env_name(Env::memo_dir), setup.memo_dir);
  env.insert(env.end(), extra.begin(), extra.end());
  return env;
}

MemoSteps count_memo_steps(const std::string& trace_dir) {
  MemoSteps steps;
  std::string dir = join_path(trace_dir, "steps");
  auto names = list_directory(dir);
  if (!names) return steps;
  for (const auto& n : *names) {
    if (n.empty() || n[0] == '.' || !ends_with(n, ".json")) continue; // a record being written is not *.json yet
    auto text = read_file(join_path(dir, n));
    if (!text) continue;
    auto record = cache::parse_steps_record(*text);
    if (!record) continue;
    steps.run += record->steps_run;
    steps.reused += record->steps_reused;
  }
  return steps;
}

Result<StepResult> StepRunner::run(StepKind kind, const std::string& command, const ResolvedCandidate& c, const std::string& workdir,
                                   const std::string& gpu, const std::string& log_name, const StepEnv& extra_env) const {
  Step step;
  step.kind = kind;
  step.command = command;
  step.placeholders = step_placeholders(c, workdir, gpu);
  step.env = step_environment(setup_, space_, workdir, extra_env);
  step.workdir = workdir;
  step.log_name = log_name;
  step.gpu = gpu;
  step.timeout = setup_.timeout;
  return executor_.run_step(step);
}

} // namespace ciq::tuner
