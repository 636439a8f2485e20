// ciq-tuner: option parsing only; the work is in run.cpp.
#include "tuner/measure/gpu_monitor.h"
#include "tuner/orchestrate/campaign.h"
#include "tuner/orchestrate/profile.h"
#include "tuner/orchestrate/run.h"
#include "tuner/rundir/command_line.h"
#include "tuner/rundir/journal.h"
#include "tuner/rundir/lock.h"
#include "tuner/report/report.h"
#include "tuner/search/synthetic.h"
#include "utils/cli/parse.h"
#include "utils/config.h"
#include "utils/files.h"
#include "utils/log.h"
#include "utils/redis.h"
#include "utils/text.h"

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <csignal>
#include <sys/prctl.h>
#include <thread>
#include <unistd.h>
#include <llvm/Support/CommandLine.h>
#include <llvm/Support/InitLLVM.h>
#include <llvm/Support/raw_ostream.h>

using namespace llvm;
namespace tn = ciq::tuner;

static cl::OptionCategory category("ciq-tuner options");
static cl::SubCommand run_cmd("run", "Tune: search control sets (and parameters) against your build and benchmark");
static cl::SubCommand campaign_cmd("campaign", "Tune every kernel of a build: one run per kernel (all run options apply), shipped as each ends; see README, 'Campaigns'");
static cl::SubCommand report_cmd("report", "Write DIR/report.html (self-contained, inline SVG plots) and DIR/report/*.svg for a run or a campaign");
static cl::SubCommand sample_cmd("sample", "Print N random candidates of a search space without running anything");
static cl::SubCommand profile_cmd("profile", "Run a program once and list its hot kernels by GPU time, measured inside its own run (no harness); see README, 'Tune a whole program'");
static cl::SubCommand quality_cmd("search-quality", "Measure the search on synthetic problems: GA vs random search, median over seeds");
static cl::opt<int> quality_seeds("seeds", cl::desc("Seeds per problem (default 50)"), cl::init(50), cl::cat(category), cl::sub(quality_cmd));
static cl::opt<int> quality_budget("budget", cl::desc("Evaluations per search (default 64)"), cl::init(64), cl::cat(category), cl::sub(quality_cmd));
static cl::opt<double> quality_noise("noise", cl::desc("Relative measurement noise (default 0.005)"), cl::init(0.005), cl::cat(category), cl::sub(quality_cmd));

#define RUN cl::cat(category), cl::sub(run_cmd), cl::sub(campaign_cmd), cl::ZeroOrMore
#define BOTH cl::cat(category), cl::sub(run_cmd), cl::sub(campaign_cmd), cl::sub(sample_cmd), cl::ZeroOrMore

static cl::opt<std::string> build("build", cl::desc("Build command (optional); must recompile the kernels each time"), cl::value_desc("cmd"), RUN);
static cl::opt<std::string> bench("bench", cl::desc("Benchmark command; its output holds the --metric numbers"), cl::value_desc("cmd"), RUN);
static cl::opt<std::string> check("check", cl::desc("Correctness command; a non-zero exit means a wrong answer"), cl::value_desc("cmd"), RUN);
static cl::opt<std::string> bench_server("bench-server", cl::desc("A benchmark that stays running, one per GPU: --bench and --check become requests to it (see README, 'Resident benchmarks')"), cl::value_desc("cmd"), RUN);
static cl::opt<bool> shell("shell", cl::desc("Run the commands through /bin/sh -c (default: split into words, run directly)"), RUN);
static cl::list<std::string> metrics("metric", cl::desc("Regex whose first group is a number in the benchmark output; repeat for more objectives"), cl::value_desc("regex"), cl::cat(category), cl::sub(run_cmd), cl::sub(campaign_cmd));
static cl::list<std::string> directions("direction", cl::desc("min or max, per objective in order (--metric ones first); default min"), cl::value_desc("min|max"), cl::cat(category), cl::sub(run_cmd), cl::sub(campaign_cmd));
static cl::list<std::string> objectives("objective", cl::desc("Built-in objective: ptxas:spill-stores, ptxas:registers, ptxas:stack, compile-time, kernel-time[:GLOB] (the GPU time of the kernels matching GLOB, default --kernels, inside each benchmark run; no metric needed), energy (joules per benchmark run, NVML), power (mean watts)"), cl::value_desc("name"), cl::cat(category), cl::sub(run_cmd), cl::sub(campaign_cmd));
static cl::list<std::string> params("param", cl::desc("Application parameter NAME=range:S:E:STEP | choice:A,B | literal:V [,knockout=P]; use as {param:NAME}"), cl::value_desc("spec"), cl::cat(category), cl::sub(run_cmd), cl::sub(campaign_cmd), cl::sub(sample_cmd));
static cl::opt<std::string> kernels("kernels", cl::desc("Tune only the traced kernels matching this glob"), cl::value_desc("glob"), BOTH);
static cl::opt<std::string> space("space", cl::desc("Knob space (default: that of the traced ptxas; 'none' = parameters only)"), cl::value_desc("name"), BOTH);
static cl::opt<std::string> stages("stages", cl::desc("Compiler stages to search: all (ptxas, and the NVVM stage of the units of the targeted kernels when the build goes through ciq-nvcc), ptxas, or nvcc (default all)"), cl::value_desc("all|ptxas|nvcc"), cl::init("all"), RUN);
static cl::opt<int> budget("budget", cl::desc("Evaluations, the default's included (default 32)"), cl::init(32), RUN);
static cl::opt<int> generations("generations", cl::desc("Stop after G generations (default: when the budget is spent)"), cl::init(0), RUN);
static cl::opt<int> pool("pool", cl::desc("Population size (default 8)"), cl::init(8), RUN);
static cl::opt<double> cull("cull", cl::desc("Fraction of the worst removed before parents are chosen (default 0.5)"), cl::init(0.5), RUN);
static cl::opt<double> mutate_rate("mutate-rate", cl::desc("Per-knob mutation probability (default 0.25)"), cl::init(0.25), RUN);
static cl::opt<unsigned long long> seed("seed", cl::desc("Random seed (default 1)"), cl::init(1), BOTH);
static cl::opt<int> repeats("repeats", cl::desc("Benchmark runs per evaluation (default 3)"), cl::init(3), RUN);
static cl::opt<double> server_start("server-start", cl::desc("Seconds a fresh --bench-server's first answer may take beyond --timeout: its start-up (default 120)"), cl::init(120), RUN);
static cl::opt<double> timeout("timeout", cl::desc("Seconds per command; on expiry its whole process group is killed (default: none; under --executor slurm, --slurm-time's)"), cl::init(0), RUN);
static cl::opt<int> jobs("jobs", cl::desc("Evaluations in flight; builds overlap, benchmarks never share a GPU (default: half the CPUs, 1 to 8, when the build writes into {workdir}; else 1)"), cl::init(0), RUN);
static cl::opt<std::string> gpus("gpus", cl::desc("GPUs to benchmark on, e.g. 0,1 (CUDA_VISIBLE_DEVICES per benchmark)"), cl::value_desc("list"), RUN);
static cl::opt<bool> gpu_baselines("gpu-baselines", cl::desc("With several --gpus: measure the default on each GPU and compare every run with the default of its own GPU (default true; =false: one default for all)"), cl::init(true), RUN);
static cl::opt<std::string> out("out", cl::desc("Run directory (default ./ciq-tune-<date>-<time>)"), cl::value_desc("dir"), RUN);
static cl::opt<std::string> resume("resume", cl::desc("Continue the run in this directory with its original options"), cl::value_desc("dir"), RUN);
static cl::opt<bool> json("json", cl::desc("Print a JSON summary as the last line of stdout"), RUN);
static cl::opt<double> min_effect("min-effect", cl::desc("Smallest relative gain worth shipping, in percent (default 1)"), cl::init(1.0), RUN);
static cl::opt<int> verify_runs("verify-runs", cl::desc("Interleaved runs per side when verifying the winner (default 10)"), cl::init(10), RUN);
static cl::list<std::string> seed_controls("seed-controls", cl::desc("Control-set file to seed the population with; repeatable"), cl::value_desc("file"), cl::cat(category), cl::sub(run_cmd), cl::sub(campaign_cmd));
static cl::opt<bool> occupancy_probes("occupancy-probes", cl::desc("Measure first, per kernel, the maxnreg values at which one more (or half as many) blocks fit per SM (default true; =false to turn off)"), cl::init(true), RUN);
static cl::opt<bool> memo("memo", cl::desc("Builds through ciq-nvcc rerun only the nvcc steps a candidate changes, reusing the rest from <run dir>/memo (default true; =false to rebuild everything)"), cl::init(true), RUN);
static cl::opt<bool> allow_unsafe("allow-unsafe", cl::desc("Also search 'unsafe' knobs (they change program semantics)"), BOTH);
static cl::opt<bool> no_ship("no-ship", cl::desc("Do not write the result to the cache"), RUN);
static cl::opt<std::string> acf_candidates("acf-candidates", cl::desc("Also choose among these ACFs (or none): a set from 'ciq-cache import-acfs', or a zip/directory to import"), cl::value_desc("name|path"), RUN);
static cl::opt<std::string> publish("publish", cl::desc("Also upload what ships to the team's Redis (redis://host:port/db)"), cl::value_desc("url"), RUN);
static cl::opt<std::string> replay("replay", cl::desc("Answer evaluations from recorded samples (CSV with 'controls' and 'ms' columns) instead of running commands; ships nothing"), cl::value_desc("file"), RUN);
static cl::opt<std::string> strategy("strategy", cl::desc("Search strategy: genetic (default; NSGA-II with several objectives; steady-state when --jobs > 1), generational (genetic in generations whatever --jobs: reproducible) or random (the baseline)"), cl::init("genetic"), cl::value_desc("genetic|generational|random"), RUN);
static cl::opt<std::string> cache_dir("cache-dir", cl::desc("Cache to ship to (default $CIQ_CACHE_DIR or ~/.cache/ciq)"), cl::value_desc("dir"), RUN);
static cl::opt<std::string> executor("executor", cl::desc("Where commands run: local (default) or slurm (every build, benchmark and check is a Slurm job through srun; see README, 'Tuning on a cluster')"), cl::value_desc("local|slurm"), cl::init("local"), RUN);
static cl::opt<std::string> slurm_partition("slurm-partition", cl::desc("Slurm partition of the jobs (default: the cluster's)"), cl::value_desc("name"), RUN);
static cl::opt<std::string> slurm_account("slurm-account", cl::desc("Slurm account of the jobs (default: yours)"), cl::value_desc("name"), RUN);
static cl::opt<std::string> slurm_time("slurm-time", cl::desc("Time limit of every job, in Slurm's syntax (default: --timeout rounded up to minutes, else 60)"), cl::value_desc("time"), RUN);
static cl::opt<int> slurm_build_cpus("slurm-build-cpus", cl::desc("CPUs per build job (default 1)"), cl::init(1), RUN);
static cl::opt<std::string> slurm_gres("slurm-gres", cl::desc("GRES of benchmark and check jobs (default gpu:1; 'none' for CPU-only benchmarks)"), cl::value_desc("gres"), cl::init("gpu:1"), RUN);
static cl::list<std::string> slurm_args("slurm-arg", cl::desc("Further srun option for every job, e.g. --slurm-arg=--qos=high; repeatable"), cl::value_desc("option"), cl::cat(category), cl::sub(run_cmd), cl::sub(campaign_cmd));
static cl::opt<int> slurm_retries("slurm-retries", cl::desc("Resubmissions of a job that Slurm preempted or whose node failed (default 1); a job cancelled or out of time makes the candidate invalid"), cl::init(1), RUN);
static cl::opt<bool> slurm_check("slurm-check", cl::desc("Before searching, run a test build job and benchmark job that must see the run directory (default true)"), cl::init(true), RUN);
static cl::opt<int> concurrent("concurrent", cl::desc("Campaign: runs at once (default 1; locally with a benchmark, each needs its own --gpus)"), cl::init(1), cl::cat(category), cl::sub(campaign_cmd), cl::ZeroOrMore);
static cl::opt<std::string> prefer("prefer", cl::desc("With several objectives: the one (its name, e.g. energy, or number from 1) whose best point that gives up no other is verified and shipped (default the first)"), cl::value_desc("objective"), cl::cat(category), cl::sub(run_cmd), cl::sub(campaign_cmd));
static cl::opt<std::string> from_profile("from-profile", cl::desc("Campaign: tune the program's hottest kernels by GPU time, measured in one run of --bench (or read from DIR, a `ciq-tuner profile --out DIR`); objective kernel-time unless given"), cl::value_desc("DIR"), cl::ValueOptional, cl::cat(category), cl::sub(campaign_cmd));
static cl::opt<std::string> cover("cover", cl::desc("Campaign --from-profile: the share of the program's GPU time whose kernels are tuned, hottest first: 90%, 90 or 0.9 (default 90%)"), cl::value_desc("percent"), cl::init("90%"), cl::cat(category), cl::sub(campaign_cmd));
static cl::opt<std::string> report_dir(cl::Positional, cl::desc("<run or campaign directory>"), cl::Required, cl::sub(report_cmd));
static cl::opt<std::string> report_out("o", cl::desc("The HTML file to write (default DIR/report.html)"), cl::value_desc("file"), cl::cat(category), cl::sub(report_cmd));
static cl::opt<int> sample_count(cl::Positional, cl::desc("<N>"), cl::init(10), cl::sub(sample_cmd));
static cl::list<std::string> profile_argv(cl::Positional, cl::desc("-- <program> [args...]"), cl::ZeroOrMore, cl::sub(profile_cmd));
static cl::opt<std::string> profile_build("build", cl::desc("Build command run first through ciq-nvcc/ciq-ptxas (traced: the table names each kernel's cache key)"), cl::value_desc("cmd"), cl::cat(category), cl::sub(profile_cmd));
static cl::opt<bool> profile_shell("shell", cl::desc("Run --build through /bin/sh -c"), cl::cat(category), cl::sub(profile_cmd));
static cl::opt<std::string> profile_out("out", cl::desc("Where the traces go (default: a new directory under $TMPDIR, printed)"), cl::value_desc("dir"), cl::cat(category), cl::sub(profile_cmd));
static cl::opt<std::string> profile_trace("trace", cl::desc("Read a recorded kernel trace directory (kernels-*.jsonl) instead of running anything"), cl::value_desc("dir"), cl::cat(category), cl::sub(profile_cmd));
static cl::opt<std::string> profile_build_trace("build-trace", cl::desc("With --trace: the build's CIQ_TRACE directory, to name each kernel's cache key"), cl::value_desc("dir"), cl::cat(category), cl::sub(profile_cmd));
static cl::opt<int> profile_top("top", cl::desc("Kernels listed (default 20; 0 = all)"), cl::init(20), cl::cat(category), cl::sub(profile_cmd));
static cl::opt<bool> profile_json("json", cl::desc("Print one JSON object instead of the table"), cl::cat(category), cl::sub(profile_cmd));

static const char* overview = R"(search compiler controls (and application parameters) for your kernels

ciq-tuner runs your own commands for every candidate, with CIQ_CONTROLS and
CIQ_TRACE set so that ciq-ptxas inside your build applies the candidate and
reports what it compiled. It keeps only winners that beat the default with
statistical significance, and writes them to the cache ciq-nvcc/ciq-ptxas
read, with their provenance.

Examples:
  # GPU benchmark: build into the evaluation's scratch dir, time, check.
  ciq-tuner run --build 'ciq-nvcc -O3 -arch=sm_90a stencil.cu -o {workdir}/stencil' \
      --bench '{workdir}/stencil' --metric 'time_ms: ([0-9.]+)' \
      --check '{workdir}/stencil --check' --budget 32

  # A CMake project built in place (recompiled for every candidate).
  ciq-tuner run --build 'cmake --build build --clean-first' \
      --bench 'build/bench' --metric 'ms=([0-9.]+)' --kernels '*attention*'

  # No GPU: minimise spilled bytes that ptxas reports.
  ciq-tuner run --build 'ciq-nvcc -arch=sm_90a -cubin k.cu -o {workdir}/k.cubin' \
      --objective ptxas:spill-stores --kernels '*heavy*'

  # Parameters only: a general command-line optimiser.
  ciq-tuner run --space none --param x=range:1:20:0.5 --param y=choice:1,2,3 \
      --bench 'python3 f.py {param:x} {param:y}' --metric 'f=([-0-9.e]+)'

  # Replay recorded ground truth (bench/data/*.csv): no build, no GPU.
  ciq-tuner run --replay bench/data/stencil3d.csv --budget 32 --seed 7

  # On a Slurm cluster (the run directory on a shared file system).
  ciq-tuner run --executor slurm --slurm-partition gpu --jobs 16 --build ... --bench ...

  # Every kernel of the build, one search each (one at a time: they share the tree).
  ciq-tuner campaign --build 'cmake --build build --clean-first' --bench 'build/bench' \
      --metric 'ms=([0-9.]+)' --out tuning/all

  ciq-tuner sample 5 --space ptxas-13
  ciq-tuner run --resume ciq-tune-20261202-101500
  ciq-tuner report ciq-tune-20261202-101500          # report.html and report/*.svg

Placeholders in commands: {controls} {workdir} {gpu} {param:NAME}.
Results: <run dir>/journal.jsonl, results.csv, best.controls, summary.json.
)";

static int fail(const std::string& message) {
  std::fprintf(stderr, "ciq-tuner: error: %s\n", ciq::printable_lines(message).c_str());
  return 1;
}

// --resume DIR (or --resume=DIR): the original command line, re-parsed,
// then what was given now (DIR made absolute). The run's commands and the
// relative paths in them mean what they meant: this process moves to the
// run's original working directory (DIR/working-directory).
static ciq::Result<std::vector<std::string>> with_saved_command_line(std::vector<std::string> args) {
  for (std::size_t i = 1; i < args.size(); ++i) {
    std::string dir;
    std::size_t value = i + 1; // the argument holding DIR
    if ((args[i] == "--resume" || args[i] == "-resume") && i + 1 < args.size()) dir = args[i + 1];
    for (const char* prefix : {"--resume=", "-resume="})
      if (ciq::starts_with(args[i], prefix)) dir = args[i].substr(std::strlen(prefix)), value = i;
    if (dir.empty()) continue;
    auto saved = ciq::read_file(ciq::join_path(dir, "command-line"));
    if (!saved) return ciq::make_error("invalid", "'" + dir + "' is not a run directory (" + saved.error().message + ")");
    if (auto absolute = ciq::real_path(dir)) args[value] = (value == i ? args[i].substr(0, args[i].find('=') + 1) : "") + *absolute;
    // What the run searches and is scored on stays as it was started: the
    // journal holds candidates of that space and values of those
    // objectives (a resume that changed them would mix two searches).
    static const char* const fixed[] = {"param", "space", "objective", "metric", "direction", "kernels", "stages",
                                        "acf-candidates", "seed-controls", "replay", "out"};
    for (std::size_t k = 2; k < args.size(); ++k) {
      if (k == value || args[k].size() < 2 || args[k][0] != '-') continue;
      std::string name = args[k].substr(args[k].find_first_not_of('-'));
      name = name.substr(0, name.find('='));
      for (const char* f : fixed)
        if (name == f)
          return ciq::make_error("invalid", "--resume continues the run as it was started: --" + name +
                                                " would change what it searches or how candidates are scored "
                                                "(start a new run with another --out instead)");
    }
    std::vector<std::string> merged{args[0]};
    for (auto line : ciq::split(*saved, '\n'))
      if (!line.empty()) merged.emplace_back(line);
    for (std::size_t k = 2; k < args.size(); ++k) merged.push_back(args[k]);
    if (auto where = ciq::read_file(ciq::join_path(dir, "working-directory"))) {
      std::string original(ciq::trim(*where));
      char here[4096];
      if (!original.empty() && (!::getcwd(here, sizeof here) || original != here)) {
        if (::chdir(original.c_str()) != 0)
          return ciq::make_error("invalid", "the run's working directory " + original + " is gone (" + std::strerror(errno) +
                                                "): its commands' relative paths mean nothing elsewhere");
        std::fprintf(stderr, "ciq-tuner: resuming in the run's working directory %s\n", original.c_str());
      }
    }
    return merged;
  }
  return args;
}

// --publish URL. A run directory keeps it with its password masked (***),
// so a resumed run, or a campaign's run, finds it so: the password then
// comes from CIQ_PUBLISH, the same URL in full (a campaign sets it for its
// runs), which is taken out of the environment of the commands the tuner runs.
static ciq::Result<std::string> publish_url(const std::string& given, const std::string& full) {
  auto url = ciq::parse_redis_url(given);
  if (!url) return ciq::make_error("invalid", url.error().message);
  bool masked = ciq::redact_secrets(given) == given && given.find("***@") != std::string::npos;
  if (!masked) return given;
  if (full.empty())
    return ciq::make_error("invalid", "--publish " + given + ": the run directory keeps this URL without its password; give it "
                                      "again after --resume DIR (--publish URL), or set CIQ_PUBLISH to the URL");
  if (auto f = ciq::parse_redis_url(full); !f) return ciq::make_error("invalid", "CIQ_PUBLISH: " + f.error().message);
  if (ciq::redact_secrets(full) != given)
    return ciq::make_error("invalid", "CIQ_PUBLISH is " + ciq::redact_secrets(full) + ", not the URL of --publish " + given +
                                          ": set it to that URL with its password");
  return full;
}

// `ciq-tuner NOSUCH ...`: LLVM's parser would print the top-level help for
// `NOSUCH --help` and exit 0. The subcommand's name, when there is one.
static std::string unknown_subcommand(int argc, char** argv) {
  if (argc < 2 || argv[1][0] == '-') return "";
  for (const cl::SubCommand* sub : {&run_cmd, &campaign_cmd, &report_cmd, &sample_cmd, &profile_cmd, &quality_cmd})
    if (sub->getName() == argv[1]) return "";
  return argv[1];
}

// --metric, --objective and --direction.
static ciq::Result<void> set_objectives(tn::TuneOptions& o) {
  for (const auto& m : metrics) {
    auto obj = tn::metric_objective(m);
    if (!obj) return obj.error();
    o.setup.objectives.push_back(*obj);
  }
  for (const auto& name : objectives) {
    auto obj = tn::builtin_objective(name);
    if (!obj) return obj.error();
    o.setup.objectives.push_back(*obj);
  }
  for (std::size_t i = 0; i < o.setup.objectives.size(); ++i)
    for (std::size_t j = 0; j < i; ++j)
      if (o.setup.objectives[i].name == o.setup.objectives[j].name)
        return ciq::make_error("invalid", "objective '" + o.setup.objectives[i].name + "' is given twice (--metric/--objective)");
  for (std::size_t i = 0; i < directions.size(); ++i) {
    if (directions[i] != "min" && directions[i] != "max")
      return ciq::make_error("invalid", "--direction must be min or max, not '" + directions[i] + "'");
    if (i >= o.setup.objectives.size()) return ciq::make_error("invalid", "more --direction values than objectives");
    o.setup.objectives[i].maximize = directions[i] == "max";
  }
  return {};
}

// --executor and the --slurm-* options.
static ciq::Result<void> set_executor(tn::TuneOptions& o) {
  if (executor == "local") return {};
  if (executor != "slurm") return ciq::make_error("invalid", "--executor must be local or slurm, not '" + executor + "'");
  tn::SlurmConfig slurm;
  slurm.partition = slurm_partition;
  slurm.account = slurm_account;
  slurm.time_limit = slurm_time;
  slurm.build_cpus = slurm_build_cpus;
  slurm.gres = slurm_gres;
  slurm.extra.assign(slurm_args.begin(), slurm_args.end());
  slurm.retries = slurm_retries;
  slurm.check = slurm_check;
  o.setup.slurm = slurm;
  return {};
}

// What the parsed options ask for, checked.
static ciq::Result<tn::TuneOptions> tune_options(int argc, char** argv) {
  tn::TuneOptions o;
  o.setup.build = build;
  o.setup.bench = bench;
  o.setup.check = check;
  o.setup.bench_server = bench_server;
  o.setup.shell = shell;
  o.setup.timeout = timeout;
  o.setup.server_start = server_start;
  o.setup.repeats = repeats;
  o.setup.kernels = kernels;
  o.setup.inject_library = tn::inject_library();
  // Builds take one CPU each and benchmarks queue for the GPUs: half the
  // CPUs keeps the GPU fed and leaves room for the benchmark's own host side.
  // Only builds into {workdir} can overlap safely, and a replay stays
  // reproducible only one evaluation at a time: otherwise one.
  bool separate_builds = std::string(build).find("{workdir}") != std::string::npos;
  int auto_jobs = separate_builds && replay.empty() ? std::clamp(int(std::thread::hardware_concurrency()) / 2, 1, 8) : 1;
  o.setup.jobs = jobs != 0 ? int(jobs) : auto_jobs;
  o.setup.memo = memo;
  std::string gpu_list = gpus;
  for (auto part : ciq::split(gpu_list, ',')) {
    if (gpu_list.empty()) break;
    std::string_view g = ciq::trim(part);
    if (g.empty()) return ciq::make_error("invalid", "--gpus '" + gpu_list + "' has an empty entry: give GPUs as 0,1 (indices or UUIDs)");
    if (std::find(o.setup.gpus.begin(), o.setup.gpus.end(), g) != o.setup.gpus.end())
      return ciq::make_error("invalid", "--gpus names GPU '" + std::string(g) + "' twice: each benchmark slot is one GPU");
    o.setup.gpus.emplace_back(g);
  }
  o.setup.gpu_baselines = gpu_baselines;
  if (auto r = set_objectives(o); !r) return r.error();
  for (auto& obj : o.setup.objectives) {
    if (obj.kind != tn::ObjectiveKind::kernel_time) continue;
    if (obj.pattern.empty()) obj.pattern = o.setup.kernels; // kernel-time alone: the targeted kernels' time
    if (!ciq::path_exists(o.setup.inject_library))
      return ciq::make_error("not-found", "--objective " + obj.name + " needs the kernel-timing library, not found at " +
                                              o.setup.inject_library + ": " + tn::inject_library_missing());
  }
  if (auto r = set_executor(o); !r) return r.error();
  if (!prefer.empty()) {
    std::size_t found = SIZE_MAX;
    for (std::size_t k = 0; k < o.setup.objectives.size(); ++k)
      if (o.setup.objectives[k].name == prefer || std::to_string(k + 1) == std::string(prefer)) found = k;
    if (found == SIZE_MAX) {
      std::string names;
      for (const auto& obj : o.setup.objectives) names += (names.empty() ? "" : ", ") + obj.name;
      return ciq::make_error("invalid", "--prefer " + std::string(prefer) + " is none of the objectives (" + names + "; or their number from 1)");
    }
    o.prefer = found;
  }
  // energy, power: read here through NVML on the benchmark's GPU; refused
  // before any work where that cannot be done.
  for (const auto& obj : o.setup.objectives) {
    if (!obj.needs_energy()) continue;
    if (o.setup.slurm)
      return ciq::make_error("invalid", "--objective " + obj.name + " reads the GPU's energy counter on this machine: not with --executor slurm");
    std::string why;
    tn::Nvml* nvml = tn::Nvml::get(&why);
    if (!nvml)
      return ciq::make_error("not-found", "--objective " + obj.name + " needs NVML (libnvidia-ml.so.1, from the NVIDIA driver): " + why);
    std::string gpu = o.setup.gpus.empty() ? "" : o.setup.gpus.front();
    if (auto e = nvml->energy_mj(gpu); !e)
      return ciq::make_error("unsupported", "--objective " + obj.name + ": " + e.error().message);
    break;
  }
  o.space = space;
  if (stages != "all" && stages != "ptxas" && stages != "nvcc") return ciq::make_error("invalid", "--stages must be all, ptxas or nvcc, not '" + stages + "'");
  o.stages = stages;
  o.params.assign(params.begin(), params.end());
  o.seeds.assign(seed_controls.begin(), seed_controls.end());
  o.occupancy_probes = occupancy_probes;
  o.search.budget = budget;
  o.search.generations = generations;
  o.search.pool = pool;
  o.search.cull = cull;
  o.search.mutate_rate = mutate_rate;
  o.search.seed = seed;
  o.out_dir = resume.empty() ? std::string(out) : std::string(resume);
  o.resume = !resume.empty();
  o.min_effect = min_effect / 100;
  o.verify_runs = verify_runs;
  o.allow_unsafe = allow_unsafe;
  o.ship = !no_ship;
  o.json = json;
  o.cache_dir = cache_dir;
  o.replay = replay;
  o.acf_candidates = acf_candidates;
  std::string publish_in_env = ciq::env(ciq::Env::publish);
  ::unsetenv(ciq::env_name(ciq::Env::publish));
  if (!publish.empty()) {
    auto url = publish_url(publish, publish_in_env);
    if (!url) return url.error();
    o.publish = *url;
  }
  if (strategy != "genetic" && strategy != "generational" && strategy != "random")
    return ciq::make_error("invalid", "--strategy must be genetic, generational or random, not '" + strategy + "'");
  o.random_search = strategy == "random";
  o.generational = strategy == "generational";
  for (int i = 1; i < argc; ++i)
    if (std::string(argv[i]) != "--resume" && (i == 1 || std::string(argv[i - 1]) != "--resume")) o.command_line.emplace_back(argv[i]);

  if (budget < 1 || pool < 2 || repeats < 1 || o.setup.jobs < 1 || verify_runs < 2 || cull < 0 || cull >= 1 || mutate_rate < 0 || mutate_rate > 1) {
    return ciq::make_error("invalid", "need --budget >= 1, --pool >= 2, --repeats >= 1, --jobs >= 1, --verify-runs >= 2, "
                "0 <= --cull < 1, 0 <= --mutate-rate <= 1");
  }
  if (!(timeout >= 0) || !(server_start >= 0)) return ciq::make_error("invalid", "need --timeout >= 0 and --server-start >= 0 (seconds)");
  return o;
}

// A campaign's runs get its own options, less those that are the
// campaign's: its directory, the kernel selection, --concurrent, --json.
static std::vector<std::string> campaign_run_args(const std::vector<std::string>& args) {
  std::vector<std::string> out;
  for (std::size_t i = 2; i < args.size(); ++i) {
    std::string name = args[i].substr(0, args[i].find('='));
    while (ciq::starts_with(name, "-")) name.erase(0, 1);
    bool joined = args[i].find('=') != std::string::npos;
    if (name == "from-profile") continue; // its value, if any, is joined (ValueOptional)
    if (name == "out" || name == "kernels" || name == "resume" || name == "concurrent" || name == "cover") {
      if (!joined) ++i;
      continue;
    }
    if (name == "json") continue;
    out.push_back(args[i]);
  }
  return out;
}

int main(int argc, char** argv) {
  InitLLVM init(argc, argv);
  // A run started by a campaign ends (cancelling its jobs, as on Ctrl-C)
  // when the campaign dies, even by SIGKILL: a resumed campaign must not
  // find a stray run still writing to the directory it resumes.
  if (std::string parent = ciq::env(ciq::Env::campaign_pid); !parent.empty()) {
    ::prctl(PR_SET_PDEATHSIG, SIGTERM);
    if (std::to_string(::getppid()) != parent) return 1; // it died before prctl took effect
  }
  if (std::string unknown = unknown_subcommand(argc, argv); !unknown.empty())
    return fail("unknown subcommand '" + unknown + "' (subcommands: run, campaign, report, sample, profile, search-quality; see 'ciq-tuner --help')");
  auto resumed = with_saved_command_line(std::vector<std::string>(argv, argv + argc));
  if (!resumed) return fail(resumed.error().message);
  std::vector<std::string> args = std::move(*resumed);
  std::vector<const char*> cargv;
  for (const auto& a : args) cargv.push_back(a.c_str());
  cl::HideUnrelatedOptions(category);
  cl::SetVersionPrinter([](raw_ostream& os) { os << "ciq-tuner (ciq) " CIQ_VERSION "\n"; });
  if (auto parse_errors = ciq::cli::parse_command_line(int(cargv.size()), cargv.data(), overview)) {
    ciq::cli::report_parse_errors("ciq-tuner", *parse_errors);
    return 2;
  }
  ciq::setup_logging("ciq-tuner", "warn");

  if (profile_cmd) {
    tn::ProfileOptions p;
    p.build = profile_build;
    p.shell = profile_shell;
    p.argv.assign(profile_argv.begin(), profile_argv.end());
    p.out_dir = profile_out;
    p.trace_dir = profile_trace;
    p.build_trace_dir = profile_build_trace;
    if (profile_top < 0) return fail("--top takes a number of kernels, 0 for all; not " + std::to_string(int(profile_top)));
    p.top = profile_top;
    p.json = profile_json;
    auto status = tn::run_profile(p);
    if (!status) return fail(status.error().message);
    return *status;
  }
  // A campaign from the profile tunes each kernel by its own time in the
  // program, unless told otherwise.
  bool profiled = campaign_cmd && from_profile.getNumOccurrences() > 0;
  if (profiled && metrics.empty() && objectives.empty()) {
    objectives.push_back("kernel-time");
    args.push_back("--objective=kernel-time");
  }
  auto options = tune_options(argc, argv);
  if (!options) return fail(options.error().message);
  tn::TuneOptions o = std::move(*options);
  if (report_cmd) {
    auto written = tn::write_report(report_dir, report_out);
    if (!written) return fail(written.error().message);
    std::printf("%s\n", written->c_str());
    return 0;
  }
  if (sample_cmd) return tn::sample_space(o, sample_count);
  if (quality_cmd) {
    std::printf("problem,budget,seeds,noise,ga_median_evals_to_95,random_median_evals_to_95,ga_reached,random_reached\n");
    for (const auto& p : tn::synthetic_problems()) {
      auto q = tn::measure_search_quality(p, quality_seeds, quality_budget, quality_noise);
      std::printf("%s,%d,%d,%g,%g,%g,%.2f,%.2f\n", p.name.c_str(), int(quality_budget), int(quality_seeds), double(quality_noise),
                  q.median_evals_ga, q.median_evals_random, q.reached_ga, q.reached_random);
    }
    return 0;
  }
  if (run_cmd) return tn::run_tuning(std::move(o));
  if (campaign_cmd) {
    tn::CampaignOptions c;
    c.concurrent = concurrent;
    if (profiled) {
      c.from_profile = from_profile.empty() ? "now" : std::string(from_profile);
      std::string share = cover;
      bool percent = !share.empty() && share.back() == '%';
      if (percent) share.pop_back();
      char* end = nullptr;
      double value = std::strtod(share.c_str(), &end);
      if (share.empty() || *end) return fail("--cover takes a percentage (e.g. 90%), not '" + std::string(cover) + "'");
      // 0.9 is read as a fraction (90 %), as 90 and 90% are percentages.
      c.cover = percent || value > 1 ? value / 100 : value;
    }
    c.run_args = tn::without_publish_password(campaign_run_args(args)); // the URL goes in CIQ_PUBLISH
    c.tune = std::move(o);
    return tn::run_campaign(std::move(c));
  }
  std::fprintf(stderr, "ciq-tuner: error: no subcommand given; run 'ciq-tuner --help'\n");
  return 2;
}
