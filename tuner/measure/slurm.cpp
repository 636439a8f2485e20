#include "tuner/measure/slurm.h"

#include "utils/files.h"
#include "utils/hash.h"
#include "utils/text.h"

#include <spdlog/spdlog.h>

#include <cmath>
#include <random>
#include <unistd.h>

namespace ciq::tuner {

std::string job_name_for(const std::string& run_dir) {
  return "ciq-" + to_hex(xxh128(run_dir)).substr(0, 12);
}

Result<void> resolve_tools(SlurmConfig& config) {
  for (std::string* tool : {&config.srun, &config.scancel, &config.squeue}) {
    auto found = find_program(*tool);
    if (!found)
      return make_error(ciq::errc::not_found, "--executor slurm needs Slurm's '" + *tool +
                                         "' on PATH (Debian: slurm-client) and a cluster it can reach (SLURM_CONF)");
    auto abs = real_path(*found);
    *tool = abs ? *abs : *found;
  }
  return {};
}

namespace {

// Slurm's --time forms: MM, MM:SS, HH:MM:SS, D-HH, D-HH:MM, D-HH:MM:SS.
bool valid_time(std::string_view t) {
  if (t.empty()) return false;
  int colons = 0, dashes = 0;
  for (char c : t) {
    if (c == ':') ++colons;
    else if (c == '-') ++dashes;
    else if (c < '0' || c > '9') return false;
  }
  return dashes <= 1 && colons <= 2 && t.front() != ':' && t.back() != ':' && t.front() != '-' && t.back() != '-';
}

Result<RunResult> run_client(const std::vector<std::string>& argv, double timeout) {
  RunOptions o;
  o.argv = argv;
  o.capture_stdout = o.capture_stderr = o.stdin_null = true;
  o.timeout_seconds = timeout;
  o.own_process_group = true;
  return run_process(o);
}

} // namespace

std::optional<double> time_seconds(std::string_view t) {
  if (!valid_time(t)) return std::nullopt;
  // Whole numbers only (valid_time allowed digits, ':' and one '-'); an
  // empty field ("1::2", "1-:30") is not a time.
  auto number = [](std::string_view f) -> std::optional<double> {
    if (f.empty() || f.size() > 9) return std::nullopt;
    double v = 0;
    for (char c : f) v = v * 10 + (c - '0');
    return v;
  };
  double days = 0;
  bool with_days = false;
  if (auto dash = t.find('-'); dash != std::string_view::npos) {
    auto d = number(t.substr(0, dash));
    if (!d) return std::nullopt;
    days = *d;
    t = t.substr(dash + 1);
    with_days = true;
  }
  std::vector<double> parts;
  for (auto f : split(t, ':')) {
    auto v = number(f);
    if (!v) return std::nullopt;
    parts.push_back(*v);
  }
  double s = 0;
  if (with_days) { // D-HH, D-HH:MM, D-HH:MM:SS
    double unit = 3600;
    for (double p : parts) s += p * unit, unit /= 60;
  } else if (parts.size() == 1) { // MM
    s = parts[0] * 60;
  } else if (parts.size() == 2) { // MM:SS
    s = parts[0] * 60 + parts[1];
  } else { // HH:MM:SS
    s = parts[0] * 3600 + parts[1] * 60 + parts[2];
  }
  return days * 86400 + s;
}

Result<void> validate(const SlurmConfig& config) {
  if (!config.time_limit.empty() && !time_seconds(config.time_limit))
    return make_error(ciq::errc::usage, "--slurm-time '" + config.time_limit + "' is not a Slurm time (MM, HH:MM:SS or D-HH:MM:SS)");
  if (config.build_cpus < 1) return make_error(ciq::errc::usage, "--slurm-build-cpus must be at least 1");
  if (config.retries < 0) return make_error(ciq::errc::usage, "--slurm-retries cannot be negative");
  if (config.gres.empty() || config.gres.find_first_of(" \t\n") != std::string::npos)
    return make_error(ciq::errc::usage, "--slurm-gres '" + config.gres + "': give a GRES such as gpu:1, or none");
  for (const auto& a : config.extra)
    if (a == "--" || !starts_with(a, "-"))
      return make_error(ciq::errc::usage, "--slurm-arg '" + a + "' is not an srun option (write --slurm-arg=--qos=high)");
  return {};
}

std::vector<std::string> job_argv(const SlurmConfig& config, const std::vector<std::string>& command, bool gpu,
                                  const std::string& comment) {
  std::vector<std::string> argv{config.srun, "--job-name=" + config.job_name, "--comment=" + comment,
                                "--nodes=1", "--ntasks=1", "--export=ALL", "--kill-on-bad-exit=1"};
  if (!config.partition.empty()) argv.push_back("--partition=" + config.partition);
  if (!config.account.empty()) argv.push_back("--account=" + config.account);
  if (!config.time_limit.empty()) argv.push_back("--time=" + config.time_limit);
  if (gpu) {
    if (config.gres != "none") argv.push_back("--gres=" + config.gres);
  } else {
    argv.push_back("--cpus-per-task=" + std::to_string(config.build_cpus));
  }
  argv.insert(argv.end(), config.extra.begin(), config.extra.end());
  argv.push_back("--");
  argv.insert(argv.end(), command.begin(), command.end());
  return argv;
}

JobEnd job_end(const RunResult& run) {
  JobEnd end;
  // slurmstepd: "*** JOB 12 ON node CANCELLED AT <time> DUE TO TIME LIMIT ***"
  // (or STEP 12.0 ..., or no DUE TO for scancel); srun: "Unable to allocate
  // resources: ..." when the job never started.
  const std::string& e = run.err;
  if (auto at = e.find("Unable to allocate resources:"); at != std::string::npos) {
    auto nl = e.find('\n', at);
    end.by_scheduler = true;
    end.reason = "Slurm did not run the job: " + std::string(trim(e.substr(at + 29, nl == std::string::npos ? nl : nl - at - 29)));
    return end;
  }
  auto stars = e.find("*** ");
  for (; stars != std::string::npos; stars = e.find("*** ", stars + 4)) {
    auto close = e.find(" ***", stars + 4);
    if (close == std::string::npos) break;
    std::string_view line(e.data() + stars + 4, close - stars - 4);
    if (line.find(" CANCELLED AT ") == std::string_view::npos) continue;
    end.by_scheduler = true;
    auto due = line.find(" DUE TO ");
    std::string why = due == std::string_view::npos ? "" : std::string(line.substr(due + 8));
    for (auto& c : why) c = char(std::tolower(static_cast<unsigned char>(c)));
    end.retry = why == "preemption" || why == "node failure";
    end.reason = "Slurm cancelled the job" + (why.empty() ? std::string(" (scancel)") : " (" + why + ")");
    return end;
  }
  // srun can end before slurmstepd's line reaches it; its own words for a
  // step that Slurm signalled then say the same, without the cause.
  for (const char* marker : {"srun: Job step aborted", "_step_signal: Terminating StepId=", "srun: forcing job termination"})
    if (e.find(marker) != std::string::npos) {
      end.by_scheduler = true;
      end.reason = "Slurm cancelled the job";
      return end;
    }
  return end;
}

std::vector<std::string> cancel_all_argv(const SlurmConfig& config) {
  return {config.scancel, "--name=" + config.job_name};
}

int cancel_all(const SlurmConfig& config) {
  auto listed = run_client({config.squeue, "--noheader", "--name=" + config.job_name, "--format=%i"}, 30);
  if (!listed || !listed->succeeded()) return 0;
  int jobs = 0;
  for (auto line : split(listed->out, '\n'))
    if (!trim(line).empty()) ++jobs;
  if (jobs) {
    auto r = run_client(cancel_all_argv(config), 30);
    if (!r || !r->succeeded()) spdlog::warn("could not cancel the run's {} Slurm job(s) ({})", jobs, config.job_name);
  }
  return jobs;
}

void cancel_job(const SlurmConfig& config, const std::string& comment) {
  auto listed = run_client({config.squeue, "--noheader", "--name=" + config.job_name, "--format=%i|%k"}, 30);
  if (!listed || !listed->succeeded()) return;
  for (auto line : split(listed->out, '\n')) {
    auto bar = line.find('|');
    if (bar == std::string_view::npos || trim(line.substr(bar + 1)) != comment) continue;
    auto r = run_client({config.scancel, std::string(trim(line.substr(0, bar)))}, 30);
    if (!r || !r->succeeded()) spdlog::warn("could not cancel the Slurm job of {}", comment);
  }
}

Result<void> check_cluster(const SlurmConfig& config, const std::string& run_dir, double timeout_seconds) {
  std::random_device random;
  std::string token = to_hex(xxh128(std::to_string(random()) + ":" + std::to_string(random()) + ":" + run_dir));
  std::string path = join_path(run_dir, "slurm-check");
  if (auto w = write_file_atomic(path, token + "\n"); !w) return w.error();
  for (bool gpu : {false, true}) {
    const char* kind = gpu ? "benchmark" : "build";
    auto run = run_client(job_argv(config, {"cat", path}, gpu, "check " + std::string(kind)), timeout_seconds);
    if (!run) return run.error();
    if (run->timed_out) {
      cancel_job(config, "check " + std::string(kind));
      return make_error("slurm", "a test " + std::string(kind) + " job did not finish within " +
                                     format_number(timeout_seconds) + " s (is the partition busy or down? squeue shows it)");
    }
    if (!run->succeeded()) {
      JobEnd end = job_end(*run);
      std::string said(trim(run->err));
      return make_error("slurm", "a test " + std::string(kind) + " job failed: " +
                                     (end.by_scheduler ? end.reason : run->describe() + (said.empty() ? "" : ": " + said)));
    }
    if (trim(run->out) != token)
      return make_error("slurm", "a Slurm " + std::string(kind) + " job does not see the run directory " + run_dir +
                                     " (it read '" + std::string(trim(run->out)).substr(0, 80) +
                                     "'): put --out on a file system every node mounts at the same path");
  }
  ::unlink(path.c_str());
  return {};
}

} // namespace ciq::tuner
