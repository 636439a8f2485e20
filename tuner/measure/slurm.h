// Evaluations as Slurm jobs (`ciq-tuner run --executor slurm`): every build,
// benchmark and check command of an evaluation runs through `srun`, which
// submits it as a one-task job, waits for it and passes its output and exit
// status back, so the rest of the tuner sees an ordinary child process.
// Builds ask for CPUs, benchmarks and checks for a GPU (--gres). All jobs of
// one run share a job name derived from the run directory, so that an
// interrupt (and a resume after a killed tuner) cancels what is left with one
// `scancel --name`. The run directory must be on a file system every node
// sees: check_cluster() proves it with a job that reads a token written here.
#pragma once

#include "utils/process.h"
#include "utils/result.h"

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace ciq::tuner {

struct SlurmConfig {
  std::string partition;            // --partition; "" = the cluster's default
  std::string account;              // --account; "" = the user's default
  std::string time_limit;           // --time for every job (Slurm syntax: MM, HH:MM:SS, D-HH); "" = from --timeout, else none
  int build_cpus = 1;               // --cpus-per-task of build jobs
  std::string gres = "gpu:1";       // --gres of benchmark and check jobs; "none" = no GRES
  std::vector<std::string> extra;   // further srun arguments, before the command
  int retries = 1;                  // reruns of a job that was preempted or lost with its node
  std::string job_name;             // shared by the run's jobs (job_name_for)
  bool check = true;                // --slurm-check: test jobs before the search (check_cluster)
  std::string srun = "srun", scancel = "scancel", squeue = "squeue"; // resolved on PATH by resolve_tools
};

/// "ciq-" and 12 hex digits of a hash of the run directory: the same for a
/// resumed run, different for two runs.
std::string job_name_for(const std::string& run_dir);

/// Finds srun, scancel and squeue on PATH (absolute paths, for the interrupt
/// handler); fails, naming the missing one, when Slurm's clients are absent.
Result<void> resolve_tools(SlurmConfig& config);

/// A Slurm time (MM, MM:SS, HH:MM:SS, D-HH, D-HH:MM, D-HH:MM:SS) in
/// seconds; std::nullopt when it is not one.
std::optional<double> time_seconds(std::string_view time);

/// A job Slurm still lists as running can outlive its step (a killed
/// slurmstepd or slurmd leaves srun waiting: seen on the test cluster, 150 s
/// and counting); only a time limit ends it. A run given none gets this one.
constexpr double k_default_job_seconds = 3600;

/// Checks the settings before any job is submitted (a bad --slurm-time or
/// --slurm-gres fails here, not as 64 invalid evaluations).
Result<void> validate(const SlurmConfig& config);

/// The argv that runs `command` as a job: srun with the run's job name,
/// `comment` (to find this one job again), one task on one node, the
/// resources of a build (`gpu` false) or a benchmark/check (`gpu` true),
/// then `--` and the command.
std::vector<std::string> job_argv(const SlurmConfig& config, const std::vector<std::string>& command, bool gpu,
                                  const std::string& comment);

/// How Slurm ended a job, read from what srun printed on stderr.
struct JobEnd {
  bool by_scheduler = false; // cancelled, timed out, preempted, node lost, or never started
  bool retry = false;        // preempted or node lost: says nothing about the candidate
  std::string reason;        // "Slurm cancelled the job (time limit)", ...
};
JobEnd job_end(const RunResult& run);

/// `scancel --name=JOB_NAME` (absolute path): for run_on_interrupt.
std::vector<std::string> cancel_all_argv(const SlurmConfig& config);
/// Cancels the run's jobs still queued or running (a resumed run's
/// leftovers, or everything at the end); returns how many there were.
int cancel_all(const SlurmConfig& config);
/// Cancels the one job submitted with `comment` (after the tuner's own
/// deadline killed its srun).
void cancel_job(const SlurmConfig& config, const std::string& comment);

/// Submits one build-shaped and one benchmark-shaped job that each print a
/// token this process wrote into `run_dir`: fails with the reason when the
/// cluster refuses the settings (partition, account, GRES) or when the nodes
/// do not see the run directory.
Result<void> check_cluster(const SlurmConfig& config, const std::string& run_dir, double timeout_seconds);

} // namespace ciq::tuner
