#include "tuner/measure/bench_server.h"

#include "tuner/measure/command.h"
#include "utils/files.h"
#include "utils/text.h"

#include <chrono>

namespace ciq::tuner {

namespace {

std::string last_line(const std::string& text) {
  std::string_view t = trim(text);
  auto nl = t.rfind('\n');
  return std::string(nl == std::string_view::npos ? t : t.substr(nl + 1));
}

} // namespace

BenchServerExecutor::BenchServerExecutor(const TuningSetup& setup, std::shared_ptr<Executor> builds)
    : builds_(std::move(builds)), command_(setup.bench_server), shell_(setup.shell), run_dir_(setup.run_dir),
      server_start_(setup.server_start) {
  for (const auto& g : builds_->slots()) servers_[g]; // every slot exists before threads start
}

Result<void> BenchServerExecutor::check_options(const TuningSetup& setup) {
  if (auto checked = builds_->check_options(setup); !checked) return checked;
  for (const auto& o : setup.objectives)
    if (o.kind == ObjectiveKind::kernel_time)
      return make_error("tuner", "--objective " + o.name + " times the kernels of a process per benchmark run; "
                                 "a --bench-server is resident (not supported together yet)");
  if (setup.bench.empty())
    return make_error("tuner", "--bench-server needs --bench: the request it answers for every candidate (e.g. --bench '--cubin {workdir}/k.cubin')");
  if (setup.build.empty() && setup.compiler)
    return make_error("tuner", "--bench-server needs --build: a resident benchmark loads what the build wrote, it does not compile");
  return {};
}

void BenchServerExecutor::use_run_directory(const std::string& run_dir) {
  run_dir_ = run_dir;
  builds_->use_run_directory(run_dir);
}

Result<void> BenchServerExecutor::start(bool resume) { return builds_->start(resume); }

std::vector<std::string> BenchServerExecutor::slots() const { return builds_->slots(); }

bool BenchServerExecutor::schedules_gpus() const { return builds_->schedules_gpus(); }

Result<StepResult> BenchServerExecutor::run_step(const Step& step) {
  if (step.kind == StepKind::build) return builds_->run_step(step);
  return ask_server(step);
}

Result<Coprocess*> BenchServerExecutor::server_for(const std::string& gpu) {
  std::unique_ptr<Coprocess>& server = servers_.at(gpu);
  if (server) return server.get();
  auto argv = command_argv(command_, {{"gpu", gpu}}, shell_);
  if (!argv) return argv.error();
  RunOptions options;
  options.argv = *argv;
  options.capture_head_tail = k_kept_output_bytes;
  if (!gpu.empty()) options.set_env.emplace_back("CUDA_VISIBLE_DEVICES", gpu);
  std::string log = join_path(run_dir_, gpu.empty() ? "bench-server.log" : "bench-server-gpu" + gpu + ".log");
  auto started = Coprocess::start(options, log);
  if (!started) return started.error();
  server = std::move(*started);
  return server.get();
}

Result<StepResult> BenchServerExecutor::ask_server(const Step& step) {
  // Split into words first, then filled in: a {workdir} with spaces stays one word.
  auto words = command_argv(step.command, step.placeholders, /*shell=*/false);
  if (!words) return words.error();
  std::string message, shown;
  for (const auto& w : *words) {
    if (w.empty() || w.find('\n') != std::string::npos)
      return make_error("usage", "a benchmark server request cannot hold an empty word or a newline: " + step.command);
    message += w + "\n";
    shown += (shown.empty() ? "" : " ") + w;
  }
  message += "\n";

  bool fresh = !servers_.at(step.gpu);
  auto server = server_for(step.gpu);
  if (!server) return server.error();
  auto started = std::chrono::steady_clock::now();
  std::string answer;
  auto sent = (*server)->send(message);
  // A fresh server answers its first request after its own start-up
  // (imports, CUDA, inputs: seconds for a Python benchmark that imports
  // torch), which --timeout, a limit on the benchmark, does not cover.
  double limit = step.timeout > 0 && fresh ? step.timeout + server_start_ : step.timeout;
  Result<std::string> status = sent ? (*server)->receive("ciq-status: ", limit, &answer) : Result<std::string>(sent.error());
  StepResult done;
  done.log = join_path(step.workdir, step.log_name);
  done.started_server = fresh;
  RunResult& run = done.run;
  run.out = answer;
  run.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  std::string log = "> " + shown + "\n" + answer;
  if (std::size_t dropped = (*server)->dropped())
    log += "\n[the middle of its answer was dropped: " + std::to_string(dropped) + " bytes; the first and last " +
           std::to_string(k_kept_output_bytes >> 20) + " MiB are kept]\n";
  if (!status) {
    servers_.at(step.gpu).reset(); // dead or killed: the next request starts a fresh one
    if (status.error().code != "timeout") {
      append_log(done.log, log + "[benchmark server: " + status.error().message + "]\n");
      return make_error("bench", "the benchmark server " + status.error().message +
                                     (answer.empty() ? "" : ": " + last_line(answer)) + " (see bench-server*.log)");
    }
    run.timed_out = true;
  } else {
    auto code = parse_integer(trim(*status));
    if (!code) {
      servers_.at(step.gpu).reset();
      return make_error("bench", "the benchmark server answered 'ciq-status: " + *status + "', not a number");
    }
    run.exit_code = int(*code);
  }
  append_log(done.log, log + "[" + run.describe() + "]\n");
  return done;
}

} // namespace ciq::tuner
