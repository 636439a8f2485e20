#include "tuner/measure/evaluator.h"

#include "spaces/control_set.h"
#include "tuner/measure/command.h"
#include "tuner/objectives/statistics.h"
#include "utils/config.h"
#include "utils/files.h"
#include "utils/json.h"
#include "utils/text.h"

#include <algorithm>
#include <atomic>
#include <optional>
#include <cctype>
#include <chrono>
#include <cmath>
#include <map>
#include <cstdio>
#include <thread>

namespace ciq::tuner {

namespace {

/// Adds up what ciq-nvcc's memoised builds reported in <trace>/steps/.
void count_memo_steps(const std::string& trace_dir, EvalRecord& r) {
  std::string dir = join_path(trace_dir, "steps");
  auto names = list_directory(dir);
  if (!names) return;
  for (const auto& n : *names) {
    if (n[0] == '.') continue;
    auto text = read_file(join_path(dir, n));
    if (!text) continue;
    auto json = parse_json(*text);
    if (!json) continue;
    r.steps_run += int((*json)["steps_run"].number_or(0));
    r.steps_reused += int((*json)["steps_reused"].number_or(0));
  }
}

// The reason of a candidate the compiler did not take as given.
const std::string k_unhonoured = "not honoured by the compiler: ";

} // namespace

Evaluator::Evaluator(TuningSetup setup, const SearchSpace& space)
    : setup_(std::move(setup)), space_(space), executor_(setup_.executor ? setup_.executor : make_executor(setup_)) {
  slots_ = idle_gpus_ = executor_->slots();
}

bool Evaluator::per_gpu_baselines() const {
  return setup_.gpu_baselines && !setup_.replay && slots_.size() > 1 && !executor_->schedules_gpus() &&
         std::any_of(setup_.objectives.begin(), setup_.objectives.end(), [](auto& o) { return o.needs_benchmark(); });
}

bool Evaluator::is_default(const Candidate& c) const {
  return space_.canonical(c) == space_.canonical(space_.default_candidate());
}

void Evaluator::learn_gpu_defaults(const EvalRecord& def) {
  std::vector<GpuDefault> defaults;
  for (const auto& gpu : slots_) {
    GpuDefault d{gpu, std::vector<double>(setup_.objectives.size(), NAN), 0};
    for (std::size_t k = 0; k < setup_.objectives.size(); ++k) {
      if (!setup_.objectives[k].needs_benchmark()) continue;
      std::vector<double> there;
      for (std::size_t i = 0; i < def.run_gpus.size() && i < def.samples[k].size(); ++i)
        if (def.run_gpus[i] == gpu) there.push_back(def.samples[k][i]);
      d.runs = int(there.size());
      if (!there.empty()) d.values[k] = median(there);
    }
    for (std::size_t k = 0; k < d.values.size(); ++k)
      if (setup_.objectives[k].needs_benchmark() && !(d.values[k] > 0) && d.runs > 0) {
        std::fprintf(stderr, "ciq-tuner: warning: the default's %s on GPU '%s' is %s, which cannot scale other runs: each run is "
                             "compared with one default, not with its own GPU's\n",
                     setup_.objectives[k].name.c_str(), gpu.c_str(), format_number(d.values[k]).c_str());
        return;
      }
    if (d.runs == 0) {
      // A journal from a run with other --gpus: its default says nothing of this one.
      std::fprintf(stderr, "ciq-tuner: warning: the journal's default was not measured on GPU '%s': each run is compared "
                           "with one default, not with its own GPU's (start a new run for per-GPU baselines)\n", gpu.c_str());
      return;
    }
    defaults.push_back(std::move(d));
  }
  gpu_defaults_ = std::move(defaults);
}

double Evaluator::scale(double value, const std::string& gpu, std::size_t k) const {
  if (gpu_defaults_.size() < 2) return value;
  double reference = gpu_defaults_.front().values[k];
  for (const auto& d : gpu_defaults_)
    if (d.gpu == gpu) {
      double here = d.values[k];
      if (!std::isfinite(here) || !std::isfinite(reference) || here == 0) return value;
      return value * (reference / here);
    }
  return value;
}

void Evaluator::preload(const std::vector<EvalRecord>& records) {
  std::string default_key = space_.canonical(space_.default_candidate());
  for (const auto& r : records) {
    if (by_candidate_.count(r.candidate)) continue;
    if (r.candidate == default_key && r.status == EvalStatus::ok && per_gpu_baselines()) learn_gpu_defaults(r);
    by_candidate_[r.candidate] = records_.size();
    if (!r.digest.empty() && r.status == EvalStatus::ok) by_digest_.emplace(r.digest, records_.size());
    next_number_ = std::max(next_number_, r.number + 1);
    records_.push_back(r);
  }
  free_numbers_.clear();
  for (int n = 0; n < next_number_; ++n) free_numbers_.insert(n);
  for (const auto& r : records_) free_numbers_.erase(r.number);
}

std::map<std::string, std::string> Evaluator::placeholders(const Candidate& c, const std::string& workdir,
                                                           const std::string& gpu) const {
  std::map<std::string, std::string> v{
      {"controls", join_path(workdir, "candidate.controls")}, {"workdir", workdir}, {"gpu", gpu}};
  for (const auto& d : space_.dimensions)
    if (d.kind == DimensionKind::param) v["param:" + d.knob] = space_.param(c, d.knob);
  return v;
}

Result<StepResult> Evaluator::run_step(StepKind kind, const std::string& command, const Candidate& c,
                                       const std::string& workdir, const std::string& gpu, const std::string& log_name,
                                       const std::vector<std::pair<std::string, std::string>>& extra_env) {
  Step step;
  step.kind = kind;
  step.command = command;
  step.placeholders = placeholders(c, workdir, gpu);
  step.env = {{env_name(Env::controls), join_path(workdir, "candidate.controls")},
              {env_name(Env::trace), join_path(workdir, "trace")}};
  if (!setup_.kernels.empty()) step.env.emplace_back(env_name(Env::kernels), setup_.kernels);
  // NVVM-stage knobs reach only the translation units of targeted kernels.
  if (!space_.units.empty()) {
    std::string units;
    for (const auto& u : space_.units) units += (units.empty() ? "" : ",") + u;
    step.env.emplace_back(env_name(Env::units), units);
  }
  // ACF candidates are blobs in the tuner's cache: ciq-ptxas reads them there.
  if (!setup_.acf_cache_dir.empty()) step.env.emplace_back(env_name(Env::cache_dir), setup_.acf_cache_dir);
  if (setup_.memo && !setup_.run_dir.empty()) step.env.emplace_back(env_name(Env::memo_dir), join_path(setup_.run_dir, "memo"));
  step.env.insert(step.env.end(), extra_env.begin(), extra_env.end());
  step.workdir = workdir;
  step.log_name = log_name;
  step.gpu = gpu;
  step.timeout = setup_.timeout;
  return executor_->run_step(step);
}

std::string Evaluator::acquire_gpu(double* waited, const std::string& wanted) {
  auto started = std::chrono::steady_clock::now();
  std::unique_lock lock(mutex_);
  auto it = idle_gpus_.end();
  gpu_free_.wait(lock, [&] {
    it = wanted.empty() ? (idle_gpus_.empty() ? idle_gpus_.end() : idle_gpus_.end() - 1)
                        : std::find(idle_gpus_.begin(), idle_gpus_.end(), wanted);
    return it != idle_gpus_.end();
  });
  if (waited) *waited += std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  std::string gpu = *it;
  idle_gpus_.erase(it);
  return gpu;
}

void Evaluator::release_gpu(const std::string& gpu) {
  {
    std::lock_guard lock(mutex_);
    idle_gpus_.push_back(gpu);
  }
  gpu_free_.notify_all(); // a waiter may want this GPU and no other
}

Result<std::vector<TracedModule>> Evaluator::build(const Candidate& c, const std::string& workdir) {
  if (auto made = make_dirs(workdir); !made) return made.error();
  remove_tree(join_path(workdir, "trace"));
  std::string controls = setup_.compiler ? spaces::format_control_set(space_.controls(c)) : "";
  if (auto w = write_file_atomic(join_path(workdir, "candidate.controls"), controls); !w) return w.error();
  if (!setup_.build.empty()) {
    auto step = run_step(StepKind::build, setup_.build, c, workdir, setup_.gpus.empty() ? "" : setup_.gpus.front(), "build.log");
    if (!step) return step.error();
    const RunResult& run = step->run;
    if (!run.succeeded()) return make_error("build", failure_message("build " + run.describe(), run.out + "\n" + run.err, step->log));
  }
  return read_trace(join_path(workdir, "trace"));
}

// NVML's energy counter moves every 100 ms (measured on an H100 and an
// H200), so a run of T seconds is read to within about +-0.1 s of its
// power: +-10 % at 1 s. Said once per run, for runs under 2 s.
static void warn_short_energy_run(double seconds) {
  static std::atomic<bool> said{false};
  if (seconds >= 2.0 || said.exchange(true)) return;
  std::fprintf(stderr,
               "ciq-tuner: warning: a benchmark run of %.2f s is short for an energy figure: NVML's counter moves every "
               "100 ms, so it is good to about +-%.0f %%; make each run last 2 s or more (more iterations) for +-5 %%\n",
               seconds, 100 * 0.1 / std::max(seconds, 0.01));
}

Result<std::vector<double>> Evaluator::bench_once(const Candidate& c, const std::string& workdir, BenchRun& placed) {
  // kernel-time: the run's kernels timed inside it (libciq-inject, loaded
  // by the CUDA driver), each run into a directory of its own.
  bool kernel_time = std::any_of(setup_.objectives.begin(), setup_.objectives.end(),
                                 [](auto& o) { return o.kind == ObjectiveKind::kernel_time; });
  std::vector<std::pair<std::string, std::string>> env;
  std::string kernels_dir;
  auto new_kernels_dir = [&]() -> Result<void> {
    static std::atomic<int> runs{0};
    kernels_dir = join_path(workdir, "kernels/run" + std::to_string(runs++));
    if (auto made = make_dirs(kernels_dir); !made) return made.error();
    env = {{"CUDA_INJECTION64_PATH", setup_.inject_library}, {env_name(Env::kernel_trace), kernels_dir}};
    return {};
  };
  if (kernel_time)
    if (auto made = new_kernels_dir(); !made) return made.error();
  std::string gpu = acquire_gpu(&placed.gpu_wait, placed.gpu);
  placed.gpu = gpu;
  // The GPU's state and energy while the run lasts, where NVML is (a
  // scheduler's GPUs are not this machine's: not read).
  bool energy = std::any_of(setup_.objectives.begin(), setup_.objectives.end(), [](auto& o) { return o.needs_energy(); });
  auto measure = [&](GpuState& state) {
    std::optional<Nvml::Monitor> monitor;
    if (!setup_.slurm)
      if (Nvml* nvml = Nvml::get()) monitor.emplace(*nvml, gpu);
    auto step = run_step(StepKind::bench, setup_.bench, c, workdir, gpu, "bench.log", env);
    state = monitor ? monitor->stop() : GpuState{};
    return step;
  };
  GpuState state;
  auto step = measure(state);
  // A resident benchmark that started for this request spent its start-up
  // (a process, CUDA, its inputs: 1.7 s of a 2.7 s request, 1.5x the energy
  // of the next ones, measured on an H100) inside the energy read around
  // it, and its kernel trace holds the start-up's launches: ask again, and
  // keep the second.
  if ((energy || kernel_time) && step && step->started_server && step->run.succeeded()) {
    if (kernel_time)
      if (auto made = new_kernels_dir(); !made) return made.error();
    step = measure(state);
  }
  release_gpu(gpu);
  if (energy && state.read && state.energy_j > 0) warn_short_energy_run(state.seconds);
  placed.state = state;
  if (!step) return step.error();
  const RunResult& run = step->run;
  std::string output = run.out + "\n" + run.err, log = step->log;
  if (!run.succeeded())
    return make_error(run.timed_out ? "timeout" : "bench", failure_message("benchmark " + run.describe(), output, log));
  std::optional<profile::KernelTrace> trace;
  if (kernel_time) {
    auto read = profile::read_kernel_trace(kernels_dir);
    if (!read) return read.error();
    trace = std::move(*read);
  }
  std::vector<double> values;
  for (const auto& o : setup_.objectives) {
    if (!o.needs_benchmark()) continue;
    if (o.needs_energy()) {
      if (!state.read || state.energy_j < 0)
        return make_error("no-energy", "no energy reading for this run (NVML: " + std::string(state.read ? "no energy counter" : "not available") + ")");
      if (state.energy_j <= 0 && state.seconds >= 2.0) // twenty of the counter's 100 ms steps: it should have moved
        return make_error("no-energy", "the GPU's energy counter did not move during a run of " + format_number(state.seconds) +
                                           " s: the benchmark seems not to have used GPU '" + (gpu.empty() ? "0" : gpu) +
                                           "' (check --gpus and CUDA_VISIBLE_DEVICES)");
      if (state.energy_j <= 0)
        return make_error("no-energy", "the GPU's energy counter did not move during the run (" + format_number(state.seconds) +
                                           " s): the run is too short for NVML's counter; make it longer (more iterations)");
      values.push_back(o.kind == ObjectiveKind::energy ? state.energy_j : state.energy_j / std::max(state.seconds, 1e-6));
      continue;
    }
    if (o.kind == ObjectiveKind::kernel_time) {
      auto v = kernel_time_ms(o, *trace);
      if (!v) return make_error(v.error().code, v.error().message + " (kernel trace: " + kernels_dir + "; log: " + log + ")");
      values.push_back(*v);
      continue;
    }
    auto v = extract_metric(o, output);
    if (!v) return make_error(v.error().code, failure_message(v.error().message, output, log));
    values.push_back(*v);
  }
  return values;
}

// Why a trace shows the candidate was not compiled as asked; "" if it was.
// `dir` holds the trace: ptxas' records, and the NVVM stage's in units/
// (none for a unit whose cicc step the memo answered).
static std::string trace_problem(const std::vector<TracedModule>& trace, const std::string& dir,
                                 const spaces::ControlSet& controls, bool compiler) {
  if (!compiler) return "";
  if (trace.empty())
    return "no kernels were compiled through ciq-ptxas (build with CUDACXX=ciq-nvcc or TRITON_PTXAS_PATH=ciq-ptxas, "
           "and make the build recompile: e.g. build into {workdir})";
  for (const auto& m : trace)
    if (!m.controls_error.empty()) return "controls not applied: " + m.controls_error;
  if (!controls.ptxas_stage().empty() &&
      std::none_of(trace.begin(), trace.end(), [](const auto& m) { return m.controls_applied; }))
    return "no compiled kernel matched --kernels, so the controls were not applied";
  if (!controls.nvcc.empty()) {
    auto units = read_unit_trace(dir);
    if (!units) return units.error().message;
    for (const auto& u : *units)
      if (!u.controls_error.empty()) return "NVVM-stage controls not applied to " + u.unit + ": " + u.controls_error;
  }
  return "";
}

// What a warning says, without its numbers: "adjusting per thread register
// count of 16 to lower bound of 24" is the author's own warning when the
// default build says it of 8; "" for warnings that report on the compiled
// code (--warn-on-spills and the like: the user asked for those, and a
// candidate that spills was still compiled as asked).
static std::string warning_kind(const std::string& warning) {
  for (const char* report : {"Registers are spilled to local memory", "Local memory used for function", "Double is being used"})
    if (warning.find(report) != std::string::npos) return "";
  std::string kind;
  for (char ch : warning)
    if (!std::isdigit(static_cast<unsigned char>(ch))) kind += ch;
    else if (kind.empty() || kind.back() != '#') kind += '#';
  return kind;
}

std::string Evaluator::added_warning(const Candidate& c, const std::vector<TracedModule>& trace, const std::string& dir) {
  if (!setup_.compiler) return "";
  auto added = [&](const std::string& w) {
    std::string kind = warning_kind(w);
    if (kind.empty()) return false;
    return std::none_of(setup_.baseline_warnings.begin(), setup_.baseline_warnings.end(),
                        [&](const std::string& b) { return warning_kind(b) == kind; });
  };
  for (const auto& m : trace)
    for (const auto& w : m.warnings)
      if (added(w)) return w;
  spaces::ControlSet nvvm = space_.controls(c).nvcc_stage();
  if (nvvm.options.empty()) return "";
  std::string stage = spaces::format_control_set(nvvm);
  auto units = read_unit_trace(dir);
  std::vector<std::string> warnings;
  if (units && !units->empty()) {
    for (const auto& u : *units) warnings.insert(warnings.end(), u.warnings.begin(), u.warnings.end());
    std::lock_guard lock(mutex_);
    nvvm_warnings_[stage] = warnings;
  } else {
    std::lock_guard lock(mutex_);
    if (auto it = nvvm_warnings_.find(stage); it != nvvm_warnings_.end()) warnings = it->second;
  }
  for (const auto& w : warnings)
    if (added(w)) return w;
  return "";
}

// What a candidate compiled, as far as its objectives can see. When every
// benchmark objective is kernel-time, only the code of the kernels they time
// counts (a candidate whose timed kernels are byte-identical to a measured
// one's is that one, whatever it did to the others); otherwise every
// module's code. "" when some of it is unknown: then nothing is reused.
std::string Evaluator::code_digest(const std::vector<TracedModule>& trace, const Candidate& c) const {
  std::string digest;
  std::vector<std::string> timed; // kernel-time globs ("" = every kernel)
  bool whole = trace.empty();
  for (const auto& o : setup_.objectives) {
    if (o.kind == ObjectiveKind::kernel_time) timed.push_back(o.pattern);
    else if (o.needs_benchmark()) whole = true;
  }
  if (!whole && !timed.empty()) {
    std::map<std::string, std::string> code; // kernel -> its code (a kernel in several modules: each)
    for (const auto& m : trace)
      for (const auto& k : m.kernels) {
        bool counted = std::any_of(timed.begin(), timed.end(), [&](const std::string& g) { return g.empty() || glob_match(g, k.name); });
        if (!counted) continue;
        if (k.code.empty()) whole = true;
        code[k.name] += k.code.substr(0, 16) + ",";
      }
    // No timed kernel compiled: they come from elsewhere (a JIT at run
    // time, a library), so the modules built here say nothing of them.
    if (code.empty()) return "";
    for (const auto& [name, hashes] : code) digest += name + "=" + hashes + ";";
  }
  if (whole || digest.empty()) {
    digest.clear();
    for (const auto& m : trace) digest += m.code_digest.empty() ? "?" : m.code_digest.substr(0, 16);
  }
  if (trace.empty() || digest.find('?') != std::string::npos) return "";
  for (const auto& d : space_.dimensions)
    if (d.kind == DimensionKind::param) digest += ";" + d.knob + "=" + space_.param(c, d.knob);
  return digest;
}

// Same code and same parameters as something measured: its result, reused.
bool Evaluator::reuse_same_code(EvalRecord& r) {
  if (r.digest.empty() || setup_.build.empty()) return false;
  std::lock_guard lock(mutex_);
  auto it = by_digest_.find(r.digest);
  if (it == by_digest_.end()) return false;
  const EvalRecord& same = records_[it->second];
  r.evaluation = same.evaluation;
  r.samples = same.samples;
  r.status = EvalStatus::same_code;
  r.evaluation.reason = "same code as evaluation " + std::to_string(same.number);
  return true;
}

// The benchmark runs (a JIT build's trace read after them) and the check;
// why the candidate is invalid, or "".
std::string Evaluator::measure(const Candidate& c, EvalRecord& r, std::vector<TracedModule>& trace,
                               std::vector<std::vector<double>>& bench_values) {
  auto started = std::chrono::steady_clock::now();
  bool benchmarks = std::any_of(setup_.objectives.begin(), setup_.objectives.end(), [](auto& o) { return o.needs_benchmark(); });
  // Without --build the benchmark compiles (a JIT): it runs even when every
  // objective is ptxas', once, for the trace.
  if (benchmarks || compiles_when_benchmarked()) {
    if (benchmarks && per_gpu_baselines() && gpu_defaults_.empty() && is_default(c)) {
      if (auto why = measure_on_every_gpu(c, r, bench_values); !why.empty()) return why;
    } else {
      for (int i = 0; i < (benchmarks ? std::max(1, setup_.repeats) : 1); ++i) {
        BenchRun run;
        auto v = bench_once(c, r.workdir, run);
        r.gpu_wait_seconds += run.gpu_wait;
        if (run.state.read) r.gpu_states.push_back(run.state.json());
        if (!v) return v.error().message;
        bench_values.push_back(*v);
        if (benchmarks) r.run_gpus.push_back(run.gpu);
      }
    }
    if (compiles_when_benchmarked()) { // the benchmark compiled (JIT): the trace appears now
      auto jit = read_trace(join_path(r.workdir, "trace"));
      if (!jit) return jit.error().message;
      trace = std::move(*jit);
      if (auto problem = trace_problem(trace, join_path(r.workdir, "trace"), space_.controls(c), setup_.compiler); !problem.empty()) return problem;
      if (auto warning = added_warning(c, trace, join_path(r.workdir, "trace")); !warning.empty()) return k_unhonoured + warning;
      r.digest = code_digest(trace, c); // measured anyway, but pruning compares code
    }
  }
  if (!setup_.check.empty()) {
    std::string gpu = acquire_gpu(&r.gpu_wait_seconds);
    auto step = run_step(StepKind::check, setup_.check, c, r.workdir, gpu, "check.log");
    release_gpu(gpu);
    if (!step) return step.error().message;
    const RunResult& run = step->run;
    std::string output = run.out + "\n" + run.err;
    if (run.timed_out) return failure_message("check timed out", output, step->log);
    if (!run.succeeded()) return failure_message("wrong answer (check " + run.describe() + ")", output, step->log);
  }
  r.bench_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  return "";
}

// The default's runs with per-GPU baselines: --repeats on every GPU, the
// GPUs side by side as in the search; the runs kept in the order run 1 of
// each GPU, run 2 of each, ...
std::string Evaluator::measure_on_every_gpu(const Candidate& c, EvalRecord& r, std::vector<std::vector<double>>& bench_values) {
  struct Done {
    std::vector<double> values;
    BenchRun run;
    std::string error;
  };
  std::vector<std::vector<Done>> runs(slots_.size());
  std::vector<std::thread> threads;
  for (std::size_t g = 0; g < slots_.size(); ++g)
    threads.emplace_back([&, g] {
      for (int i = 0; i < std::max(1, setup_.repeats); ++i) {
        Done done;
        done.run.gpu = slots_[g];
        auto v = bench_once(c, r.workdir, done.run);
        if (v) done.values = std::move(*v);
        else done.error = v.error().message;
        runs[g].push_back(std::move(done));
        if (!v) return;
      }
    });
  for (auto& t : threads) t.join();
  for (std::size_t i = 0; i < std::size_t(std::max(1, setup_.repeats)); ++i)
    for (std::size_t g = 0; g < slots_.size(); ++g) {
      if (i >= runs[g].size()) continue;
      const Done& done = runs[g][i];
      r.gpu_wait_seconds += done.run.gpu_wait;
      if (done.run.state.read) r.gpu_states.push_back(done.run.state.json());
      if (!done.error.empty()) return "on GPU '" + slots_[g] + "': " + done.error;
      bench_values.push_back(done.values);
      r.run_gpus.push_back(slots_[g]);
    }
  return "";
}

// Each objective's value: the median of the benchmark runs (each on the
// first GPU's scale, with per-GPU baselines), or what ptxas reported in
// the trace. The samples stay as measured.
void Evaluator::score(EvalRecord& r, const std::vector<TracedModule>& trace, const std::vector<std::vector<double>>& bench_values) {
  std::size_t metric = 0;
  for (std::size_t k = 0; k < setup_.objectives.size(); ++k) {
    if (setup_.objectives[k].needs_benchmark()) {
      for (const auto& run : bench_values) r.samples[k].push_back(run[metric]);
      ++metric;
    } else {
      r.samples[k].push_back(trace_objective(setup_.objectives[k], trace, setup_.kernels));
    }
  }
  if (!r.run_gpus.empty() && gpu_defaults_.empty() && per_gpu_baselines() && r.candidate == space_.canonical(space_.default_candidate()))
    learn_gpu_defaults(r);
  for (std::size_t k = 0; k < setup_.objectives.size(); ++k) {
    const Objective& o = setup_.objectives[k];
    double value = r.samples[k].empty() ? NAN : r.samples[k].front();
    if (o.needs_benchmark()) {
      std::vector<double> scaled;
      for (std::size_t i = 0; i < r.samples[k].size(); ++i)
        scaled.push_back(scale(r.samples[k][i], i < r.run_gpus.size() ? r.run_gpus[i] : "", k));
      value = median(scaled);
    }
    r.evaluation.objectives.push_back(o.maximize ? -value : value);
  }
  r.evaluation.valid = true;
  r.status = EvalStatus::ok;
}

EvalRecord Evaluator::evaluate(const Candidate& c, int generation, int number) {
  EvalRecord r;
  r.number = number;
  r.generation = generation;
  r.candidate = space_.canonical(c);
  char dir[32];
  std::snprintf(dir, sizeof dir, "evals/%04d", number);
  r.workdir = join_path(setup_.run_dir, dir);
  r.samples.resize(setup_.objectives.size());
  auto invalid = [&](std::string why) {
    r.status = EvalStatus::invalid;
    r.evaluation.valid = false;
    // The first line is the reason (results.csv, the progress line); the
    // output's lines that failure_message() adds are the detail.
    auto nl = why.find('\n');
    r.evaluation.reason = why.substr(0, nl);
    r.detail = nl == std::string::npos ? "" : why.substr(nl + 1);
    return r;
  };

  // A number a killed run left free comes back with what its build had
  // written so far: every evaluation starts from an empty directory.
  remove_tree(r.workdir);
  auto started = std::chrono::steady_clock::now();
  auto trace = build(c, r.workdir);
  r.build_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  count_memo_steps(join_path(r.workdir, "trace"), r);
  if (!trace) return invalid(trace.error().message);
  bool benchmarks = std::any_of(setup_.objectives.begin(), setup_.objectives.end(), [](auto& o) { return o.needs_benchmark(); });
  if (!compiles_when_benchmarked() && (!setup_.build.empty() || !benchmarks)) {
    if (auto problem = trace_problem(*trace, join_path(r.workdir, "trace"), space_.controls(c), setup_.compiler); !problem.empty()) return invalid(problem);
    if (auto warning = added_warning(c, *trace, join_path(r.workdir, "trace")); !warning.empty()) return invalid(k_unhonoured + warning);
  }
  r.digest = code_digest(*trace, c);
  if (reuse_same_code(r)) return r;
  std::vector<std::vector<double>> bench_values; // per run
  if (auto why = measure(c, r, *trace, bench_values); !why.empty()) return invalid(why);
  score(r, *trace, bench_values);
  return r;
}

std::vector<Evaluation> Evaluator::evaluate_batch(const std::vector<Candidate>& batch, int generation) {
  std::vector<Evaluation> out(batch.size());
  std::vector<std::size_t> todo;
  {
    std::lock_guard lock(mutex_);
    for (std::size_t i = 0; i < batch.size(); ++i) {
      auto it = by_candidate_.find(space_.canonical(batch[i]));
      if (it != by_candidate_.end()) {
        out[i] = records_[it->second].evaluation;
        if (on_record) on_record(records_[it->second], true);
      } else {
        todo.push_back(i);
      }
    }
  }
  std::size_t next = 0;
  auto worker = [&] {
    while (true) {
      std::size_t i;
      int number;
      {
        std::lock_guard lock(mutex_);
        if (next >= todo.size()) return;
        i = todo[next++];
        if (free_numbers_.empty()) {
          number = next_number_++;
        } else {
          number = *free_numbers_.begin();
          free_numbers_.erase(free_numbers_.begin());
        }
      }
      EvalRecord r = evaluate(batch[i], generation, number);
      r.finished = std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
      std::lock_guard lock(mutex_);
      out[i] = r.evaluation;
      by_candidate_[r.candidate] = records_.size();
      if (r.status == EvalStatus::ok && !r.digest.empty()) by_digest_.emplace(r.digest, records_.size());
      records_.push_back(r);
      if (on_record) on_record(records_.back(), false);
    }
  };
  int jobs = std::max(1, std::min<int>(setup_.jobs, int(todo.size())));
  if (jobs == 1) {
    worker();
  } else {
    std::vector<std::thread> threads;
    for (int j = 0; j < jobs; ++j) threads.emplace_back(worker);
    for (auto& t : threads) t.join();
  }
  return out;
}

namespace {

// Replay: the recorded ground truth answers; nothing is built or run.
class ReplayEvaluator final : public Evaluator {
public:
  ReplayEvaluator(TuningSetup setup, const SearchSpace& space)
      : Evaluator(setup, space), data_(setup.replay), rng_(setup.replay_seed ^ 0x5eedf00dull) {}
  Result<std::vector<TracedModule>> build(const Candidate&, const std::string&) override {
    return std::vector<TracedModule>{}; // nothing to build
  }
  Result<std::vector<double>> bench_once(const Candidate& c, const std::string&, BenchRun&) override {
    std::lock_guard lock(mutex_);
    auto ms = data_->draw(c, rng_);
    if (!ms) return ms.error();
    return std::vector<double>{*ms};
  }

protected:
  bool compiles_when_benchmarked() const override { return false; }

private:
  std::shared_ptr<const ReplayData> data_;
  std::mutex mutex_;
  std::mt19937_64 rng_;
};

} // namespace

std::unique_ptr<Evaluator> make_evaluator(TuningSetup setup, const SearchSpace& space) {
  if (setup.replay) return std::make_unique<ReplayEvaluator>(std::move(setup), space);
  return std::make_unique<Evaluator>(std::move(setup), space);
}

} // namespace ciq::tuner
