// Every option of `ciq-tuner run`, `campaign` and `profile` checked in one
// place, with one error style (what is wrong with which option, and what to
// give instead). tuner_main.cpp only parses the command line into
// GivenOptions (the values as given); tune_options() turns them into
// TuneOptions, refusing what makes no sense on its own or together, and
// prepare_run() settles, just before a run or a campaign's discovery, what
// needs the machine (the replay file, the executor's checks, the cache
// directory, the run directory's name).
#pragma once

#include "tuner/measure/setup.h"
#include "tuner/formats/kernel_trace.h"
#include "tuner/search/search.h"
#include "utils/result.h"

#include <cstddef>
#include <string>
#include <vector>

namespace ciq::tuner {

inline constexpr const char* k_tuner_version = "ciq-tuner " CIQ_VERSION;

struct TuneOptions {
  TuningSetup setup;
  std::string space = "";            // "" = the traced ptxas' space; "none" = parameters only
  std::vector<std::string> params;   // --param specs
  std::vector<std::string> seeds;    // control-set files to seed the population with
  std::vector<std::string> seed_hints; // the same, but one that does not fit the space is skipped with a warning
  bool occupancy_probes = true;      // seed per-kernel maxnreg at occupancy limits (occupancy.h)
  bool prune = true;                 // knock out the winner's knobs that earn nothing (verify.h)
  SearchConfig search;
  std::string out_dir;               // the run directory
  bool resume = false;               // continue the run in out_dir
  double min_effect = 0.01;          // smallest relative gain worth shipping
  std::size_t prefer = 0;            // several objectives: the one whose best (giving up no other) ships (--prefer)
  double alpha = 0.05;               // significance level
  int verify_runs = 10;              // interleaved runs per side when verifying
  bool allow_unsafe = false;
  std::string stages = "all";        // --stages: all, ptxas or nvcc
  std::vector<TracedUnit> units;     // the discovery build's translation units (set by the run)
  bool ship = true;                  // write the verified winner to the cache
  // A command-line file: "tuned, no gain" replaces the winners that run
  // shipped under the same keys (retune --drop-losers); "": earlier
  // winners are kept (ship.cpp)
  std::string replaces_run;
  // A campaign's discovery directory (complete): taken as this run's
  // instead of a traced build of its own (a campaign's confirmations)
  std::string discovery_from;
  bool json = false;                 // last stdout line: a JSON summary
  std::string cache_dir;
  std::string acf_candidates;        // an ACF candidate set's name, or a zip/directory to import as one
  std::string publish;               // redis:// URL to upload what ships to (the team tier)
  std::string replay;                // recorded samples to answer evaluations from (see replay.h)
  bool random_search = false;        // the baseline strategy instead of the genetic search
  bool generational = false;         // generations even with --jobs > 1 (reproducible)
  // --separately: several targeted kernels tuned in the same program runs,
  // each by its own time and with its own knobs only (run/kernel_parts.h)
  bool separately = false;
  std::vector<std::string> command_line; // saved for --resume
};

/// The options of `run` and `campaign` as given on the command line,
/// unchecked (tuner_main.cpp's cl::opt values, copied).
struct GivenOptions {
  std::string build, bench, check, bench_server;
  bool shell = false;
  std::vector<std::string> metrics, objectives, directions, params, seed_controls, seed_hints;
  std::string kernels, space, stages = "all";
  int budget = 32, generations = 0, pool = 8;
  double cull = 0.5, mutate_rate = 0.25;
  unsigned long long seed = 1;
  int repeats = 3;
  double server_start = 120, timeout = 0;
  int jobs = 0;                      // 0: chosen from the build and the CPUs
  std::string gpus;                  // "0,1"
  bool gpu_baselines = true;
  std::string out, resume;
  bool json = false;
  double min_effect_percent = 1;
  int verify_runs = 10;
  bool occupancy_probes = true, memo = true, allow_unsafe = false, no_ship = false, prune = true;
  std::string memo_dir;  // --memo-dir: a memo shared with other runs (a campaign's)
  std::string objective_from;  // the option that chose the objectives ("--from-profile"); "" = the user's --objective
  bool separately = false;
  std::string acf_candidates, publish, replay, strategy = "genetic", cache_dir;
  std::string replaces_run;
  std::string discovery_from;
  std::string executor = "local";
  SlurmConfig slurm;                 // the --slurm-* values (used with --executor slurm)
  std::string prefer;
  std::string publish_in_env;        // CIQ_PUBLISH (the --publish URL with its password)
  std::vector<std::string> command_line; // argv after the program's name, less --resume DIR
};

/// The checked options of a run (or a campaign's runs). Fails on the first
/// option that is wrong, naming it and what it takes.
Result<TuneOptions> tune_options(const GivenOptions& given);

/// `--gpus` as a list of GPUs (indices or UUIDs); "" gives none. Fails on an
/// empty entry or a GPU named twice.
Result<std::vector<std::string>> parse_gpu_list(const std::string& list);

/// `--cover`: "90%", "90" or "0.9" as the fraction 0.9. Fails when it is no
/// number, or not above 0 and at most 100 %.
Result<double> parse_cover(const std::string& text);

/// `--publish URL`. A run directory keeps it with its password masked (***),
/// so a resumed run, or a campaign's run, finds it so: the password then
/// comes from `full` (CIQ_PUBLISH), the same URL in full.
Result<std::string> publish_url(const std::string& given, const std::string& full);

/// `ciq-tuner campaign`'s own options: --concurrent at least 1; above 1,
/// with a benchmark on this machine, a GPU per search in --gpus (two
/// searches timing on one GPU disturb each other), and builds into
/// {workdir} (runs at once would rebuild one tree at once: each clean or
/// rebuild breaks the others' builds).
Result<void> check_campaign_options(const TuneOptions& o, int concurrent);

/// Whether `concurrent` searches each need GPUs of their own: more than
/// one, timing benchmarks, on this machine (Slurm places its jobs itself).
bool campaign_needs_gpus(const TuneOptions& o, int concurrent);

/// `ciq-tuner profile --top N`: a number of kernels, 0 for all.
Result<void> check_profile_top(int top);

/// The commands and objectives a run needs: an objective, --bench for a
/// --metric, and --build or --bench (none of them with --replay). Fails
/// ("usage") naming what is missing.
Result<void> check_commands(const TuneOptions& o);

/// What a run (or a campaign's discovery) needs settled on this machine
/// before it starts: --replay's file read (its objective set, nothing
/// shipped), the executor made and its options checked, the objectives'
/// needs (--metric needs --bench), the cache directory writable (or
/// creatable), and `out_dir` made absolute (or named by the date).
Result<void> prepare_run(TuneOptions& o);

/// `dir` made absolute (its parent resolved), or `<prefix>-<date>-<time>`
/// in the current directory when empty. Fails ("unsafe") when, as written,
/// the path passes through another user's link or a directory they could
/// swap (check_secure_location on its deepest existing level).
Result<std::string> output_directory(std::string dir, const char* prefix);

} // namespace ciq::tuner
