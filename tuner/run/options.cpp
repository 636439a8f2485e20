#include "tuner/run/options.h"

#include "tuner/measure/executor.h"
#include "tuner/measure/gpu_driver.h"
#include "tuner/measure/gpu_monitor.h"
#include "tuner/run/profiling.h"
#include "utils/config.h"
#include "utils/files.h"
#include "utils/redis.h"
#include "utils/text.h"

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <sys/stat.h>
#include <thread>
#include <unistd.h>

namespace ciq::tuner {

namespace {

// --metric, --objective and --direction.
Result<void> set_objectives(const GivenOptions& given, TuneOptions& o) {
  for (const auto& m : given.metrics) {
    auto obj = metric_objective(m);
    if (!obj) return obj.error();
    o.setup.objectives.push_back(*obj);
  }
  for (const auto& name : given.objectives) {
    auto obj = builtin_objective(name);
    if (!obj) return obj.error();
    o.setup.objectives.push_back(*obj);
  }
  for (std::size_t i = 0; i < o.setup.objectives.size(); ++i)
    for (std::size_t j = 0; j < i; ++j)
      if (o.setup.objectives[i].name == o.setup.objectives[j].name)
        return make_error(ciq::errc::usage, "objective '" + o.setup.objectives[i].name + "' is given twice (--metric/--objective)");
  for (std::size_t i = 0; i < given.directions.size(); ++i) {
    if (given.directions[i] != "min" && given.directions[i] != "max")
      return make_error(ciq::errc::usage, "--direction must be min or max, not '" + given.directions[i] + "'");
    if (i >= o.setup.objectives.size()) return make_error(ciq::errc::usage, "more --direction values than objectives");
    o.setup.objectives[i].maximize = given.directions[i] == "max";
  }
  // kernel-time alone times the targeted kernels; it needs libciq-inject.
  for (auto& obj : o.setup.objectives) {
    if (obj.kind != ObjectiveKind::kernel_time) continue;
    if (obj.pattern.empty()) obj.pattern = o.setup.kernels;
    if (!path_exists(o.setup.inject_library))
      return make_error(ciq::errc::not_found, "--objective " + obj.name + " needs the kernel-timing library, not found at " +
                                         o.setup.inject_library + ": " + inject_library_missing());
  }
  return {};
}

// --executor and the --slurm-* options.
Result<void> set_executor(const GivenOptions& given, TuneOptions& o) {
  if (given.executor == "local") return {};
  if (given.executor != "slurm") return make_error(ciq::errc::usage, "--executor must be local or slurm, not '" + given.executor + "'");
  o.setup.slurm = given.slurm;
  return {};
}

// --prefer: an objective's name or its number from 1.
Result<void> set_prefer(const GivenOptions& given, TuneOptions& o) {
  if (given.prefer.empty()) return {};
  std::size_t found = SIZE_MAX;
  for (std::size_t k = 0; k < o.setup.objectives.size(); ++k)
    if (o.setup.objectives[k].name == given.prefer || std::to_string(k + 1) == given.prefer) found = k;
  if (found == SIZE_MAX) {
    std::string names;
    for (const auto& obj : o.setup.objectives) names += (names.empty() ? "" : ", ") + obj.name;
    return make_error(ciq::errc::usage, "--prefer " + given.prefer + " is none of the objectives (" + names + "; or their number from 1)");
  }
  o.prefer = found;
  return {};
}

// energy, power: read through NVML on the benchmark's GPU; refused before
// any work where that cannot be done.
Result<void> check_energy(const TuneOptions& o) {
  for (const auto& obj : o.setup.objectives) {
    if (!obj.needs_energy()) continue;
    if (o.setup.slurm)
      return make_error(ciq::errc::usage, "--objective " + obj.name + " reads the GPU's energy counter on this machine: not with --executor slurm");
    std::string why;
    Nvml* nvml = Nvml::get(&why);
    if (!nvml) return make_error(ciq::errc::not_found, "--objective " + obj.name + " needs NVML (libnvidia-ml.so.1, from the NVIDIA driver): " + why);
    std::string gpu = o.setup.gpus.empty() ? "" : o.setup.gpus.front();
    if (auto e = nvml->energy_mj(gpu); !e) return make_error("unsupported", "--objective " + obj.name + ": " + e.error().message);
    break;
  }
  return {};
}

// kernel-time times the kernels on this machine's GPU (a Slurm job's is
// elsewhere): refused before anything is built where no program can use
// one, with what to do instead.
Result<void> check_gpu(const GivenOptions& given, const TuneOptions& o) {
  if (o.setup.slurm) return {};
  for (const auto& obj : o.setup.objectives) {
    if (obj.kind != ObjectiveKind::kernel_time) continue;
    // Said of the option the user gave: a campaign's --from-profile chose
    // kernel-time when no --objective was given.
    std::string what = given.objective_from.empty() ? "--objective " + obj.name + " times the kernels"
                                                    : given.objective_from + " times the program's kernels";
    if (std::string reason = no_gpu_reason(); !reason.empty())
      return make_error("no-gpu", no_gpu_message(what, reason));
    break;
  }
  return {};
}

// The commands, how they run, and the objectives (o.setup).
Result<void> set_setup(const GivenOptions& given, TuneOptions& o) {
  TuningSetup& s = o.setup;
  s.build = given.build;
  s.bench = given.bench;
  s.check = given.check;
  s.bench_server = given.bench_server;
  s.shell = given.shell;
  s.timeout = given.timeout;
  s.server_start = given.server_start;
  s.repeats = given.repeats;
  s.kernels = given.kernels;
  s.inject_library = inject_library();
  // Builds take one CPU each and benchmarks queue for the GPUs: half the
  // CPUs keeps the GPU fed and leaves room for the benchmark's own host side.
  // Only builds into {workdir} can overlap safely, and a replay stays
  // reproducible only one evaluation at a time: otherwise one.
  bool separate_builds = given.build.find("{workdir}") != std::string::npos;
  int auto_jobs = separate_builds && given.replay.empty() ? std::clamp(int(std::thread::hardware_concurrency()) / 2, 1, 8) : 1;
  s.jobs = given.jobs != 0 ? given.jobs : auto_jobs;
  s.memo = given.memo;
  s.memo_dir = given.memo_dir;
  auto gpus = parse_gpu_list(given.gpus);
  if (!gpus) return gpus.error();
  s.gpus = std::move(*gpus);
  s.gpu_baselines = given.gpu_baselines;
  if (auto r = set_objectives(given, o); !r) return r.error();
  if (auto r = set_executor(given, o); !r) return r.error();
  if (auto r = set_prefer(given, o); !r) return r.error();
  return check_energy(o);
}

// The search and what the run does with its result.
Result<void> set_search(const GivenOptions& given, TuneOptions& o) {
  o.space = given.space;
  if (given.stages != "all" && given.stages != "ptxas" && given.stages != "nvcc")
    return make_error(ciq::errc::usage, "--stages must be all, ptxas or nvcc, not '" + given.stages + "'");
  o.stages = given.stages;
  o.params = given.params;
  o.seeds = given.seed_controls;
  o.seed_hints = given.seed_hints;
  o.occupancy_probes = given.occupancy_probes;
  o.prune = given.prune;
  o.search.budget = given.budget;
  o.search.generations = given.generations;
  o.search.pool = given.pool;
  o.search.cull = given.cull;
  o.search.mutate_rate = given.mutate_rate;
  o.search.seed = given.seed;
  o.out_dir = given.resume.empty() ? given.out : given.resume;
  o.resume = !given.resume.empty();
  o.min_effect = given.min_effect_percent / 100;
  o.verify_runs = given.verify_runs;
  o.allow_unsafe = given.allow_unsafe;
  o.ship = !given.no_ship;
  o.replaces_run = given.replaces_run;
  o.discovery_from = given.discovery_from;
  o.json = given.json;
  o.cache_dir = given.cache_dir;
  o.replay = given.replay;
  o.acf_candidates = given.acf_candidates;
  if (!given.publish.empty()) {
    auto url = publish_url(given.publish, given.publish_in_env);
    if (!url) return url.error();
    o.publish = *url;
  }
  if (given.strategy != "genetic" && given.strategy != "generational" && given.strategy != "random")
    return make_error(ciq::errc::usage, "--strategy must be genetic, generational or random, not '" + given.strategy + "'");
  o.separately = given.separately;
  if (o.separately) {
    bool kernel_time = o.setup.objectives.size() == 1 && o.setup.objectives[0].kind == ObjectiveKind::kernel_time;
    if (!kernel_time)
      return make_error(ciq::errc::usage, "--separately judges each targeted kernel by its own time in the program: give --objective "
                                 "kernel-time[:GLOB] as the only objective");
    if (!o.params.empty())
      return make_error(ciq::errc::usage, "--separately tunes each kernel's own compiler knobs; a --param changes the whole program "
                                 "(tune it in a run without --separately)");
    if (!o.replay.empty()) return make_error(ciq::errc::usage, "--separately needs kernel times measured in the program, not --replay");
  }
  o.random_search = given.strategy == "random";
  o.generational = given.strategy == "generational";
  o.command_line = given.command_line;
  return {};
}

// Why the cache at `dir` cannot be written (it, or the nearest directory
// that exists above it, is not a writable directory); "" when it can.
std::string unwritable_cache(const std::string& dir) {
  std::string existing = dir;
  while (!path_exists(existing) && dir_name(existing) != existing) existing = dir_name(existing);
  if (!is_directory(existing))
    return existing == dir ? "'" + dir + "' is not a directory" : "'" + existing + "' (above it) is not a directory";
  if (::access(existing.c_str(), W_OK | X_OK) != 0) return "'" + existing + "' is not writable: " + std::strerror(errno);
  return "";
}

// --replay: its file read, its objective (the recorded time) set, and
// nothing shipped.
Result<void> prepare_replay(TuneOptions& o) {
  if (!o.setup.build.empty() || !o.setup.bench.empty() || !o.setup.check.empty())
    return make_error(ciq::errc::usage, "--replay answers evaluations from its file: give no --build, --bench or --check");
  if (!o.setup.objectives.empty()) return make_error(ciq::errc::usage, "--replay's objective is the recorded time: give no --metric or --objective");
  auto data = ReplayData::load(o.replay);
  if (!data) return data.error();
  o.setup.replay = *data;
  o.setup.replay_seed = o.search.seed;
  auto objective = metric_objective("([0-9.]+)");
  if (!objective) return objective.error();
  objective->name = "replay:ms";
  o.setup.objectives = {*objective};
  o.ship = false;
  return {};
}

// A cache named by the user (--cache-dir, CIQ_CACHE_DIR) is created if
// missing, but not below a directory that does not exist: a typo would
// ship where the wrappers never look (as ciq-cache put refuses it). Found
// out now, not after the whole search, when shipping.
Result<void> prepare_cache(TuneOptions& o) {
  bool named = !o.cache_dir.empty() || !env(Env::cache_dir).empty();
  if (o.cache_dir.empty()) o.cache_dir = cache_directory();
  if ((!o.ship || o.space == "none") && o.acf_candidates.empty()) return {};
  if (std::string why = unwritable_cache(o.cache_dir); !why.empty())
    return make_error("invalid", "cannot use the cache " + o.cache_dir + ": " + why + " (give a writable --cache-dir, or --no-ship)");
  std::string parent = dir_name(o.cache_dir);
  if (named && !path_exists(o.cache_dir) && !is_directory(parent))
    return make_error("invalid", "will not create the cache directory '" + o.cache_dir + "': its parent '" + parent +
                                     "' does not exist (a typo?). Create it first (mkdir -p " + parent +
                                     ") or fix --cache-dir / CIQ_CACHE_DIR, or give --no-ship");
  return {};
}

} // namespace

Result<std::vector<std::string>> parse_gpu_list(const std::string& list) {
  std::vector<std::string> gpus;
  if (list.empty()) return gpus;
  for (auto part : split(list, ',')) {
    std::string_view g = trim(part);
    if (g.empty()) return make_error(ciq::errc::usage, "--gpus '" + list + "' has an empty entry: give GPUs as 0,1 (indices or UUIDs)");
    if (std::find(gpus.begin(), gpus.end(), g) != gpus.end())
      return make_error(ciq::errc::usage, "--gpus names GPU '" + std::string(g) + "' twice: each benchmark slot is one GPU");
    gpus.emplace_back(g);
  }
  return gpus;
}

Result<TuneOptions> tune_options(const GivenOptions& given) {
  TuneOptions o;
  if (auto r = set_setup(given, o); !r) return r.error();
  if (auto r = set_search(given, o); !r) return r.error();
  if (given.verify_runs < 2)
    return make_error(ciq::errc::usage, "--verify-runs " + std::to_string(given.verify_runs) + ": give 2 or more interleaved runs per side: "
                               "the verification's Welch's t-test needs at least 2 pairs to estimate the variance");
  if (given.budget < 1 || given.pool < 2 || given.repeats < 1 || o.setup.jobs < 1 || given.verify_runs < 2 || given.cull < 0 ||
      given.cull >= 1 || given.mutate_rate < 0 || given.mutate_rate > 1)
    return make_error(ciq::errc::usage, "need --budget >= 1, --pool >= 2, --repeats >= 1, --jobs >= 1, --verify-runs >= 2, "
                               "0 <= --cull < 1, 0 <= --mutate-rate <= 1");
  if (!(given.timeout >= 0) || !(given.server_start >= 0))
    return make_error(ciq::errc::usage, "need --timeout >= 0 and --server-start >= 0 (seconds)");
  if (auto r = check_gpu(given, o); !r) return r.error();
  return o;
}

Result<double> parse_cover(const std::string& text) {
  std::string share = text;
  bool percent = !share.empty() && share.back() == '%';
  if (percent) share.pop_back();
  char* end = nullptr;
  double value = std::strtod(share.c_str(), &end);
  if (share.empty() || *end) return make_error(ciq::errc::usage, "--cover takes a percentage (e.g. 90%), not '" + text + "'");
  // 0.9 is read as a fraction (90 %), as 90 and 90% are percentages.
  double cover = percent || value > 1 ? value / 100 : value;
  if (!(cover > 0 && cover <= 1)) return make_error(ciq::errc::usage, "--cover must be a percentage above 0 and at most 100");
  return cover;
}

Result<std::string> publish_url(const std::string& given, const std::string& full) {
  auto url = parse_redis_url(given);
  if (!url) return make_error(ciq::errc::usage, url.error().message);
  bool masked = redact_secrets(given) == given && given.find("***@") != std::string::npos;
  if (!masked) return given;
  if (full.empty())
    return make_error(ciq::errc::usage, "--publish " + given + ": the run directory keeps this URL without its password; give it "
                               "again after --resume DIR (--publish URL), or set CIQ_PUBLISH to the URL");
  if (auto f = parse_redis_url(full); !f) return make_error("invalid", "CIQ_PUBLISH: " + f.error().message);
  if (redact_secrets(full) != given)
    return make_error("invalid", "CIQ_PUBLISH is " + redact_secrets(full) + ", not the URL of --publish " + given +
                                     ": set it to that URL with its password");
  return full;
}

bool campaign_needs_gpus(const TuneOptions& o, int concurrent) {
  bool benchmarks = std::any_of(o.setup.objectives.begin(), o.setup.objectives.end(), [](auto& x) { return x.needs_benchmark(); });
  return concurrent > 1 && benchmarks && !make_executor(o.setup)->schedules_gpus();
}

Result<void> check_campaign_options(const TuneOptions& o, int concurrent) {
  if (concurrent < 1) return make_error(ciq::errc::usage, "--concurrent must be at least 1");
  if (campaign_needs_gpus(o, concurrent) && o.setup.gpus.size() < std::size_t(concurrent))
    return make_error(ciq::errc::usage, "--concurrent " + std::to_string(concurrent) + " with a benchmark on this machine needs --gpus with at least " +
                                   std::to_string(concurrent) + " GPUs (each search times on its own), or --executor slurm");
  if (concurrent > 1 && !o.setup.build.empty() && o.setup.build.find("{workdir}") == std::string::npos)
    return make_error(ciq::errc::usage, "--concurrent " + std::to_string(concurrent) + " runs " + std::to_string(concurrent) +
                                   " searches at once, but every one would build the same tree ('" + o.setup.build +
                                     "'): build into {workdir} (e.g. 'cmake -S . -B {workdir}/b && cmake --build {workdir}/b' with "
                                     "--shell), or use --concurrent 1");
  return {};
}

Result<void> check_profile_top(int top) {
  if (top < 0) return make_error(ciq::errc::usage, "--top takes a number of kernels, 0 for all; not " + std::to_string(top));
  return {};
}

Result<void> check_commands(const TuneOptions& o) {
  bool replay = o.setup.replay || !o.replay.empty(); // its objective is the recorded time
  if (o.setup.bench.empty() && !replay &&
      std::any_of(o.setup.objectives.begin(), o.setup.objectives.end(), [](auto& x) { return x.needs_benchmark(); }))
    return make_error(ciq::errc::usage, "--metric needs --bench (the command whose output holds the number)");
  if (o.setup.objectives.empty() && !replay)
    return make_error(ciq::errc::usage, "give an objective: --metric REGEX (with --bench) or --objective ptxas:spill-stores ...");
  if (o.setup.build.empty() && o.setup.bench.empty() && !replay) return make_error(ciq::errc::usage, "give --build CMD and/or --bench CMD");
  return {};
}

Result<void> prepare_run(TuneOptions& o) {
  if (!o.replay.empty())
    if (auto r = prepare_replay(o); !r) return r.error();
  // Where the commands run (measure/executor.h), made once for the run's
  // evaluators, checks the options that concern it. Before discovery, a
  // space "none" is all that says there will be no compiler knobs.
  o.setup.compiler = o.space != "none";
  o.setup.executor = make_executor(o.setup);
  if (auto ready = o.setup.executor->check_options(o.setup); !ready) return ready.error();
  if (auto r = check_commands(o); !r) return r.error();
  if (auto r = prepare_cache(o); !r) return r.error();
  auto out = output_directory(o.out_dir, "ciq-tune");
  if (!out) return out.error();
  o.out_dir = *out;
  return {};
}

Result<std::string> output_directory(std::string dir, const char* prefix) {
  bool named_here = dir.empty();
  if (named_here) {
    char name[64];
    std::time_t now = std::time(nullptr);
    std::strftime(name, sizeof name, "-%Y%m%d-%H%M%S", std::localtime(&now));
    dir = prefix + std::string(name);
  }
  // Checked as written, before its links are resolved away: another user's
  // link or directory on the way could send the run elsewhere.
  if (auto secure = check_place_to_make(dir); !secure) return secure.error();
  if (named_here) {
    // Two runs started in the same second get two directories: the name is
    // taken by making it (-2, -3, ... when it is taken).
    std::string base = dir;
    for (int n = 2; ::mkdir(dir.c_str(), 0755) != 0; ++n) {
      if (errno != EEXIST || n > 1000) return make_error("io", "cannot make " + dir + ": " + std::strerror(errno));
      dir = base + "-" + std::to_string(n);
    }
  }
  if (auto abs = real_path(dir_name(dir))) {
    dir = join_path(*abs, base_name(dir));
  } else if (dir[0] != '/') {
    // Levels still to be made: absolute from here all the same, so that
    // what records the path (campaign.json, the journal) means it anywhere.
    char cwd[4096];
    if (::getcwd(cwd, sizeof cwd)) dir = join_path(cwd, dir);
  }
  return dir;
}

} // namespace ciq::tuner
