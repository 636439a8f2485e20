#include "tuner/measure/local_executor.h"

#include "tuner/measure/command.h"
#include "utils/files.h"

namespace ciq::tuner {

LocalExecutor::LocalExecutor(const TuningSetup& setup) : shell_(setup.shell), gpus_(setup.gpus) {}

std::vector<std::string> LocalExecutor::slots() const {
  return gpus_.empty() ? std::vector<std::string>{""} : gpus_;
}

std::string argv_log_line(const std::vector<std::string>& argv) {
  std::string line = "$";
  for (const auto& a : argv) line += " " + a;
  return line + "\n";
}

Result<StepResult> LocalExecutor::run_step(const Step& step) {
  auto argv = command_argv(step.command, step.placeholders, shell_);
  if (!argv) return argv.error();
  RunOptions options;
  options.argv = *argv;
  options.capture_stdout = options.capture_stderr = true;
  options.stdin_null = true;
  options.timeout_seconds = step.timeout;
  options.own_process_group = true;
  options.capture_head_tail = k_kept_output_bytes;
  options.exit_grace_seconds = k_output_grace_seconds;
  options.set_env = step.env;
  if (!step.gpu.empty()) options.set_env.emplace_back("CUDA_VISIBLE_DEVICES", step.gpu);
  std::string log;
  auto run = launch(std::move(options), step, &log);
  if (run) log += command_log_text(*run);
  else log += "[" + run.error().message + "]\n";
  StepResult done;
  done.log = join_path(step.workdir, step.log_name);
  append_log(done.log, log);
  if (!run) return run.error();
  done.run = std::move(*run);
  return done;
}

Result<RunResult> LocalExecutor::launch(RunOptions options, const Step&, std::string* log) {
  *log += argv_log_line(options.argv);
  return run_process(options);
}

} // namespace ciq::tuner
