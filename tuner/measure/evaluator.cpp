#include "tuner/measure/evaluator.h"

#include "spaces/control_set.h"
#include "tuner/measure/code_identity.h"
#include "tuner/measure/command.h"
#include "tuner/measure/replay_evaluator.h"
#include "tuner/measure/scoring.h"
#include "utils/files.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <thread>

namespace ciq::tuner {

namespace {

double seconds_since(std::chrono::steady_clock::time_point started) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
}

} // namespace

Evaluator::Evaluator(TuningSetup setup, const SearchSpace& space)
    : setup_(std::move(setup)), space_(space), default_key_(space.canonical(space.default_candidate())), executor_(setup_.executor ? setup_.executor : make_executor(setup_)),
      gpus_(executor_->slots()), steps_(setup_, space_, *executor_), honoured_(setup_.compiler, setup_.baseline_warnings) {}

bool Evaluator::per_gpu_baselines() const {
  return per_gpu_baselines_apply(setup_, gpus_.slots().size(), executor_->schedules_gpus());
}

bool Evaluator::is_default(const std::string& canonical) const {
  return canonical == default_key_;
}

bool Evaluator::benchmarks() const {
  return std::any_of(setup_.objectives.begin(), setup_.objectives.end(), [](auto& o) { return o.needs_benchmark(); });
}

void Evaluator::learn_gpu_defaults(const EvalRecord& def) {
  LearntDefaults learnt = tuner::learn_gpu_defaults(setup_.objectives, gpus_.slots(), def);
  if (!learnt.warning.empty()) std::fprintf(stderr, "ciq-tuner: warning: %s\n", learnt.warning.c_str());
  else gpu_defaults_ = std::move(learnt.defaults);
}

void Evaluator::preload(const std::vector<EvalRecord>& records) {
  for (const auto& r : records) {
    if (by_candidate_.count(r.candidate)) continue;
    if (is_default(r.candidate)) {
      // A default that failed (a bad GPU, a broken build since fixed) ended
      // that run: the resumed one measures it again rather than fail again.
      if (r.status != EvalStatus::ok) continue;
      if (per_gpu_baselines()) learn_gpu_defaults(r);
    }
    by_candidate_[r.candidate] = records_.size();
    if (!r.digest.empty() && r.status == EvalStatus::ok) by_digest_.emplace(r.digest, records_.size());
    next_number_ = std::max(next_number_, r.number + 1);
    records_.push_back(r);
  }
  free_numbers_.clear();
  for (int n = 0; n < next_number_; ++n) free_numbers_.insert(n);
  for (const auto& r : records_) free_numbers_.erase(r.number);
}

Result<std::vector<TracedModule>> Evaluator::build(const ResolvedCandidate& c, const std::string& workdir) {
  if (auto made = make_dirs(workdir); !made) return made.error();
  remove_tree(join_path(workdir, "trace"));
  if (auto w = write_file_atomic(controls_path(workdir), setup_.compiler ? c.controls_text : ""); !w) return w.error();
  if (!setup_.build.empty()) {
    auto step = steps_.run(StepKind::build, setup_.build, c, workdir, setup_.gpus.empty() ? "" : setup_.gpus.front(), "build.log");
    if (!step) return step.error();
    const RunResult& run = step->run;
    if (!run.succeeded()) return make_error("build", failure_message("build " + run.describe(), run.out + "\n" + run.err, step->log));
  }
  return read_trace(join_path(workdir, "trace"));
}

Result<std::vector<double>> Evaluator::bench_once(const ResolvedCandidate& c, const std::string& workdir, BenchRun& run) {
  return run_benchmark(steps_, gpus_, c, workdir, run);
}

bool Evaluator::reuse_same_code(EvalRecord& r) {
  if (r.digest.empty() || setup_.build.empty()) return false;
  std::lock_guard lock(mutex_);
  auto it = by_digest_.find(r.digest);
  if (it == by_digest_.end()) return false;
  tuner::reuse_same_code(r, records_[it->second]);
  return true;
}

std::string Evaluator::measure(const ResolvedCandidate& c, EvalRecord& r, std::vector<TracedModule>& trace,
                               std::vector<std::vector<double>>& bench_values) {
  auto started = std::chrono::steady_clock::now();
  bool benchmarks = this->benchmarks();
  // Without --build the benchmark compiles (a JIT): it runs even when every
  // objective is ptxas', once, for the trace.
  if (benchmarks || compiles_when_benchmarked()) {
    if (benchmarks && per_gpu_baselines() && gpu_defaults_.empty() && is_default(r.candidate)) {
      if (auto why = measure_on_every_gpu(c, r, bench_values); !why.empty()) return why;
    } else {
      for (int i = 0; i < (benchmarks ? std::max(1, setup_.repeats) : 1); ++i) {
        BenchRun run;
        auto v = bench_once(c, r.workdir, run);
        r.gpu_wait_seconds += run.gpu_wait;
        if (run.state.read) r.gpu_states.push_back(run.state);
        if (!v) return v.error().message;
        bench_values.push_back(*v);
        if (benchmarks) r.run_gpus.push_back(run.gpu);
        for (const auto& [kernel, ms] : run.kernel_ms) r.kernel_samples[kernel].push_back(ms);
      }
    }
    if (compiles_when_benchmarked()) { // the benchmark compiled (JIT): the trace appears now
      auto jit = read_trace(join_path(r.workdir, "trace"));
      if (!jit) return jit.error().message;
      trace = std::move(*jit);
      if (auto why = honoured_.why_not(trace, join_path(r.workdir, "trace"), c.controls); !why.empty()) return why;
      r.digest = code_digest(trace, setup_.objectives, c.params); // measured anyway, but pruning compares code
    }
  }
  if (auto why = check(c, r); !why.empty()) return why;
  r.bench_seconds = seconds_since(started);
  return "";
}

std::string Evaluator::check(const ResolvedCandidate& c, EvalRecord& r) {
  if (setup_.check.empty()) return "";
  std::string gpu = gpus_.acquire(&r.gpu_wait_seconds);
  auto step = steps_.run(StepKind::check, setup_.check, c, r.workdir, gpu, "check.log");
  gpus_.release(gpu);
  if (!step) return step.error().message;
  const RunResult& run = step->run;
  std::string output = run.out + "\n" + run.err;
  if (run.timed_out) return failure_message("check timed out", output, step->log);
  if (!run.succeeded()) return failure_message("wrong answer (check " + run.describe() + ")", output, step->log);
  return "";
}

// The GPUs side by side as in the search; the runs kept in the order run 1
// of each GPU, run 2 of each, ...
std::string Evaluator::measure_on_every_gpu(const ResolvedCandidate& c, EvalRecord& r, std::vector<std::vector<double>>& bench_values) {
  struct Done {
    std::vector<double> values;
    BenchRun run;
    std::string error;
  };
  const std::vector<std::string>& slots = gpus_.slots();
  int repeats = std::max(1, setup_.repeats);
  std::vector<std::vector<Done>> runs(slots.size());
  std::vector<std::thread> threads;
  for (std::size_t g = 0; g < slots.size(); ++g)
    threads.emplace_back([&, g] {
      for (int i = 0; i < repeats; ++i) {
        Done done;
        done.run.gpu = slots[g];
        auto v = bench_once(c, r.workdir, done.run);
        if (v) done.values = std::move(*v);
        else done.error = v.error().message;
        runs[g].push_back(std::move(done));
        if (!v) return;
      }
    });
  for (auto& t : threads) t.join();
  for (std::size_t i = 0; i < std::size_t(repeats); ++i)
    for (std::size_t g = 0; g < slots.size(); ++g) {
      if (i >= runs[g].size()) continue;
      const Done& done = runs[g][i];
      r.gpu_wait_seconds += done.run.gpu_wait;
      if (done.run.state.read) r.gpu_states.push_back(done.run.state);
      if (!done.error.empty()) return "on GPU '" + slots[g] + "': " + done.error;
      bench_values.push_back(done.values);
      r.run_gpus.push_back(slots[g]);
      for (const auto& [kernel, ms] : done.run.kernel_ms) r.kernel_samples[kernel].push_back(ms);
    }
  return "";
}

// The samples stay as measured; the values are on the first GPU's scale.
void Evaluator::score(EvalRecord& r, const std::vector<TracedModule>& trace, const std::vector<std::vector<double>>& bench_values) {
  record_samples(setup_.objectives, setup_.kernels, trace, bench_values, r.samples);
  if (!r.run_gpus.empty() && gpu_defaults_.empty() && per_gpu_baselines() && is_default(r.candidate)) learn_gpu_defaults(r);
  r.evaluation.objectives = objective_values(setup_.objectives, r.samples, r.run_gpus, gpu_defaults_);
  r.evaluation.valid = true;
  r.status = EvalStatus::ok;
}

EvalRecord Evaluator::evaluate(const ResolvedCandidate& c, int generation, int number) {
  EvalRecord r;
  r.number = number;
  r.generation = generation;
  r.candidate = c.canonical;
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
  r.build_seconds = seconds_since(started);
  MemoSteps memo = count_memo_steps(join_path(r.workdir, "trace"));
  r.steps_run += memo.run;
  r.steps_reused += memo.reused;
  if (!trace) return invalid(trace.error().message);
  if (!compiles_when_benchmarked() && (!setup_.build.empty() || !benchmarks()))
    if (auto why = honoured_.why_not(*trace, join_path(r.workdir, "trace"), c.controls); !why.empty()) return invalid(why);
  r.digest = code_digest(*trace, setup_.objectives, c.params);
  if (reuse_same_code(r)) return r;
  std::vector<std::vector<double>> bench_values; // per run
  if (auto why = measure(c, r, *trace, bench_values); !why.empty()) return invalid(why);
  score(r, *trace, bench_values);
  return r;
}

int Evaluator::take_number() {
  if (free_numbers_.empty()) return next_number_++;
  int number = *free_numbers_.begin();
  free_numbers_.erase(free_numbers_.begin());
  return number;
}

std::vector<Evaluation> Evaluator::evaluate_batch(const std::vector<Candidate>& batch, int generation) {
  std::vector<Evaluation> out(batch.size());
  std::vector<ResolvedCandidate> resolved;
  resolved.reserve(batch.size());
  for (const auto& c : batch) resolved.push_back(space_.resolve(c));
  std::vector<std::size_t> todo;
  {
    std::lock_guard lock(mutex_);
    for (std::size_t i = 0; i < batch.size(); ++i) {
      auto it = by_candidate_.find(resolved[i].canonical);
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
        number = take_number();
      }
      EvalRecord r = evaluate(resolved[i], generation, number);
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

std::unique_ptr<Evaluator> make_evaluator(TuningSetup setup, const SearchSpace& space) {
  if (setup.replay) return std::make_unique<ReplayEvaluator>(setup, space);
  return std::make_unique<Evaluator>(std::move(setup), space);
}

} // namespace ciq::tuner
