#include "wrapper/nvcc_wrapper.h"

#include "cache/counters.h"
#include "cache/ptxas_identity.h"
#include "spaces/space.h"
#include "utils/config.h"
#include "utils/files.h"
#include "utils/log.h"
#include "utils/process.h"
#include "utils/text.h"
#include "utils/write_all.h"
#include "wrapper/compiler_check.h"
#include "wrapper/deps.h"
#include "wrapper/start_up.h"
#include "wrapper/step_memo.h"
#include "wrapper/trace.h"
#include "wrapper/watchdog.h"

#include <algorithm>
#include <cstdlib>
#include <nlohmann/json.hpp>
#include <spdlog/spdlog.h>
#include <unistd.h>

extern char** environ;

namespace ciq::wrapper {

std::string shell_quote(const std::string& word) {
  std::string out = "'";
  for (char c : word) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

static bool has_any(const std::vector<std::string>& args, std::initializer_list<std::string_view> names) {
  return std::any_of(args.begin(), args.end(), [&](const std::string& a) {
    for (auto n : names)
      if (a == n || (starts_with(a, n) && a.size() > n.size() && a[n.size()] == '=')) return true;
    return false;
  });
}

bool is_lto_device_link(const std::vector<std::string>& args) {
  if (!has_any(args, {"-dlto", "--dlink-time-opt"})) return false;
  if (has_any(args, {"-dlink", "--device-link"})) return true;
  // Without a compile-only phase option nvcc links, device link included.
  return !has_any(args, {"-c", "--compile", "-cubin", "--cubin", "-ptx", "--ptx", "-fatbin", "--fatbin", "-E",
                         "--preprocess", "-M", "-MM", "-lib", "--lib", "-dc", "--device-c"});
}

/// Whether ciq knows the NVVM stage of this nvcc: a space file covers its
/// release (checked on CUDA 13.0: --cicc-prefix is hidden, so it goes only
/// to the toolkits whose stage was verified). The version is probed once per
/// nvcc binary and remembered in <cache>/tools/. Otherwise the counter that
/// says why: the toolkit is not covered, or the space files could not be
/// read (no share/ciq/spaces beside the tools, CIQ_SPACES_DIR wrong).
static std::optional<cache::Counter> nvvm_stage_unknown(const std::string& real_nvcc) {
  auto id = cache::identify_ptxas(real_nvcc, cache_directory()); // nvcc prints the same "release X.Y"
  if (!id) return cache::Counter::unit_unknown_toolkit;
  auto space = spaces::find_space(spaces_directory(), "cicc", id->release);
  if (!space) {
    spdlog::debug("the NVVM stage is skipped: {}", space.error().message);
    return cache::Counter::unit_no_spaces;
  }
  if (!*space) return cache::Counter::unit_unknown_toolkit;
  return std::nullopt;
}

/// What a memoised build did, for the tuner's journal: <CIQ_TRACE>/steps/.
static void write_memo_report(const MemoOutcome& outcome) {
  std::string trace = env(Env::trace);
  if (!trace.empty()) write_steps_trace(trace, cache::StepsRecord{outcome.steps_run, outcome.steps_reused, outcome.reused});
}

/// In tuning mode (the tuner sets CIQ_MEMO_DIR beside CIQ_CONTROLS and
/// CIQ_TRACE), runs nvcc's steps reusing what the candidate does not change;
/// returns only when that was not possible, with this process's environment
/// as it was, so that the caller runs nvcc itself.
static void try_memoised_build(const std::vector<std::string>& nvcc_argv, const std::vector<std::string>& args,
                               cache::Tally& counters, const std::optional<std::string>& dep_file) {
  std::string memo_dir = env(Env::memo_dir);
  bool tuning = !env(Env::controls).empty() || !env(Env::trace).empty();
  if (memo_dir.empty() || !tuning) return;
  if (memo_unsuitable(args)) {
    counters.add(cache::Counter::memo_unsuitable);
    return;
  }
  std::vector<std::string> saved_environment;
  for (char** e = environ; *e; ++e) saved_environment.emplace_back(*e);
  if (auto outcome = run_nvcc_memoised(nvcc_argv, memo_dir)) {
    counters.add(cache::Counter::memo_builds);
    counters.add(cache::Counter::memo_steps_reused, outcome->steps_reused);
    write_memo_report(*outcome);
    if (dep_file) mark_tuning_build(*dep_file);  // compiled with a candidate's controls: the next build compiles it again
    cache::bump_counters(cache_directory(), counters);
    std::exit(0);
  }
  ::clearenv();
  for (const auto& kv : saved_environment) ::putenv(::strdup(kv.c_str()));
  counters.add(cache::Counter::memo_fallback);
}

// As a compiler launcher (`ciq-nvcc /usr/local/cuda/bin/nvcc <args>`, or
// `ciq-nvcc nvcc <args>`, looked up on PATH), the first argument is the
// nvcc to run, and wins over CIQ_REAL_NVCC.
const WrappedTool k_nvcc{"ciq-nvcc", "nvcc", Env::real_nvcc, Env::in_nvcc,
                         [](std::string_view first) {
                           if (first.empty() || first.front() == '-') return false;
                           if (first.find('/') == std::string_view::npos) return first == "nvcc";
                           return first.find("nvcc") != std::string_view::npos && is_executable_file(std::string(first));
                         },
                         false};

void run_ciq_nvcc(int argc, char** argv) {
  // As in ciq-ptxas: a crash, or ciq's own work taking more than a few
  // seconds, runs nvcc unchanged. The memoised tuning build runs nvcc's
  // steps (real tool work, of any length) with the watchdog paused.
  Started started = start_wrapper(k_nvcc, argc, argv);
  const std::string& self = started.self;
  const std::string& real = started.real;
  const std::vector<std::string>& args = started.args;
  const std::vector<std::string>& plain = started.plain;

  // ccache's compiler_check (compiler_check.h): ciq's mode, not a compile.
  if (asks_compiler_check(args)) {
    bool written = write_all(STDOUT_FILENO, compiler_check_text(real, cache_directory()));
    std::exit(written ? 0 : 1);
  }

  cache::Tally counters(cache::Tool::nvcc);
  counters.add(cache::Counter::calls);
  std::vector<std::string> argv_out = plain;
  std::string ciq_ptxas = env(Env::ptxas);
  if (ciq_ptxas.empty()) ciq_ptxas = join_path(dir_name(self), "ciq-ptxas");
  std::string ciq_cicc = join_path(dir_name(self), "ciq-cicc");

  if (ciq_disabled()) {
    counters.passed(cache::Pass::disabled);
  } else if (has_any(args, {"--version", "-V", "--help", "-h"})) {
    counters.passed(cache::Pass::info);
  } else if (has_any(args, {"--ptxas-prefix"})) {
    spdlog::debug("the caller set --ptxas-prefix; leaving it alone");
    counters.passed(cache::Pass::user_prefix);
  } else if (!is_executable_file(ciq_ptxas)) {
    spdlog::warn("cannot find ciq-ptxas at {}; running nvcc unchanged", ciq_ptxas);
    counters.passed(cache::Pass::no_ciq_ptxas);
  } else {
    if (is_lto_device_link(args)) {
      spdlog::debug("-dlto device link: nvlink compiles in-process, no ptxas runs, controls cannot apply");
      counters.add(cache::Counter::lto_link);
    }
    argv_out.insert(argv_out.begin() + 1, "--ptxas-prefix=" + shell_quote(ciq_ptxas));
    // The NVVM stage: cicc runs behind ciq-cicc (wrapper/cicc_wrapper.h),
    // unless the caller has a cicc prefix of their own.
    if (has_any(args, {"--cicc-prefix", "-cicc-prefix"})) {
      counters.add(cache::Counter::unit_user_prefix);
    } else if (!is_executable_file(ciq_cicc)) {
      counters.add(cache::Counter::unit_no_ciq_cicc);
    } else if (auto why = nvvm_stage_unknown(real)) {
      counters.add(*why);
    } else {
      argv_out.insert(argv_out.begin() + 2, "--cicc-prefix=" + shell_quote(ciq_cicc));
      // ciq-cicc asks this nvcc's plan whether a unit's PTX becomes machine
      // code (an -arch=sm_90a build also embeds compute_90 PTX alone).
      std::vector<std::string> nvcc_args{real};
      nvcc_args.insert(nvcc_args.end(), args.begin(), args.end());
      // Linux takes at most 128 KiB in one variable; beyond 64 KiB, none
      // (and not one this process inherited): ciq-cicc cannot tell.
      if (std::string text = nlohmann::json(nvcc_args).dump(); text.size() < 65536) ::setenv(env_name(Env::nvcc_args), text.c_str(), 1);
      else ::unsetenv(env_name(Env::nvcc_args));
    }
    auto dep_file = compile_dependency_file(args);
    pause_watchdog();
    try_memoised_build(argv_out, args, counters, dep_file);
    resume_watchdog();
    if (dep_file) {
      // nvcc runs as a child: its dependency file gets the stamps of the
      // cache keys its steps looked up (wrapper/deps.h).
      counters.add(cache::Counter::deps_stamped);
      cache::bump_counters(cache_directory(), counters);
      spdlog::debug("running: {} (dependency file {})", fmt::join(argv_out, " "), *dep_file);
      run_nvcc_with_stamps(real, argv_out, *dep_file);
    }
  }
  if (!ciq_disabled()) cache::bump_counters(cache_directory(), counters);
  spdlog::debug("running: {}", fmt::join(argv_out, " "));
  exec_real(k_nvcc, real, argv_out);
}

} // namespace ciq::wrapper
