#include "tuner/measure/bench_run.h"

#include "tuner/measure/command.h"
#include "utils/config.h"
#include "utils/files.h"
#include "utils/text.h"

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <mutex>
#include <optional>
#include <set>

namespace ciq::tuner {

namespace {

// Said once per tuner process, for runs under 2 s: +-5 % needs 2 s or more.
void warn_short_energy_run(double seconds) {
  static std::atomic<bool> said{false};
  if (seconds >= 2.0 || said.exchange(true)) return;
  std::fprintf(stderr,
               "ciq-tuner: warning: a benchmark run of %.2f s is short for an energy figure: NVML's counter moves every "
               "100 ms, so it is good to about +-%.0f %%; make each run last 2 s or more (more iterations) for +-5 %%\n",
               seconds, energy_uncertainty_percent(seconds));
}

bool any_objective(const std::vector<Objective>& objectives, bool (*wanted)(const Objective&)) {
  return std::any_of(objectives.begin(), objectives.end(), wanted);
}

// Energy or power of one run from the GPU's counter; why not, naming `gpu`.
Result<double> energy_value(const Objective& o, const GpuState& state, const std::string& gpu) {
  if (!state.read || state.energy_j < 0)
    return make_error("no-energy", "no energy reading for this run (NVML: " + std::string(state.read ? "no energy counter" : "not available") + ")");
  if (state.energy_j <= 0 && state.seconds >= 2.0) // twenty of the counter's 100 ms steps: it should have moved
    return make_error("no-energy", "the GPU's energy counter did not move during a run of " + format_number(state.seconds) +
                                       " s: the benchmark seems not to have used GPU '" + (gpu.empty() ? "0" : gpu) +
                                       "' (check --gpus and CUDA_VISIBLE_DEVICES)");
  if (state.energy_j <= 0)
    return make_error("no-energy", "the GPU's energy counter did not move during the run (" + format_number(state.seconds) +
                                       " s): the run is too short for NVML's counter; make it longer (more iterations)");
  return o.kind == ObjectiveKind::energy ? state.energy_j : state.energy_j / std::max(state.seconds, 1e-6);
}

// The time of setup.module_mates in `kernels`, in ms, less any of them the
// kernel-time objective times itself (its glob may match a demangled name).
double mates_time(const TuningSetup& setup, const formats::KernelTrace& kernels) {
  const Objective* timed = kernel_time_objective(setup.objectives);
  std::set<std::string> mates(setup.module_mates.begin(), setup.module_mates.end());
  double ms = 0;
  for (const auto& k : kernels.kernels)
    if (mates.count(k.kernel) && timed && !times_kernel(*timed, k)) ms += double(k.stats.total_ns) / 1e6;
  return ms;
}

// The kernel-time reference: the launches of the default candidate's
// first measured run in this process (a tuning run measures the default
// first, and verification measures it again beside the winner).
class LaunchReference {
public:
  const LaunchCounts* counts(const ResolvedCandidate& c, const TuningSetup& setup, const formats::KernelTrace& kernels) {
    std::lock_guard lock(mutex_);
    const Objective* timed = kernel_time_objective(setup.objectives);
    if (!counts_ && timed && c.is_default && kernels.timed()) counts_ = launch_counts(*timed, kernels);
    return counts_ ? &*counts_ : nullptr;
  }

private:
  std::mutex mutex_;
  std::optional<LaunchCounts> counts_;
};

LaunchReference& launch_reference() {
  static LaunchReference reference;
  return reference;
}

// "KERNEL ran N times, M in the default's first run", said once per kernel.
void say_scaled_once(const ScaledKernel& scaled) {
  static std::mutex mutex;
  static std::set<std::string> said;
  std::lock_guard lock(mutex);
  if (!said.insert(scaled.kernel).second) return;
  std::fprintf(stderr, "ciq-tuner: note: %s: scored as that many launches at this run's median (an autotuner in the "
                       "program times some kernels while it compiles them, as often as their code asks)\n",
               printable(scaled.text()).c_str());
}

} // namespace

std::map<std::string, double> own_kernel_times(const std::vector<std::string>& names, const formats::KernelTrace& kernels) {
  std::map<std::string, double> out;
  for (const auto& k : kernels.kernels)
    for (const auto& name : names)
      if (k.kernel == name || (!k.demangled.empty() && k.demangled == name)) out[name] += double(k.stats.total_ns) / 1e6;
  return out;
}

double energy_uncertainty_percent(double seconds) { return 100 * 0.1 / std::max(seconds, 0.01); }

Result<std::vector<double>> benchmark_values(const std::vector<Objective>& objectives, const std::string& output,
                                             const std::string& log, const GpuState& state,
                                             const formats::KernelTrace* kernels, const std::string& kernels_dir,
                                             const std::string& gpu, const LaunchCounts* reference) {
  std::vector<double> values;
  for (const auto& o : objectives) {
    if (!o.needs_benchmark()) continue;
    if (o.needs_energy()) {
      auto v = energy_value(o, state, gpu);
      if (!v) return v.error();
      values.push_back(*v);
    } else if (o.kind == ObjectiveKind::kernel_time) {
      if (!kernels) return make_error("kernel-time", "no kernel trace of this run (log: " + log + ")");
      std::vector<ScaledKernel> scaled;
      auto v = kernel_time_ms(o, *kernels, reference, &scaled);
      for (const auto& why : scaled) say_scaled_once(why);
      if (!v) return make_error(v.error().code, v.error().message + " (kernel trace: " + kernels_dir + "; log: " + log + ")");
      values.push_back(*v);
    } else {
      auto v = extract_metric(o, output);
      if (!v) return make_error(v.error().code, failure_message(v.error().message, output, log));
      values.push_back(*v);
    }
  }
  return values;
}

namespace {

// A fresh kernel trace directory for one benchmark run (kernel-time),
// kernels/run<N> under `workdir`, into `dir`, and the environment that
// points libciq-inject at it into `env`. Emptied first: the numbers start
// again in every process, and a resumed run measures again in directories
// (verify/) an earlier process timed into; its traces would be added to
// this run's.
Result<void> fresh_kernels_dir(const std::string& workdir, const TuningSetup& setup, std::string& dir, StepEnv& env) {
  static std::atomic<int> runs{0};
  dir = join_path(workdir, "kernels/run" + std::to_string(runs++));
  remove_tree(dir);
  if (auto made = make_dirs(dir); !made) return made.error();
  env = {{"CUDA_INJECTION64_PATH", setup.inject_library}, {env_name(Env::kernel_trace), dir}};
  return {};
}

// The run's kernel trace, and in `placed` the times of the kernels the run
// targets (--separately) and of their module-mates, when it timed them.
Result<formats::KernelTrace> read_run_kernels(const TuningSetup& setup, const std::string& dir, BenchRun& placed) {
  auto kernels = formats::read_kernel_trace(dir);
  if (!kernels) return kernels.error();
  if (!setup.own_kernels.empty() && kernels->timed()) placed.kernel_ms = own_kernel_times(setup.own_kernels, *kernels);
  if (!setup.module_mates.empty() && kernels->timed()) placed.mates_ms = mates_time(setup, *kernels);
  return kernels;
}

// A resident benchmark server that started afresh for three requests in a
// row (it exits after its answers): its start-up is inside every measure.
Error server_restarts(const StepResult& step, bool kernel_time) {
  return make_error("bench", "the benchmark server started afresh for each of three requests in a row (it exits after its "
                             "answers), so its start-up is inside each measure of " +
                                 std::string(kernel_time ? "kernel time" : "energy") + ": keep it running between requests (see " +
                                 step.log + ")");
}

// What a finished benchmark run measured: its failure, else every
// benchmark objective's value (`kernels_dir`: where its kernels were timed,
// for kernel-time).
Result<std::vector<double>> finished_run_values(const TuningSetup& setup, const ResolvedCandidate& c, const StepResult& step,
                                                const GpuState& state, const std::string* kernels_dir,
                                                const std::string& gpu, BenchRun& placed) {
  const RunResult& run = step.run;
  std::string output = run.out + "\n" + run.err;
  if (!run.succeeded())
    return make_error(run.timed_out ? ciq::errc::timeout : "bench", failure_message("benchmark " + run.describe(), output, step.log));
  std::optional<formats::KernelTrace> kernels;
  if (kernels_dir) {
    auto read = read_run_kernels(setup, *kernels_dir, placed);
    if (!read) return read.error();
    kernels = std::move(*read);
  }
  const LaunchCounts* reference = kernels ? launch_reference().counts(c, setup, *kernels) : nullptr;
  return benchmark_values(setup.objectives, output, step.log, state, kernels ? &*kernels : nullptr,
                          kernels_dir ? *kernels_dir : "", gpu, reference);
}

} // namespace

Result<std::vector<double>> run_benchmark(const StepRunner& steps, GpuPool& gpus, const ResolvedCandidate& c,
                                          const std::string& workdir, BenchRun& placed) {
  const TuningSetup& setup = steps.setup();
  // kernel-time: the run's kernels timed inside it (libciq-inject, loaded
  // by the CUDA driver), each run into a directory of its own.
  bool kernel_time = any_objective(setup.objectives, [](const Objective& o) { return o.kind == ObjectiveKind::kernel_time; });
  bool energy = any_objective(setup.objectives, [](const Objective& o) { return o.needs_energy(); });
  StepEnv env;
  std::string kernels_dir;
  auto new_kernels_dir = [&]() { return fresh_kernels_dir(workdir, setup, kernels_dir, env); };
  if (kernel_time)
    if (auto made = new_kernels_dir(); !made) return made.error();
  std::string gpu = gpus.acquire(&placed.gpu_wait, placed.gpu);
  placed.gpu = gpu;
  // The GPU's state and energy while the run lasts, where NVML is (a
  // scheduler's GPUs are not this machine's: not read).
  auto measured = [&](GpuState& state) {
    std::optional<GpuMonitor> monitor;
    if (!setup.slurm)
      if (Nvml* nvml = Nvml::get()) monitor.emplace(*nvml, gpu);
    auto step = steps.run(StepKind::bench, setup.bench, c, workdir, gpu, "bench.log", env);
    state = monitor ? monitor->stop() : GpuState{};
    return step;
  };
  GpuState state;
  auto step = measured(state);
  // A resident benchmark that started for this request spent its start-up
  // (a process, CUDA, its inputs: 1.7 s of a 2.7 s request, 1.5x the energy
  // of the next ones, measured on an H100) inside the energy read around
  // it, and its kernel trace holds the start-up's launches: ask again, and
  // keep the second.
  // A server that exits after its answers starts afresh for the next
  // request too: after two more tries its start-up is in every answer.
  for (int again = 0; (energy || kernel_time) && step && step->started_server && step->run.succeeded(); ++again) {
    if (again == 2) {
      gpus.release(gpu);
      return server_restarts(*step, kernel_time);
    }
    if (kernel_time)
      if (auto made = new_kernels_dir(); !made) {
        gpus.release(gpu);
        return made.error();
      }
    step = measured(state);
  }
  gpus.release(gpu);
  if (energy && state.read && state.energy_j > 0) warn_short_energy_run(state.seconds);
  placed.state = state;
  if (!step) return step.error();
  return finished_run_values(setup, c, *step, state, kernel_time ? &kernels_dir : nullptr, gpu, placed);
}

} // namespace ciq::tuner
