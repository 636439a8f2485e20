#include "tuner/commands/campaign.h"

#include "spaces/control_set.h"
#include "tuner/measure/gpu_driver.h"
#include "tuner/commands/campaign_kernels.h"
#include "tuner/commands/campaign_phase.h"
#include "tuner/commands/campaign_runs.h"
#include "tuner/commands/campaign_table.h"
#include "tuner/commands/program_check.h"
#include "tuner/commands/replay_fallback.h"
#include "tuner/rundir/best_controls.h"
#include "tuner/rundir/campaign_file.h"
#include "tuner/rundir/command_line.h"
#include "tuner/rundir/lock.h"
#include "tuner/rundir/summary.h"
#include "utils/config.h"
#include "utils/files.h"
#include "utils/process.h"
#include "utils/text.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <mutex>
#include <optional>
#include <set>
#include <thread>
#include <unistd.h>

namespace ciq::tuner {

namespace {

/// A directory name for the i-th kernel: its number and a readable part.
std::string run_name(std::size_t i, const std::string& kernel) {
  char number[32];
  std::snprintf(number, sizeof number, "%03zu-", i);
  std::string readable;
  for (char c : kernel.substr(0, 40)) readable += std::isalnum(static_cast<unsigned char>(c)) || c == '_' ? c : '_';
  return number + readable;
}

// The winners of the kernels shipped so far (or waiting for the joint
// confirmation), each as a first guess for
// `r` (at most the 4 latest): its options as they are, its directives moved
// to `r`'s kernel (a maxnreg that won on one softmax is a good first guess
// for the next). Written to <campaign>/seeds/; the run skips one that does
// not fit its space (--seed-hint). Under the campaign's lock.
std::vector<std::string> seed_hints(const CampaignOptions& c, const std::vector<KernelResult>& results, const KernelResult& r) {
  std::vector<std::string> files;
  for (auto it = results.rbegin(); it != results.rend() && files.size() < 4; ++it) {
    const KernelResult& done = *it;
    // A shipped winner, or a replay winner waiting for the joint
    // confirmation (a first guess needs no more).
    bool waiting = done.phase == KernelPhase::confirm_jointly;
    if (&done == &r || (!waiting && (done.phase != KernelPhase::done || !done.shipped))) continue;
    auto won = read_controls_file(waiting ? done.to_confirm : best_controls_path(done.run_dir));
    if (!won) continue;
    spaces::ControlSet hint;
    hint.space = won->space;
    hint.options = won->options;
    if (auto k = won->kernels.find(done.kernel); k != won->kernels.end()) hint.kernels[r.kernel] = k->second;
    if (hint.empty()) continue;
    std::string dir = join_path(c.tune.out_dir, "seeds");
    std::string file = join_path(dir, base_name(r.run_dir) + "-from-" + base_name(done.run_dir) + ".controls");
    if (!make_dirs(dir) || !write_file_atomic(file, spaces::format_control_set(hint))) continue;
    files.push_back(file);
  }
  return files;
}

// The kernels of `group` (indices into `results`, sharing one run
// directory) tuned in one run, unless all are done; each one's outcome is
// its part of that run's summary.
template <class WriteSummary>
void run_together(const CampaignOptions& c, std::vector<KernelResult>& results, const std::vector<std::size_t>& group,
                  const std::string& gpus, std::mutex& mutex, WriteSummary& write_summary) {
  if (std::all_of(group.begin(), group.end(), [&](std::size_t i) { return results[i].phase == KernelPhase::done; })) return;
  const std::string& dir = results[group.front()].run_dir;
  if (auto removed = remove_summary(dir); !removed)
    std::fprintf(stderr, "ciq-tuner: warning: %s\n", printable(removed.error().message).c_str());
  std::vector<std::string> kernels;
  for (std::size_t i : group) kernels.push_back(results[i].kernel);
  RunOptions run = together_run(c, kernels, dir, gpus);
  {
    std::lock_guard lock(mutex);
    // One run tunes them all again, those an earlier attempt finished too:
    // each takes its part of this run's summary.
    for (std::size_t i : group) tune_together(results[i]);
    std::fprintf(stderr, "ciq-tuner: tuning %zu kernels together, each by its own time in the same program runs (%s)\n",
                 kernels.size(), printable(dir).c_str());
  }
  const auto started = std::chrono::steady_clock::now();
  auto ran = run_process(run);
  std::lock_guard lock(mutex);
  for (std::size_t i : group) advance(c, results[i], ran, started, i, results.size());
  write_summary();
}

// Confirms the winners waiting in confirm_jointly: one alone as any replay
// winner, several in one `run --separately` (joint_confirm_run) whose
// candidate is the union of their directives, each kernel's outcome its
// part of that run's summary. Under the lock (nothing else runs now).
template <class WriteSummary>
void confirm_jointly(const CampaignOptions& c, std::vector<KernelResult>& results, const std::string& gpus,
                     WriteSummary& write_summary) {
  std::vector<std::size_t> group;
  for (std::size_t i = 0; i < results.size(); ++i)
    if (results[i].phase == KernelPhase::confirm_jointly) group.push_back(i);
  if (group.empty()) return;
  std::string controls = group.size() == 1 ? results[group.front()].to_confirm : joint_dir(c) + ".controls";
  std::vector<std::string> kernels;
  auto fail = [&](std::size_t i, const std::string& why) { fail_joint(results[i], why); };
  if (group.size() > 1) {
    spaces::ControlSet all;
    for (std::size_t i : group) {
      auto set = read_controls_file(results[i].to_confirm);
      if (!set) {
        fail(i, "cannot read its winner's controls: " + set.error().message);
        continue;
      }
      all.space = set->space;
      for (auto& [kernel, knobs] : set->kernels) all.kernels[kernel].insert(knobs.begin(), knobs.end());
      kernels.push_back(results[i].kernel);
    }
    std::erase_if(group, [&](std::size_t i) { return results[i].phase == KernelPhase::failed; });
    if (auto w = write_file_atomic(controls, spaces::format_control_set(all)); !w) {
      for (std::size_t i : group) fail(i, w.error().message);
      group.clear();
    }
  }
  if (group.empty()) {
    write_summary();
    return;
  }
  RunOptions run;
  if (group.size() == 1) {
    KernelResult& r = results[group.front()];
    std::fprintf(stderr, "ciq-tuner: [%zu/%zu] %s: confirming %s in the program\n", group.front() + 1, results.size(),
                 printable(r.kernel).c_str(), printable(r.replay_controls).c_str());
    run = confirm_run(c, r, controls, reusable_discovery(c, results), gpus);
  } else {
    std::string dir = joint_dir(c);
    if (auto removed = remove_summary(dir); !removed)
      std::fprintf(stderr, "ciq-tuner: warning: %s\n", printable(removed.error().message).c_str());
    for (std::size_t i : group) results[i].run_dir = dir;
    std::fprintf(stderr, "ciq-tuner: confirming %zu kernels' replay winners together, each by its own time in the same program "
                         "runs (%s)\n", group.size(), printable(dir).c_str());
    run = joint_confirm_run(c, kernels, controls, reusable_discovery(c, results), dir, gpus);
  }
  const auto started = std::chrono::steady_clock::now();
  auto ran = run_process(run);
  for (std::size_t i : group) advance(c, results[i], ran, started, i, results.size());
  write_summary();
}

// Runs the kernels' phases until each is done, failed or waiting for the
// joint confirmation, --concurrent kernels at a time (slot i benchmarks on
// gpu_sets[i]), each outcome recorded in `results` and campaign.json as
// it ends; the kernels of `together` in one run; then the joint
// confirmation.
void run_kernels(const CampaignOptions& c, std::vector<KernelResult>& results, const std::vector<std::string>& gpu_sets,
                 const std::string& captures, const std::vector<std::size_t>& together) {
  std::mutex mutex;
  auto write_summary = [&] { // under the mutex
    if (auto w = write_file_atomic(campaign_path(c.tune.out_dir), to_json(results)); !w)
      std::fprintf(stderr, "ciq-tuner: warning: %s\n", w.error().message.c_str());
  };
  {
    std::lock_guard lock(mutex);
    write_summary();
  }
  // The work in order: each kernel alone, but those of `together` as one
  // run, where the first of them stands.
  std::vector<std::vector<std::size_t>> jobs;
  for (std::size_t i = 0; i < results.size(); ++i) {
    bool grouped = std::find(together.begin(), together.end(), i) != together.end();
    if (!grouped) jobs.push_back({i});
    else if (i == together.front()) jobs.push_back(together);
  }
  std::atomic<std::size_t> next{0};
  auto worker = [&](std::size_t slot) {
    for (std::size_t job = next++; job < jobs.size(); job = next++) {
      if (jobs[job].size() > 1) {
        run_together(c, results, jobs[job], gpu_sets[slot], mutex, write_summary);
        continue;
      }
      std::size_t i = jobs[job].front();
      KernelResult& r = results[i];
      const auto started = std::chrono::steady_clock::now();
      std::vector<std::string> hints;
      {
        std::lock_guard lock(mutex);
        if (!finished(r.phase)) hints = seed_hints(c, results, r);
      }
      for (;;) {
        std::optional<RunOptions> run;
        {
          std::lock_guard lock(mutex);
          run = phase_run(c, results, r, captures, gpu_sets[slot], hints, i);
        }
        if (!run) break;
        auto ran = run_process(*run);
        std::lock_guard lock(mutex);
        advance(c, r, ran, started, i, results.size());
        write_summary();
      }
    }
  };
  std::vector<std::thread> threads;
  for (int t = 0; t < c.concurrent; ++t) threads.emplace_back(worker, std::size_t(t));
  for (auto& t : threads) t.join();
  std::lock_guard lock(mutex);
  confirm_jointly(c, results, gpu_sets.front(), write_summary);
}

// Removes `dir` when it holds only a starting campaign's bookkeeping (its
// lock, command line, run id and working directory), its lock released.
void remove_bookkeeping_only(const std::string& dir) {
  auto entries = list_directory(dir);
  if (!entries) return;
  static const std::set<std::string> bookkeeping{"lock", "command-line", "run-id", "working-directory"};
  for (const auto& e : *entries)
    if (!bookkeeping.count(e)) return;
  release_run_directory();
  remove_tree(dir);
}

// --check-program N after a campaign that shipped: the program built fresh
// with the cache against without it, N interleaved pairs, its GPU time
// compared (program_check.h); said on stderr, warnings only.
void check_shipped(const CampaignOptions& c) {
  if (c.tune.setup.bench.empty() || !c.tune.setup.bench_server.empty()) {
    std::fprintf(stderr, "ciq-tuner: warning: --check-program runs the program of --bench (a process, not a --bench-server): not checked\n");
  } else {
    std::fprintf(stderr, "ciq-tuner: checking the program: %d fresh build(s) and run(s) with the cache and as many without it "
                         "(CIQ_DISABLE=1), interleaved\n", c.check_program);
    std::string dir = join_path(c.tune.out_dir, "program-check");
    auto checked = check_program(c.tune, dir, c.check_program);
    if (!checked) {
      std::fprintf(stderr, "ciq-tuner: warning: %s\n", printable_lines(checked.error().message).c_str());
    } else {
      std::fprintf(stderr, "ciq-tuner: program, with the cache against without: %s; runs in %s\n",
                   describe(*checked, c.check_program).c_str(), dir.c_str());
      if (checked->change > 0 && checked->p_value > 0.5)
        std::fprintf(stderr, "ciq-tuner: warning: the program's GPU time is longer with what the campaign shipped: the entries "
                             "together may not do what each did alone (ciq-cache list; ciq-cache rm KEY)\n");
    }
  }
}

// Each kernel's row as the campaign starts (or resumes): its run's
// directory (runs/NNN-name, or runs/together), its replay's when it has a
// capture (with the change a finished replay measured), its share of the
// program's time, and its phase (start_phase()).
std::vector<KernelResult> kernel_results(const CampaignOptions& c, const std::vector<std::string>& kernels,
                                         const std::map<std::string, double>& shares, const std::set<std::string>& replayable,
                                         const std::vector<std::size_t>& together) {
  std::vector<KernelResult> results(kernels.size());
  for (std::size_t i = 0; i < results.size(); ++i) {
    results[i].kernel = kernels[i];
    bool grouped = std::find(together.begin(), together.end(), i) != together.end();
    results[i].run_dir = join_path(join_path(c.tune.out_dir, "runs"), grouped ? "together" : run_name(i, results[i].kernel));
    if (replayable.count(results[i].kernel)) {
      results[i].replay_dir = results[i].run_dir + ".replay";
      // A resumed campaign's table keeps what the replay measured.
      if (auto said = read_summary(results[i].replay_dir); said && *said && (*said)->results)
        results[i].replay_change = relative_change(*(*said)->results);
    }
    if (auto it = shares.find(results[i].kernel); it != shares.end()) results[i].share = it->second;
    start_phase(c, results[i]);
  }
  return results;
}

} // namespace

int run_campaign(CampaignOptions c) {
  TuneOptions& o = c.tune;
  auto fail = [](const std::string& message) {
    std::fprintf(stderr, "ciq-tuner: error: %s\n", printable_lines(message).c_str());
    return 1;
  };
  if (auto checked = check_campaign_options(o, c.concurrent); !checked) return fail(checked.error().message);
  // --from-profile (now) times the program's kernels here, before anything
  // else: said first where no program can use a GPU.
  if (c.from_profile == "now")
    if (std::string reason = no_gpu_reason(); !reason.empty())
      return fail(no_gpu_message("--from-profile times the program's kernels", reason));
  std::vector<std::string> gpu_sets = gpu_sets_for(c);
  bool made_here = !o.resume && (o.out_dir.empty() || !path_exists(o.out_dir));
  auto out = output_directory(o.out_dir, "ciq-campaign");
  if (!out) return fail(out.error().message);
  o.out_dir = *out;
  static std::string interrupt_message;
  interrupt_message = "\nciq-tuner: campaign interrupted; continue with: ciq-tuner campaign --resume " + o.out_dir + "\n";
  kill_children_on_interrupt(interrupt_message.c_str(), /*forward=*/true);
  // One campaign per directory (each run locks its own as well).
  if (auto made = make_own_directory(o.out_dir); !made) return fail(made.error().message);
  if (auto locked = lock_run_directory(o.out_dir); !locked) return fail(locked.error().message);
  struct Unlock {
    ~Unlock() { release_run_directory(); }
  } unlock;
  // The runs' shared memo (campaign_runs.h): what an interrupted build left
  // in its scratch directories goes now, while no run builds.
  remove_tree(join_path(o.out_dir, "memo/tmp"));
  auto kernels = campaign_kernels(c, o, join_path(o.out_dir, "kernels.txt"));
  if (!kernels) {
    // A campaign that found nothing to tune leaves no directory it made
    // behind, unless it holds more than its bookkeeping (a profile's log
    // the error names).
    if (made_here) remove_bookkeeping_only(o.out_dir);
    return fail(kernels.error().message);
  }
  auto profiled = profiled_shares(o.out_dir);
  if (!profiled)
    std::fprintf(stderr, "ciq-tuner: warning: %s; the table shows no shares\n", printable(profiled.error().message).c_str());
  std::map<std::string, double> shares = profiled ? std::move(*profiled) : std::map<std::string, double>{};

  std::string captures = captures_root(c);
  std::set<std::string> replayable = replayable_kernels(captures);
  std::vector<std::size_t> together = together_kernels(c, *kernels, replayable);
  std::vector<KernelResult> results = kernel_results(c, *kernels, shares, replayable, together);
  if (auto made = make_dirs(join_path(o.out_dir, "runs")); !made) return fail(made.error().message);
  std::size_t finished = std::count_if(results.begin(), results.end(), [](auto& r) { return r.phase == KernelPhase::done; });
  std::fprintf(stderr, "ciq-tuner: campaign of %zu kernel(s), %zu done, %d at a time\n", results.size(), finished, c.concurrent);
  run_kernels(c, results, gpu_sets, captures, together);

  print_table(results);
  int failed = int(std::count_if(results.begin(), results.end(), [](auto& r) { return r.phase != KernelPhase::done; }));
  int shipped = int(std::count_if(results.begin(), results.end(), [](auto& r) { return r.shipped; }));
  std::fprintf(stderr, "ciq-tuner: campaign: %zu kernel(s), %d shipped, %d could not be tuned; %s\n", results.size(), shipped,
               failed, campaign_path(o.out_dir).c_str());
  if (c.check_program > 0 && shipped > 0) check_shipped(c);
  if (o.json) std::printf("%s", to_json(results).c_str());
  return failed ? 1 : 0;
}

} // namespace ciq::tuner
