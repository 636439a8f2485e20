// ciq-tuner: parses the command line (LLVM's cl::opt, one category) into
// the library's option structs, and calls one entry point per subcommand:
// run_tuning, run_campaign, write_report, sample_space, run_profile,
// measure_search_quality, run_retune, run_reverify (and run_remeasure for
// `run --verify-controls`). What the options mean together is checked in
// run/options.h; --resume's saved command line is merged before parsing
// (run/resume.h).
#include "tuner/commands/campaign.h"
#include "tuner/run/captures.h"
#include "tuner/run/options.h"
#include "tuner/commands/profile.h"
#include "tuner/run/progress.h"
#include "tuner/run/remeasure.h"
#include "tuner/run/resume.h"
#include "tuner/commands/recorded_runs.h"
#include "tuner/commands/retune.h"
#include "tuner/commands/reverify.h"
#include "tuner/run/run.h"
#include "tuner/run/space_setup.h"
#include "tuner/formats/compare_mode.h"
#include "tuner/rundir/command_line.h"
#include "tuner/report/report.h"
#include "tuner/search/synthetic.h"
#include "tuner/tuner_overview.h"
#include "utils/cli/parse.h"
#include "utils/config.h"
#include "utils/files.h"
#include "utils/log.h"
#include "utils/text.h"

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <csignal>
#include <optional>
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
static cl::SubCommand campaign_cmd("campaign", "Tune every kernel of a build: one run per kernel (all run options apply), shipped as each ends; see docs/tuning.md, 'Campaigns'");
static cl::SubCommand report_cmd("report", "Write DIR/report.html (self-contained, inline SVG plots) and DIR/report/*.svg for a run or a campaign");
static cl::SubCommand sample_cmd("sample", "Print N random candidates of a search space without running anything");
static cl::SubCommand profile_cmd("profile", "Run a program once and list its hot kernels by GPU time, measured inside its own run (no harness); see docs/whole-program.md");
static cl::SubCommand quality_cmd("search-quality", "Measure the search on synthetic problems: GA vs random search, median over seeds");
static cl::SubCommand retune_cmd("retune", "Tune again, on this toolkit and GPU, the runs that made the selected cache entries (--stale: those `ciq-cache stale` lists; --kernels GLOB), each from its saved command line; ends with a table: kernel, entries, old gain, new gain, verdict. "
                                           "Exit status: 0 every selected run finished (whatever it found) or was skipped with a reason; 1 a run failed, or the cache could not be read or the --out directory made (a failed --drop-losers removal is a warning); 2 a usage error; "
                                           "interrupted (Ctrl-C), it dies of the signal (a shell shows 130)");
static cl::SubCommand reverify_cmd("reverify", "Re-measure shipped entries against the default with their runs' own benchmarks (interleaved, as a run verifies) and flag those that stopped winning; the cache is not changed. "
                                               "Exit status: 0 every entry measured still wins (or none is selected); 1 one stopped winning, or the cache could not be read or the --out directory made; "
                                               "3 none stopped winning but one could not be measured (its run could not be started or failed); 2 a usage error; "
                                               "interrupted (Ctrl-C), it dies of the signal (a shell shows 130)");
static cl::opt<int> quality_seeds("seeds", cl::desc("Seeds per problem (default 50)"), cl::init(50), cl::cat(category), cl::sub(quality_cmd));
static cl::opt<int> quality_budget("budget", cl::desc("Evaluations per search (default 64)"), cl::init(64), cl::cat(category), cl::sub(quality_cmd));
static cl::opt<double> quality_noise("noise", cl::desc("Relative measurement noise (default 0.005)"), cl::init(0.005), cl::cat(category), cl::sub(quality_cmd));

// The groups of run's options that a run started by the tuner itself (a
// campaign's, a replay, a retune's, a reverify's) may leave out or set
// anew (tuner/rundir/command_line.h, OptionGroup): each option is declared
// in its group, which is also its heading in --help; the forwarders follow.
// The categories k_groups does not name are headings in --help only, in no
// forwarding group: their options are passed on as given.
static cl::OptionCategory in_output("Output");
static cl::OptionCategory in_resume("Resuming");
static cl::OptionCategory in_earlier_run("From an earlier run");
static cl::OptionCategory in_shipping("Shipping");
static cl::OptionCategory in_seeds("Starting points");
static cl::OptionCategory in_program("The program: build, measure, check");
static cl::OptionCategory in_kernels("Kernels");
static cl::OptionCategory in_search("The search: space and strategy");
static cl::OptionCategory in_measure("Measuring and verifying");
static cl::OptionCategory in_slurm("Slurm");
static cl::OptionCategory in_replay("Replay: captured launches, recorded samples");
static cl::OptionCategory in_campaign("Campaign");
static cl::OptionCategory in_cache("The cache");
static const std::pair<const cl::OptionCategory*, unsigned> k_groups[] = {
    {&in_output, tn::group_output},   {&in_resume, tn::group_resume},   {&in_earlier_run, tn::group_earlier_run},
    {&in_shipping, tn::group_shipping}, {&in_seeds, tn::group_seeds},   {&in_program, tn::group_program},
    {&in_kernels, tn::group_kernels}};

#define RUN_IN(group) cl::cat(group), cl::sub(run_cmd), cl::sub(campaign_cmd), cl::ZeroOrMore
#define BOTH_IN(group) cl::cat(group), cl::sub(run_cmd), cl::sub(campaign_cmd), cl::sub(sample_cmd), cl::ZeroOrMore
#define RUN RUN_IN(category)
#define BOTH BOTH_IN(category)

static cl::opt<std::string> build("build", cl::desc("Build command (optional); must recompile the kernels each time"), cl::value_desc("cmd"), RUN_IN(in_program));
static cl::opt<std::string> bench("bench", cl::desc("Benchmark command; its output holds the --metric numbers"), cl::value_desc("cmd"), RUN_IN(in_program));
static cl::opt<std::string> check("check", cl::desc("Correctness command; a non-zero exit means a wrong answer"), cl::value_desc("cmd"), RUN_IN(in_program));
static cl::opt<std::string> bench_server("bench-server", cl::desc("A benchmark that stays running, one per GPU: --bench and --check become requests to it (see docs/tuning.md, 'Resident benchmarks')"), cl::value_desc("cmd"), RUN_IN(in_program));
static cl::opt<std::string> capture("capture", cl::desc("Run: tune one kernel by replaying its launch captured inside the program (`ciq-tuner profile --capture`): DIR holds the captures (with --kernels naming the kernel) or is one launch's; replaces --build, --bench, --check and --bench-server"), cl::value_desc("dir"), cl::cat(in_replay), cl::sub(run_cmd), cl::ZeroOrMore);
static cl::opt<std::string> compare("compare", cl::desc("Run --capture: how a candidate's outputs must match the reference code's: bitwise (default); close (floating-point outputs, by the kernel's signature, within their type's default tolerance; others bitwise); or rtol=R,atol=A (|got - expected| <= A + R * |expected|); ciq-replay --help has the rest"), cl::value_desc("mode"), cl::cat(in_replay), cl::sub(run_cmd), cl::ZeroOrMore);
static cl::opt<bool> shell("shell", cl::desc("Run the commands through /bin/sh -c (default: split into words, run directly)"), RUN_IN(in_program));
static cl::list<std::string> metrics("metric", cl::desc("Regex whose first group is a number in the benchmark output; repeat for more objectives"), cl::value_desc("regex"), cl::cat(in_program), cl::sub(run_cmd), cl::sub(campaign_cmd));
static cl::list<std::string> directions("direction", cl::desc("min or max, per objective in order (--metric ones first); default min"), cl::value_desc("min|max"), cl::cat(in_program), cl::sub(run_cmd), cl::sub(campaign_cmd));
static cl::list<std::string> objectives("objective", cl::desc("Built-in objective: ptxas:spill-stores, ptxas:registers, ptxas:stack, compile-time, kernel-time[:GLOB] (the GPU time of the kernels matching GLOB, default --kernels, inside each benchmark run; no metric needed), energy (joules per benchmark run, NVML), power (mean watts)"), cl::value_desc("name"), cl::cat(in_program), cl::sub(run_cmd), cl::sub(campaign_cmd));
static cl::list<std::string> params("param", cl::desc("Application parameter NAME=range:S:E:STEP | choice:A,B | literal:V [,knockout=P]; use as {param:NAME}"), cl::value_desc("spec"), cl::cat(in_search), cl::sub(run_cmd), cl::sub(campaign_cmd), cl::sub(sample_cmd));
static cl::opt<std::string> kernels("kernels", cl::desc("Tune only the traced kernels matching this glob"), cl::value_desc("glob"), BOTH_IN(in_kernels));
static cl::opt<std::string> space("space", cl::desc("Knob space (default: that of the traced ptxas; 'none' = parameters only)"), cl::value_desc("name"), BOTH_IN(in_search));
static cl::opt<std::string> stages("stages", cl::desc("Compiler stages to search: all (ptxas, and the NVVM stage of the units of the targeted kernels when the build goes through ciq-nvcc), ptxas, or nvcc (default all)"), cl::value_desc("all|ptxas|nvcc"), cl::init("all"), RUN_IN(in_search));
static cl::opt<int> budget("budget", cl::desc("Evaluations, the default's included (default 32)"), cl::init(32), RUN_IN(in_search));
static cl::opt<int> generations("generations", cl::desc("Stop after G generations (default: when the budget is spent)"), cl::init(0), RUN_IN(in_search));
static cl::opt<int> pool("pool", cl::desc("Population size (default 8)"), cl::init(8), RUN_IN(in_search));
static cl::opt<double> cull("cull", cl::desc("Fraction of the worst removed before parents are chosen (default 0.5)"), cl::init(0.5), RUN_IN(in_search));
static cl::opt<double> mutate_rate("mutate-rate", cl::desc("Per-knob mutation probability (default 0.25)"), cl::init(0.25), RUN_IN(in_search));
static cl::opt<unsigned long long> seed("seed", cl::desc("Random seed (default 1)"), cl::init(1), BOTH_IN(in_search));
static cl::opt<int> repeats("repeats", cl::desc("Benchmark runs per evaluation (default 3)"), cl::init(3), RUN_IN(in_measure));
static cl::opt<double> server_start("server-start", cl::desc("Seconds a fresh --bench-server's first answer may take beyond --timeout: its start-up (default 120)"), cl::init(120), RUN_IN(in_measure));
static cl::opt<double> timeout("timeout", cl::desc("Seconds per command; on expiry its whole process group is killed (default: none; under --executor slurm, --slurm-time's)"), cl::init(0), RUN_IN(in_measure));
static cl::opt<int> jobs("jobs", cl::desc("Evaluations in flight; builds overlap, benchmarks never share a GPU (default: half the CPUs, 1 to 8, when the build writes into {workdir}; else 1)"), cl::init(0), RUN_IN(in_measure));
static cl::opt<std::string> gpus("gpus", cl::desc("GPUs to benchmark on, e.g. 0,1 (CUDA_VISIBLE_DEVICES per benchmark)"), cl::value_desc("list"), RUN_IN(in_measure));
static cl::opt<bool> gpu_baselines("gpu-baselines", cl::desc("With several --gpus: measure the default on each GPU and compare every run with the default of its own GPU (default true; =false: one default for all)"), cl::init(true), RUN_IN(in_measure));
static cl::opt<std::string> out("out", cl::desc("Run directory (default ./ciq-tune-<date>-<time>)"), cl::value_desc("dir"), RUN_IN(in_output));
static cl::opt<std::string> resume("resume", cl::desc("Continue the run in this directory with its original options"), cl::value_desc("dir"), RUN_IN(in_resume));
static cl::opt<bool> json("json", cl::desc("Print a JSON summary as the last line of stdout"), RUN_IN(in_output));
static cl::opt<double> min_effect("min-effect", cl::desc("Smallest relative gain worth shipping, in percent (default 1)"), cl::init(1.0), RUN_IN(in_measure));
static cl::opt<int> verify_runs("verify-runs", cl::desc("Interleaved runs per side when verifying the winner (default 10)"), cl::init(10), RUN_IN(in_measure));
static cl::list<std::string> seed_hints("seed-hint", cl::desc("Like --seed-controls, but a set that does not fit this run's space is skipped with a warning (a campaign passes each kernel the winners of the kernels it tuned before, with their directives moved to this kernel)"), cl::value_desc("file"), cl::cat(in_seeds), cl::sub(run_cmd));
static cl::list<std::string> seed_controls("seed-controls", cl::desc("Control-set file to seed the population with; repeatable"), cl::value_desc("file"), cl::cat(in_seeds), cl::sub(run_cmd), cl::sub(campaign_cmd));
static cl::opt<bool> occupancy_probes("occupancy-probes", cl::desc("Measure first, per kernel, the maxnreg values at which one more (or half as many) blocks fit per SM (default true; =false to turn off)"), cl::init(true), RUN_IN(in_search));
static cl::opt<bool> separately("separately", cl::desc("Run: with several targeted kernels (--objective kernel-time), tune each kernel by its own time in the same program runs, searching only knobs that act on it alone (its directives); each kernel's best is verified on its own and only the kernels that win ship (see docs/tuning.md, 'Several kernels in one run')"), cl::cat(in_kernels), cl::sub(run_cmd));
static cl::opt<int> check_program("check-program", cl::desc("Campaign: at the end, when anything shipped, build and run the program fresh N times with the cache and N times without it (CIQ_DISABLE=1), interleaved, and compare its GPU time: what the shipped entries do together (default 0: not)"), cl::value_desc("N"), cl::init(0), cl::cat(in_campaign), cl::sub(campaign_cmd));
static cl::opt<bool> together("together", cl::desc("Campaign, with --objective kernel-time: tune the kernels that go to program runs (not replayed) together, in one `run --separately`, when there are two or more; and confirm the replay winners that set per-kernel directives only together, in the same program runs once every replay is done, each kernel judged by its own time (default true; =false: one run, and one confirmation, per kernel)"), cl::init(true), cl::cat(in_campaign), cl::sub(campaign_cmd));
static cl::opt<bool> memo("memo", cl::desc("Builds through ciq-nvcc rerun only the nvcc steps a candidate changes, reusing the rest from <run dir>/memo (default true; =false to rebuild everything)"), cl::init(true), RUN_IN(in_measure));
static cl::opt<std::string> memo_dir("memo-dir", cl::desc("Run: keep the memo of --memo in DIR instead of <run dir>/memo (a campaign passes its own to its runs, which build the same program: one kernel's run reuses the steps another's ran)"), cl::value_desc("DIR"), cl::cat(in_earlier_run), cl::sub(run_cmd), cl::Hidden);
static cl::opt<bool> allow_unsafe("allow-unsafe", cl::desc("Also search 'unsafe' knobs (they change program semantics)"), BOTH_IN(in_search));
static cl::opt<bool> prune("prune", cl::desc("After the search, drop each of the winner's knobs that earns nothing (default true; =false keeps the winner as found: a campaign's confirmation of a replay winner, which replay pruned already)"), cl::init(true), RUN_IN(in_search));
static cl::opt<bool> no_ship("no-ship", cl::desc("Do not write the result to the cache"), RUN_IN(in_shipping));
static cl::opt<std::string> replaces_run("replaces-run", cl::desc("Run: when nothing beats the default, its 'tuned, no gain' entries replace the winners that the run whose command-line file is FILE shipped under the same keys (retune --drop-losers passes it; other runs' winners are kept as always)"), cl::value_desc("FILE"), cl::cat(in_earlier_run), cl::sub(run_cmd), cl::Hidden);
static cl::opt<std::string> discovery_from("discovery-from", cl::desc("Run: take the discovery (the traced default build) from DIR, a campaign's own directory's discovery, instead of building it again (a campaign passes it to its confirmations in the program)"), cl::value_desc("DIR"), cl::cat(in_earlier_run), cl::sub(run_cmd), cl::Hidden);
static cl::opt<std::string> acf_candidates("acf-candidates", cl::desc("Also choose among these ACFs (or none): a set from 'ciq-cache import-acfs', or a zip/directory to import"), cl::value_desc("name|path"), RUN_IN(in_search));
static cl::opt<std::string> publish("publish", cl::desc("Also upload what ships to the team's Redis (redis://host:port/db)"), cl::value_desc("url"), RUN_IN(in_shipping));
static cl::opt<std::string> replay("replay", cl::desc("Answer evaluations from recorded samples (CSV with 'controls' and 'ms' columns) instead of running commands; ships nothing"), cl::value_desc("file"), RUN_IN(in_replay));
static cl::opt<std::string> strategy("strategy", cl::desc("Search strategy: genetic (default; NSGA-II with several objectives; steady-state when --jobs > 1), generational (genetic in generations whatever --jobs: reproducible) or random (the baseline)"), cl::init("genetic"), cl::value_desc("genetic|generational|random"), RUN_IN(in_search));
static cl::opt<std::string> cache_dir("cache-dir", cl::desc("Cache to ship to (default $CIQ_CACHE_DIR or ~/.cache/ciq)"), cl::value_desc("dir"), RUN_IN(in_cache));
static cl::opt<std::string> executor("executor", cl::desc("Where commands run: local (default) or slurm (every build, benchmark and check is a Slurm job through srun; see docs/tuning.md, 'Tuning on a cluster')"), cl::value_desc("local|slurm"), cl::init("local"), RUN_IN(in_slurm));
static cl::opt<std::string> slurm_partition("slurm-partition", cl::desc("Slurm partition of the jobs (default: the cluster's)"), cl::value_desc("name"), RUN_IN(in_slurm));
static cl::opt<std::string> slurm_account("slurm-account", cl::desc("Slurm account of the jobs (default: yours)"), cl::value_desc("name"), RUN_IN(in_slurm));
static cl::opt<std::string> slurm_time("slurm-time", cl::desc("Time limit of every job, in Slurm's syntax (default: --timeout rounded up to minutes, else 60)"), cl::value_desc("time"), RUN_IN(in_slurm));
static cl::opt<int> slurm_build_cpus("slurm-build-cpus", cl::desc("CPUs per build job (default 1)"), cl::init(1), RUN_IN(in_slurm));
static cl::opt<std::string> slurm_gres("slurm-gres", cl::desc("GRES of benchmark and check jobs (default gpu:1; 'none' for CPU-only benchmarks)"), cl::value_desc("gres"), cl::init("gpu:1"), RUN_IN(in_slurm));
static cl::list<std::string> slurm_args("slurm-arg", cl::desc("Further srun option for every job, e.g. --slurm-arg=--qos=high; repeatable"), cl::value_desc("option"), cl::cat(in_slurm), cl::sub(run_cmd), cl::sub(campaign_cmd));
static cl::opt<int> slurm_retries("slurm-retries", cl::desc("Resubmissions of a job that Slurm preempted or whose node failed (default 1); a job cancelled or out of time makes the candidate invalid"), cl::init(1), RUN_IN(in_slurm));
static cl::opt<bool> slurm_check("slurm-check", cl::desc("Before searching, run a test build job and benchmark job that must see the run directory (default true)"), cl::init(true), RUN_IN(in_slurm));
static cl::opt<int> concurrent("concurrent", cl::desc("Campaign: runs at once (default 1; locally with a benchmark, each needs its own --gpus)"), cl::init(1), cl::cat(in_campaign), cl::sub(campaign_cmd), cl::ZeroOrMore);
static cl::opt<std::string> prefer("prefer", cl::desc("With several objectives: the one (its name, e.g. energy, or number from 1) whose best point that gives up no other is verified and shipped (default the first)"), cl::value_desc("objective"), cl::cat(in_program), cl::sub(run_cmd), cl::sub(campaign_cmd));
static cl::opt<std::string> from_profile("from-profile", cl::desc("Campaign: tune the program's hottest kernels by GPU time, measured in one run of --bench (or read from DIR, a `ciq-tuner profile --out DIR`); objective kernel-time unless given"), cl::value_desc("DIR"), cl::ValueOptional, cl::cat(in_campaign), cl::sub(campaign_cmd));
static cl::opt<bool> capture_kernels("capture-kernels", cl::desc("Campaign --from-profile: capture each hot kernel's launch in one more run of the program, tune it by replay (ciq-replay: no program build or run per candidate) and confirm the replay's winner in the program before it ships (default true; =false: every candidate is a program run)"), cl::init(true), cl::cat(in_campaign), cl::sub(campaign_cmd));
static cl::opt<std::string> cover("cover", cl::desc("Campaign --from-profile: the share of the program's GPU time whose kernels are tuned, hottest first: 90%, 90 or 0.9 (default 90%)"), cl::value_desc("percent"), cl::init("90%"), cl::cat(in_campaign), cl::sub(campaign_cmd));
static cl::opt<std::string> report_dir(cl::Positional, cl::desc("<run or campaign directory>"), cl::Required, cl::sub(report_cmd));
static cl::opt<std::string> report_out("o", cl::desc("The HTML file to write (default DIR/report.html)"), cl::value_desc("file"), cl::cat(category), cl::sub(report_cmd));
static cl::opt<int> sample_count(cl::Positional, cl::desc("<N>"), cl::init(10), cl::sub(sample_cmd));
static cl::list<std::string> profile_argv(cl::Positional, cl::desc("-- <program> [args...]"), cl::ZeroOrMore, cl::sub(profile_cmd));
static cl::opt<std::string> profile_build("build", cl::desc("Build command run first through ciq-nvcc/ciq-ptxas (traced: the table names each kernel's cache key)"), cl::value_desc("cmd"), cl::cat(category), cl::sub(profile_cmd));
static cl::opt<bool> profile_shell("shell", cl::desc("Run --build through /bin/sh -c"), cl::cat(category), cl::sub(profile_cmd));
static cl::opt<std::string> profile_capture("capture", cl::desc("Also capture the first launch of each of these kernels (mangled names, ','; up to 4 launch configurations each) for tuning by replay: `ciq-tuner run --capture OUT/captures --kernels NAME`"), cl::value_desc("kernels"), cl::cat(category), cl::sub(profile_cmd));
static cl::opt<std::string> profile_out("out", cl::desc("Where the traces go (default: a scratch directory under $TMPDIR, removed at the end unless --keep, --capture or a failure keeps it)"), cl::value_desc("dir"), cl::cat(category), cl::sub(profile_cmd));
static cl::opt<bool> profile_keep("keep", cl::desc("Without --out: keep the scratch directory of the traces (its path is printed)"), cl::cat(category), cl::sub(profile_cmd));
static cl::opt<std::string> profile_trace("trace", cl::desc("Read a recorded kernel trace directory (kernels-*.jsonl) instead of running anything"), cl::value_desc("dir"), cl::cat(category), cl::sub(profile_cmd));
static cl::opt<std::string> profile_build_trace("build-trace", cl::desc("With --trace: the build's CIQ_TRACE directory, to name each kernel's cache key"), cl::value_desc("dir"), cl::cat(category), cl::sub(profile_cmd));
static cl::opt<int> profile_top("top", cl::desc("Kernels listed (default 20; 0 = all)"), cl::init(20), cl::cat(category), cl::sub(profile_cmd));
static cl::opt<bool> profile_json("json", cl::desc("Print one JSON object instead of the table"), cl::cat(category), cl::sub(profile_cmd));

#define AGAIN cl::cat(category), cl::sub(retune_cmd), cl::sub(reverify_cmd)
static cl::opt<bool> again_stale("stale", cl::desc("Retune the entries `ciq-cache stale` lists: made for another ptxas or nvcc than the one found now, or verified on another GPU model"), cl::cat(category), cl::sub(retune_cmd));
static cl::opt<std::string> again_gpu("gpu", cl::desc("With --stale: the GPU model to compare with (default $CIQ_GPU_MODEL, else NVML's first GPU)"), cl::value_desc("name"), cl::cat(category), cl::sub(retune_cmd));
static cl::opt<std::string> again_kernels("kernels", cl::desc("Only the kernel entries whose mangled names match this glob (retune: with --stale, of those; reverify: default every entry with a recorded run)"), cl::value_desc("glob"), AGAIN);
static cl::opt<bool> again_drop_losers("drop-losers", cl::desc("Retire an old winner whose new run finds nothing that beats the default: 'tuned, no gain' takes its place (removed where it is under another toolkit's key; default: it stays)"), cl::cat(category), cl::sub(retune_cmd));
static cl::opt<bool> again_dry_run("dry-run", cl::desc("Print the runs it would start (argv, in their working directories) and the entries it would skip; run nothing"), cl::cat(category), cl::sub(retune_cmd));
static cl::opt<std::string> again_out("out", cl::desc("Directory of the new runs, one per old run (default ./ciq-retune-<date>-<time>, ./ciq-reverify-<date>-<time>)"), cl::value_desc("dir"), AGAIN);
static cl::opt<std::string> again_cache_dir("cache-dir", cl::desc("The cache whose entries are read (and, for retune, where the new runs ship; default $CIQ_CACHE_DIR or ~/.cache/ciq)"), cl::value_desc("dir"), AGAIN);
static cl::opt<bool> again_json("json", cl::desc("Print one JSON object instead of the table"), AGAIN);
static cl::opt<int> again_runs("runs", cl::desc("Interleaved runs per side, 2 or more (default: each run's own --verify-runs)"), cl::init(0), cl::cat(category), cl::sub(reverify_cmd));
static cl::opt<std::string> verify_controls("verify-controls", cl::desc("Run: search nothing; verify this control set against the default as a run verifies its winner, ship nothing (what `ciq-tuner reverify` runs)"), cl::value_desc("file"), cl::cat(in_seeds), cl::sub(run_cmd));

static int fail(const std::string& message, int status = 1) {
  tn::fail(message);  // with `run --json`, its failed summary on stdout too
  return status;
}

// `run --json` (a campaign's, a retune's child, Python's ciq.tune): its
// summary is its stdout's last line however it ends, a mistake found while
// reading the command line included (summaries_on_stdout). Read from argv
// as the parser will read it, before it does.
static void summaries_for_json_runs(int argc, char** argv) {
  if (argc < 2 || std::string(argv[1]) != "run") return;
  std::vector<std::string> given(argv + 2, argv + argc);
  bool asked = false;
  std::string out_dir;
  for (const auto& p : tn::parse_arguments(given, "run")) {
    if (p.name == "json")
      asked = p.flag_on();
    if (p.name == "out" || p.name == "resume") out_dir = p.value;
  }
  if (asked) tn::summaries_on_stdout(out_dir);
}

// What the parser's registry says of an option: whether it is one of
// `subcommand`'s, takes its value as the next argument, and its groups.
static tn::OptionFacts option_facts(std::string_view subcommand, std::string_view name) {
  tn::OptionFacts facts;
  auto option = ciq::cli::registered_option(subcommand, name);
  if (!option) return facts;
  facts.registered = true;
  facts.takes_value = option->takes_separate_value;
  for (const auto& [category, group] : k_groups)
    if (std::find(option->categories.begin(), option->categories.end(), category->getName().str()) != option->categories.end())
      facts.groups |= group;
  return facts;
}

// `ciq-tuner NOSUCH ...`: LLVM's parser would print the top-level help for
// `NOSUCH --help` and exit 0. The subcommand's name, when there is one.
static std::string unknown_subcommand(int argc, char** argv) {
  if (argc < 2 || argv[1][0] == '-') return "";
  for (const cl::SubCommand* sub : {&run_cmd, &campaign_cmd, &report_cmd, &sample_cmd, &profile_cmd, &quality_cmd, &retune_cmd, &reverify_cmd})
    if (sub->getName() == argv[1]) return "";
  return argv[1];
}

// The options of run and campaign as given (run/options.h checks
// them). Only copies: long because there are many options.
static tn::GivenOptions given_options(int argc, char** argv) {
  tn::GivenOptions g;
  g.build = build, g.bench = bench, g.check = check, g.bench_server = bench_server, g.shell = shell;
  g.metrics.assign(metrics.begin(), metrics.end());
  g.objectives.assign(objectives.begin(), objectives.end());
  g.directions.assign(directions.begin(), directions.end());
  g.params.assign(params.begin(), params.end());
  g.seed_controls.assign(seed_controls.begin(), seed_controls.end());
  g.seed_hints.assign(seed_hints.begin(), seed_hints.end());
  g.kernels = kernels, g.space = space, g.stages = stages;
  g.budget = budget, g.generations = generations, g.pool = pool, g.cull = cull, g.mutate_rate = mutate_rate, g.seed = seed;
  g.repeats = repeats, g.server_start = server_start, g.timeout = timeout, g.jobs = jobs;
  g.gpus = gpus, g.gpu_baselines = gpu_baselines;
  g.out = out, g.resume = resume, g.json = json;
  g.min_effect_percent = min_effect, g.verify_runs = verify_runs;
  g.memo_dir = memo_dir;
  g.occupancy_probes = occupancy_probes, g.memo = memo, g.allow_unsafe = allow_unsafe, g.no_ship = no_ship, g.prune = prune;
  g.replaces_run = replaces_run;
  g.discovery_from = discovery_from;
  g.separately = separately;
  g.acf_candidates = acf_candidates, g.publish = publish, g.replay = replay, g.strategy = strategy, g.cache_dir = cache_dir;
  g.executor = executor;
  g.slurm.partition = slurm_partition, g.slurm.account = slurm_account, g.slurm.time_limit = slurm_time;
  g.slurm.build_cpus = slurm_build_cpus, g.slurm.gres = slurm_gres, g.slurm.retries = slurm_retries, g.slurm.check = slurm_check;
  g.slurm.extra.assign(slurm_args.begin(), slurm_args.end());
  g.prefer = prefer;
  // The --publish password comes from here, and no command the tuner runs sees it.
  g.publish_in_env = ciq::env(ciq::Env::publish);
  ::unsetenv(ciq::env_name(ciq::Env::publish));
  // What --resume reruns: the arguments, less --resume's own (either spelling).
  if (argc > 1)
    g.command_line = tn::forward_arguments(std::vector<std::string>(argv + 1, argv + argc), argv[1], argv[1], tn::group_resume);
  return g;
}

// A campaign's runs get its own options, less those that run does not have
// (--concurrent, --from-profile, ...) and those each run gets its own of:
// the directory, --json, the kernel selection.
static std::vector<std::string> campaign_run_args(const std::vector<std::string>& args) {
  std::vector<std::string> options(args.begin() + std::min<std::size_t>(2, args.size()), args.end());
  return tn::forward_arguments(options, "campaign", "run", tn::group_output | tn::group_resume | tn::group_kernels);
}

static int profile_command() {
  tn::ProfileOptions p;
  p.build = profile_build;
  p.shell = profile_shell;
  p.argv.assign(profile_argv.begin(), profile_argv.end());
  p.out_dir = profile_out;
  p.keep = profile_keep;
  p.trace_dir = profile_trace;
  p.build_trace_dir = profile_build_trace;
  p.capture = profile_capture;
  if (auto checked = tn::check_profile_top(profile_top); !checked) return tn::fail(checked.error());
  p.top = profile_top;
  p.json = profile_json;
  auto status = tn::run_profile(p);
  if (!status) return tn::fail(status.error());
  return *status;
}

static int search_quality_command() {
  std::printf("problem,budget,seeds,noise,ga_median_evals_to_95,random_median_evals_to_95,ga_reached,random_reached\n");
  for (const auto& p : tn::synthetic_problems()) {
    auto q = tn::measure_search_quality(p, quality_seeds, quality_budget, quality_noise);
    std::printf("%s,%d,%d,%g,%g,%g,%.2f,%.2f\n", p.name.c_str(), int(quality_budget), int(quality_seeds), double(quality_noise),
                q.median_evals_ga, q.median_evals_random, q.reached_ga, q.reached_random);
  }
  return 0;
}

// A --kernels glob given empty or malformed would select nothing, silently
// (or, empty, everything): a usage error (2).
static int kernels_glob_error(const cl::opt<std::string>& option) {
  std::string problem = ciq::glob_option_problem("--kernels", option, option.getNumOccurrences() > 0);
  return problem.empty() ? 0 : fail(problem, 2);
}

static int retune_command() {
  if (int status = kernels_glob_error(again_kernels)) return status;
  if (!again_stale && again_kernels.empty())
    return fail("retune needs --stale, --kernels GLOB or both (--kernels '*' for every tuned kernel)", 2);
  tn::RetuneOptions r;
  r.cache_dir = again_cache_dir, r.stale = again_stale, r.kernels = again_kernels, r.gpu = again_gpu;
  r.drop_losers = again_drop_losers, r.dry_run = again_dry_run, r.json = again_json, r.out_dir = again_out;
  return tn::run_retune(r);
}

static int reverify_command() {
  if (again_runs < 0 || again_runs == 1)
    return fail("--runs " + std::to_string(again_runs) + ": give 2 or more interleaved runs per side (or 0: each run's own --verify-runs): "
                "the verification's Welch's t-test needs at least 2 pairs to estimate the variance", 2);
  if (int status = kernels_glob_error(again_kernels)) return status;
  tn::ReverifyOptions r;
  r.cache_dir = again_cache_dir, r.kernels = again_kernels, r.runs = again_runs, r.out_dir = again_out, r.json = again_json;
  return tn::run_reverify(r);
}

static int campaign_command(tn::TuneOptions o, const std::vector<std::string>& args, bool profiled) {
  tn::CampaignOptions c;
  c.concurrent = concurrent;
  // run_campaign (and its discovery) checks these too; here a mistake in
  // them exits 2, as in a run.
  if (auto checked = tn::check_campaign_options(o, c.concurrent); !checked) return tn::fail(checked.error());
  if (auto checked = tn::check_commands(o); !checked) return tn::fail(checked.error());
  if (profiled) {
    c.from_profile = from_profile.empty() ? "now" : std::string(from_profile);
    auto share = tn::parse_cover(cover);
    if (!share) return tn::fail(share.error());
    c.cover = *share;
    c.capture = capture_kernels;
  }
  c.together = together;
  c.check_program = check_program;
  c.run_args = tn::without_publish_password(campaign_run_args(args)); // the URL goes in CIQ_PUBLISH
  c.tune = std::move(o);
  return tn::run_campaign(std::move(c));
}

// The command line, with --resume's saved one merged in, parsed; the exit
// status of a parse error, or nothing.
static std::optional<int> parse(int argc, char** argv, std::vector<std::string>& args) {
  if (std::string unknown = unknown_subcommand(argc, argv); !unknown.empty())
    return fail("unknown subcommand '" + unknown + "' (subcommands: run, campaign, report, sample, profile, search-quality, retune, reverify; see 'ciq-tuner --help')", 2);
  auto resumed = tn::with_saved_command_line(std::vector<std::string>(argv, argv + argc));
  if (!resumed) return tn::fail(resumed.error());
  args = std::move(*resumed);
  static std::vector<const char*> cargv; // LLVM's options keep pointers into it
  for (const auto& a : args) cargv.push_back(a.c_str());
  cl::HideUnrelatedOptions(category);
  cl::SetVersionPrinter([](raw_ostream& os) { os << "ciq-tuner (ciq) " CIQ_VERSION "\n"; });
  if (auto parse_errors = ciq::cli::parse_command_line(int(cargv.size()), cargv.data(), tn::k_overview)) {
    tn::print_failure_summary(ciq::cli::report_parse_errors("ciq-tuner", *parse_errors));
    return 2;
  }
  return std::nullopt;
}

// The checks and settings that tie options of `run` and `campaign`
// together (--capture, --compare, --verify-controls, --check-program):
// an exit status when they are refused, else nothing.
std::optional<int> settle_given_options(tn::GivenOptions& given) {
  if (run_cmd && !capture.empty() && separately)
    return fail("--separately tunes several kernels in program runs; --capture replays one kernel", 2);
  if (run_cmd && !capture.empty()) {
    // An empty --compare= is refused as ciq-replay refuses it, not taken for "not given".
    if (compare.getNumOccurrences() > 0 && compare.empty()) return tn::fail(ciq::formats::parse_compare_mode("").error());
    if (auto used = tn::use_capture(given, capture, compare); !used) return tn::fail(used.error());
  } else if (compare.getNumOccurrences() > 0) {
    return fail("--compare is for --capture (how a replayed kernel's outputs are checked)", 2);
  }
  if (run_cmd && !verify_controls.empty()) {
    // The set alone, against the default: no seeds but it, nothing shipped.
    if (!given.resume.empty()) return fail("--verify-controls measures afresh: give a new --out instead of --resume", 2);
    given.seed_controls = {verify_controls};
    given.seed_hints.clear();
    given.no_ship = true;
  }
  if (campaign_cmd && check_program < 0)
    return fail("--check-program takes a number of pairs, 0 for none; not " + std::to_string(check_program), 2);
  return std::nullopt;
}

int main(int argc, char** argv) {
  InitLLVM init(argc, argv);
  // Every reader of the tuner's own arguments (--resume, a campaign's and a
  // retune's child runs) takes an option's value as the parser does.
  tn::set_option_grammar(option_facts);
  summaries_for_json_runs(argc, argv);
  // A run started by a campaign ends (cancelling its jobs, as on Ctrl-C)
  // when the campaign dies, even by SIGKILL: a resumed campaign must not
  // find a stray run still writing to the directory it resumes.
  if (std::string parent = ciq::env(ciq::Env::campaign_pid); !parent.empty()) {
    ::prctl(PR_SET_PDEATHSIG, SIGTERM);
    if (std::to_string(::getppid()) != parent) return 1; // it died before prctl took effect
  }
  std::vector<std::string> args;
  if (auto status = parse(argc, argv, args)) return *status;
  ciq::setup_logging("ciq-tuner", "warn");

  if (profile_cmd) return profile_command();
  if (retune_cmd) return retune_command();
  if (reverify_cmd) return reverify_command();
  // A campaign from the profile tunes each kernel by its own time in the
  // program, unless told otherwise.
  bool profiled = campaign_cmd && from_profile.getNumOccurrences() > 0;
  if (run_cmd || campaign_cmd)
    if (int status = kernels_glob_error(kernels)) return status;
  bool objective_implied = profiled && metrics.empty() && objectives.empty();
  if (objective_implied) {
    objectives.push_back("kernel-time");
    args.push_back("--objective=kernel-time");
  }
  tn::GivenOptions given = given_options(argc, argv);
  if (objective_implied) given.objective_from = "--from-profile";
  if (auto status = settle_given_options(given)) return *status;
  auto options = tn::tune_options(given);
  if (!options) return tn::fail(options.error());
  if (report_cmd) {
    auto written = tn::write_report(report_dir, report_out);
    if (!written) return tn::fail(written.error());
    std::printf("%s\n", written->c_str());
    return 0;
  }
  if (sample_cmd) return tn::sample_space(*options, sample_count);
  if (quality_cmd) return search_quality_command();
  if (run_cmd) return verify_controls.empty() ? tn::run_tuning(std::move(*options)) : tn::run_remeasure(std::move(*options));
  if (campaign_cmd) return campaign_command(std::move(*options), args, profiled);
  std::fprintf(stderr, "ciq-tuner: error: no subcommand given; run 'ciq-tuner --help'\n");
  return 2;
}
