#include "tuner/commands/campaign_kernels.h"

#include "tuner/measure/command.h"
#include "tuner/commands/campaign_table.h"
#include "tuner/run/captures.h"
#include "tuner/run/discovery.h"
#include "tuner/run/profiling.h"
#include "tuner/rundir/command_line.h"
#include "utils/files.h"
#include "utils/json.h"
#include "utils/text.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <optional>

namespace ciq::tuner {

namespace {

// --bench as the program a profiling run starts, its placeholders filled
// (`values`) with {workdir} = <dir>/work (made), the first GPU, no controls.
Result<std::vector<std::string>> program_argv(const TuneOptions& o, const std::string& dir,
                                              std::map<std::string, std::string>& values) {
  values = {{"workdir", join_path(dir, "work")}, {"gpu", o.setup.gpus.empty() ? "0" : o.setup.gpus.front()},
            {"controls", "/dev/null"}};
  if (auto made = make_dirs(values["workdir"]); !made) return made.error();
  return command_argv(o.setup.bench, values, o.setup.shell);
}

// One more run of the program (not the build: the profile's build trace
// kept the PTX), capturing the first launches of `chosen` into
// <campaign>/capture/captures, each tied to its module (attach_compiles).
// A fresh {workdir}: a JIT inside the program (Triton) compiles again, so
// that its compiles are traced with their PTX.
Result<void> capture_chosen(const TuneOptions& o, const std::vector<std::string>& chosen, const std::string& profile_build_dir) {
  std::string dir = join_path(o.out_dir, "capture");
  std::map<std::string, std::string> values;
  auto argv = program_argv(o, dir, values);
  if (!argv) return argv.error();
  std::string names;
  for (const auto& k : chosen) names += (names.empty() ? "" : ",") + k;
  std::fprintf(stderr, "ciq-tuner: capturing the launches of %zu kernel(s) in one more run of the program\n", chosen.size());
  const auto started = std::chrono::steady_clock::now();
  auto captured = capture_profile("", *argv, false, dir, o.setup.inject_library, values, /*quiet=*/true, names);
  if (!captured) return captured.error();
  std::fprintf(stderr, "ciq-tuner: the capturing run took %.0f s\n", seconds_since(started));
  if (!captured->program_describe.empty()) {
    std::fprintf(stderr, "ciq-tuner: warning: the capturing run ended with %s: every kernel is tuned by program runs\n",
                 captured->program_describe.c_str());
    return {};
  }
  auto outcome = attach_compiles(captured->captures_dir, {profile_build_dir, captured->build_dir});
  if (!outcome) return outcome.error();
  say_captures(*outcome, names, true);
  return {};
}

// Where the profile's traces are: a profiling run of the program now
// (--from-profile, its build and one run of --bench, into
// <campaign>/profile), or an earlier `ciq-tuner profile --out DIR`'s.
Result<void> profile_traces(const CampaignOptions& c, const TuneOptions& o, std::string& kernel_dir, std::string& build_dir) {
  if (c.from_profile == "now") {
    if (o.setup.bench.empty()) return make_error("invalid", "--from-profile runs --bench once to find the hot kernels: give --bench");
    if (!o.setup.bench_server.empty())
      return make_error("invalid", "--from-profile runs the program of --bench once, as a process, and with --bench-server "
                                   "--bench is a request, not a program: profile the program with `ciq-tuner profile --out DIR "
                                   "-- PROGRAM` and give --from-profile=DIR");
    std::string dir = join_path(o.out_dir, "profile");
    std::map<std::string, std::string> values;
    auto argv = program_argv(o, dir, values);
    if (!argv) return argv.error();
    const auto started = std::chrono::steady_clock::now();
    auto captured = capture_profile(o.setup.build, *argv, false, dir, o.setup.inject_library, values, /*quiet=*/true);
    if (!captured) return captured.error();
    std::fprintf(stderr, "ciq-tuner: the profiling run (build and program) took %.0f s\n", seconds_since(started));
    if (!captured->program_describe.empty()) {
      std::string log = join_path(dir, "profile.log");
      auto output = read_file(log);
      return make_error("profile", failure_message("the profiling run of --bench (" + o.setup.bench + ") ended with " +
                                                       captured->program_describe + no_driver_note(),
                                                   output ? *output : "", log));
    }
    kernel_dir = captured->kernel_dir;
    build_dir = captured->build_dir;
  } else {
    kernel_dir = join_path(c.from_profile, "kernels");
    build_dir = join_path(c.from_profile, "build-trace");
    if (!is_directory(kernel_dir))
      return make_error("invalid", "--from-profile=" + c.from_profile + ": no kernels/ in it (the --out DIR of a `ciq-tuner profile`)");
  }
  return {};
}

// --from-profile: the program's kernels by GPU time, hottest first, until
// `cover` of it; those this build did not compile are said and left out.
// Writes <campaign>/profile.json (the whole profile: the shares the table
// shows, also after --resume).
Result<std::vector<std::string>> profiled_kernels(const CampaignOptions& c, const TuneOptions& o) {
  std::string kernel_dir, build_dir;
  if (auto found = profile_traces(c, o, kernel_dir, build_dir); !found) return found.error();
  auto p = read_profile(kernel_dir, is_directory(build_dir) ? build_dir : "");
  if (!p) return p.error();
  auto rows = profile_rows(p->trace, p->build);
  if (auto w = write_file_atomic(join_path(o.out_dir, k_profile_file), profile_json(profile_of(p->trace, rows)) + "\n"); !w) return w.error();
  std::vector<std::string> chosen;
  std::optional<std::set<std::string>> own_build;  // the kernels --build compiles through ciq, once asked
  double covered = 0;
  for (const auto& row : rows) {
    if (covered >= c.cover) break;
    const auto& k = *row.kernel;
    covered += k.share;
    std::string label = printable(k.demangled.empty() ? k.kernel : k.demangled);
    if (!o.setup.kernels.empty() && !glob_match(o.setup.kernels, k.kernel) && !glob_match(o.setup.kernels, k.demangled)) {
      std::fprintf(stderr, "ciq-tuner: %5.1f%% %s: not selected by --kernels\n", 100 * k.share, label.c_str());
      continue;
    }
    if (row.origins.empty()) {
      // The profile's build trace does not name it (a profile taken without
      // --build has none): the campaign's own --build says, by one traced
      // default build, made at the first such kernel.
      if (!own_build && !o.setup.build.empty()) {
        auto found = discover_kernels(o);
        if (!found) return found.error();
        own_build.emplace(found->begin(), found->end());
      }
      if (!own_build || !own_build->count(k.kernel)) {
        std::fprintf(stderr, "ciq-tuner: %5.1f%% %s: not compiled by %s through ciq (a library's, or built elsewhere): left out\n",
                     100 * k.share, label.c_str(), o.setup.build.empty() ? "the profiled build (give --build)" : "this build");
        continue;
      }
    }
    std::fprintf(stderr, "ciq-tuner: %5.1f%% %s: to tune\n", 100 * k.share, label.c_str());
    chosen.push_back(k.kernel);
  }
  std::fprintf(stderr, "ciq-tuner: the first %.1f%% of the program's GPU time (--cover %.0f%%): %zu kernel(s) to tune\n",
               100 * std::min(covered, 1.0), 100 * c.cover, chosen.size());
  if (c.capture && c.from_profile == "now" && !chosen.empty()) {
    if (auto captured = capture_chosen(o, chosen, build_dir); !captured) return captured.error();
  }
  return chosen;
}

} // namespace

// Two searches timing on one GPU disturb each other: locally, each
// concurrent search gets GPUs of its own, unless a scheduler places the
// benchmarks. There are enough (check_campaign_options()).
std::vector<std::string> gpu_sets_for(const CampaignOptions& c) {
  const TuneOptions& o = c.tune;
  std::vector<std::string> sets(std::size_t(c.concurrent));
  if (!campaign_needs_gpus(o, c.concurrent)) return sets;
  for (std::size_t g = 0; g < o.setup.gpus.size(); ++g) {
    std::string& set = sets[g % sets.size()];
    set += (set.empty() ? "" : ",") + o.setup.gpus[g];
  }
  return sets;
}

Result<std::map<std::string, double>> profiled_shares(const std::string& out_dir) {
  std::map<std::string, double> shares;
  std::string path = join_path(out_dir, k_profile_file);
  if (!path_exists(path)) return shares;
  auto profile = read_profile_file(path);
  if (!profile) return profile.error();
  for (const auto& k : profile->kernels) shares[k.kernel] = k.share;
  return shares;
}

Result<std::vector<std::string>> campaign_kernels(const CampaignOptions& c, TuneOptions& o, const std::string& list_path) {
  std::vector<std::string> kernels;
  if (o.resume) {
    auto text = read_file(list_path);
    if (!text) return make_error("invalid", "nothing to resume: '" + o.out_dir + "' holds no campaign (" + text.error().message + ")");
    for (auto line : split(*text, '\n'))
      if (!trim(line).empty()) kernels.emplace_back(trim(line));
    std::fprintf(stderr, "ciq-tuner: resuming campaign %s (%zu kernels)\n", o.out_dir.c_str(), kernels.size());
    return kernels;
  }
  if (path_exists(list_path)) return make_error("invalid", "'" + o.out_dir + "' already holds a campaign; continue it with --resume " + o.out_dir);
  if (auto made = make_own_directory(o.out_dir); !made) return made.error();
  if (auto w = save_command_line(o.out_dir, o.command_line); !w) return w.error();
  // --resume from elsewhere starts the kernels not yet run here, as a run's does.
  if (auto w = save_working_directory(o.out_dir); !w) return w.error();
  auto found = c.from_profile.empty() ? discover_kernels(o) : profiled_kernels(c, o);
  if (!found) return found.error();
  if (found->empty())
    return make_error("invalid", c.from_profile.empty() ? "the discovery build compiled no kernel that --kernels selects"
                                                        : "none of the program's hot kernels was compiled by this build through ciq");
  std::string list;
  for (const auto& k : *found) list += k + "\n";
  if (auto w = write_file_atomic(list_path, list); !w) return w.error();
  return found;
}


std::string captures_root(const CampaignOptions& c) {
  if (!c.capture || c.from_profile.empty()) return "";
  if (c.from_profile == "now") return join_path(join_path(c.tune.out_dir, "capture"), "captures");
  return join_path(c.from_profile, "captures");
}

std::set<std::string> replayable_kernels(const std::string& root) {
  std::set<std::string> kernels;
  if (root.empty() || !is_directory(root)) return kernels;
  auto set = formats::read_capture_set(root);
  if (!set) return kernels;
  for (const auto& capture : set->captures)
    if (capture.has_compile) kernels.insert(capture.kernel);
  return kernels;
}

std::vector<std::size_t> together_kernels(const CampaignOptions& c, const std::vector<std::string>& kernels,
                                          const std::set<std::string>& replayable) {
  std::vector<std::size_t> program;
  for (std::size_t i = 0; i < kernels.size(); ++i)
    if (!replayable.count(kernels[i])) program.push_back(i);
  if (!c.together || program.size() < 2) return {};
  const auto& objectives = c.tune.setup.objectives;
  if (objectives.size() != 1 || objectives[0].kind != ObjectiveKind::kernel_time) {
    std::fprintf(stderr, "ciq-tuner: tuning the %zu kernels that go to program runs one at a time: together, each is judged "
                         "by its own time, which needs --objective kernel-time as the only objective\n", program.size());
    return {};
  }
  return program;
}

} // namespace ciq::tuner
