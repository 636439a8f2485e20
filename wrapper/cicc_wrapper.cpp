#include "wrapper/cicc_wrapper.h"

#include "cache/cicc_command.h"
#include "cache/counters.h"
#include "cache/ptx.h"
#include "cache/ptxas_identity.h"
#include "cache/record.h"
#include "cache/storage.h"
#include "cache/store.h"
#include "spaces/render.h"
#include "spaces/space.h"
#include "utils/config.h"
#include "utils/files.h"
#include "utils/log.h"
#include "utils/process.h"
#include "utils/text.h"
#include "wrapper/deps.h"
#include "wrapper/lookup.h"
#include "wrapper/nvcc_steps.h"
#include "wrapper/start_up.h"
#include "wrapper/resources.h"
#include "wrapper/trace.h"
#include "wrapper/watchdog.h"

#include <nlohmann/json.hpp>
#include <optional>
#include <spdlog/spdlog.h>
#include <unistd.h>

namespace ciq::wrapper {

namespace {

class CiccWrapper {
public:
  CiccWrapper(std::string real, std::vector<std::string> args)
      : real_(std::move(real)), args_(std::move(args)), cache_dir_(cache_directory()),
        controls_file_(env(Env::controls)), trace_dir_(env(Env::trace)),
        storage_(cache::Storage::from_environment(cache_dir_)) {}

  /// The result of a cicc run this wrapper made (the caller exits like it),
  /// or std::nullopt: exec cicc unchanged.
  std::optional<RunResult> run();
  /// This call's counts, the storage layer's included.
  cache::Tally tally() const {
    cache::Tally t = tally_;
    cache::count_events(storage_, t);
    return t;
  }

private:
  std::optional<RunResult> pass(cache::Pass reason) {
    tally_.passed(reason);
    spdlog::debug("running cicc unchanged ({})", cache::pass_name(reason));
    return std::nullopt;
  }
  std::optional<spaces::ControlSet> controls_from_file();
  std::optional<spaces::ControlSet> controls_from_storage();
  std::optional<spaces::ControlSet> checked(spaces::ControlSet set);
  Result<const spaces::Space*> nvcc_space();
  std::optional<RunResult> compile(const std::optional<spaces::ControlSet>& controls);
  void trace(const RunResult& run, const std::optional<spaces::ControlSet>& controls);
  bool reaches_machine_code() const;

  // Where the controls came from.
  enum class From { none, controls_file, storage };

  std::string real_;
  std::vector<std::string> args_;
  std::string cache_dir_, controls_file_, trace_dir_;
  cache::CiccCommand command_;
  cache::PtxasIdentity toolkit_;
  Hash128 key_{};
  std::string key_hex_;
  From from_ = From::none;
  cache::Storage storage_;
  cache::Tally tally_{cache::Tool::cicc};
  std::optional<cache::Storage::Hit> hit_;
  std::string error_;     // why controls meant for this unit were not applied
  std::vector<std::string> rendered_; // the options for cicc's command line
  std::optional<Result<std::optional<spaces::Space>>> space_; // nvcc_space(), read once
};

// The nvcc space of the running toolkit (std::nullopt: none covers it),
// read from the spaces directory the first time it is needed.
Result<const spaces::Space*> CiccWrapper::nvcc_space() {
  if (!space_) space_.emplace(spaces::find_space(spaces_directory(), "cicc", toolkit_.release));
  if (!*space_) return space_->error();
  return **space_ ? &***space_ : nullptr;
}

std::optional<RunResult> CiccWrapper::run() {
  auto scanned = cache::scan_cicc_args(args_);
  if (!scanned) return pass(cache::Pass::unparsed_args);
  command_ = std::move(*scanned);
  for (const auto& f : command_.flags)
    if (f == "-g" || f == "--debug_mode") return pass(cache::Pass::debug); // -G: optimisation is off on purpose

  bool tuning = !controls_file_.empty();
  bool stamping = stamps_wanted();  // wrapper/deps.h: even with no cache yet
  if (!tuning && trace_dir_.empty() && !stamping && !storage_.anything_to_read()) return pass(cache::Pass::no_cache);

  auto input = read_file(command_.input);
  if (!input) return pass(unread_input_pass(input.error()));
  // cicc lives in <toolkit>/nvvm/bin; the toolkit's nvcc says its version.
  std::string nvcc = join_path(dir_name(dir_name(dir_name(real_))), "bin/nvcc");
  auto toolkit = cache::identify_ptxas(nvcc, cache_dir_); // same "release X.Y, VX.Y.Z" text as ptxas
  if (!toolkit) return pass(cache::Pass::unknown_nvcc);
  toolkit_ = std::move(*toolkit);
  key_ = cache::unit_key(cache::normalise_cicc_input(*input), command_, toolkit_.version_text);
  key_hex_ = to_hex(key_);
  input->clear();

  std::vector<std::string> seen;
  if (stamping) seen = local_stamp_texts(storage_, {key_});
  auto controls = tuning ? controls_from_file() : controls_from_storage();
  if (stamping) list_stamps({key_}, seen, local_stamp_texts(storage_, {key_}));
  if (!controls && trace_dir_.empty()) {
    // A hit with no controls (tuned, the default won) is counted as ptxas
    // counts it: compiled unchanged on purpose, not for want of an entry.
    if (hit_) return pass(cache::Pass::tuned_default);
    return pass(error_.empty() ? cache::Pass::no_entry : cache::Pass::rejected);
  }
  return compile(controls);
}

std::optional<spaces::ControlSet> CiccWrapper::controls_from_file() {
  auto parsed = read_controls_file(controls_file_, &error_);
  if (!parsed) return std::nullopt;
  std::string units = env(Env::units);
  bool listed = units.empty();
  for (auto u : split(units, ','))
    listed = listed || trim(u) == key_hex_;
  if (parsed->nvcc.empty() || !listed) return std::nullopt;
  from_ = From::controls_file;
  return checked(parsed->nvcc_stage());
}

// The local cache, then the packs, then the team's Redis, as for ptxas:
// each entry checked against the running toolkit's nvcc space on the way.
std::optional<spaces::ControlSet> CiccWrapper::controls_from_storage() {
  cache::EntryRules rules;
  rules.running_space = [this] { return nvcc_space(); };
  rules.policy.allow_unsafe = unsafe_allowed();
  rules.key_fields = cache::EntryRules::KeyFields{"", toolkit_.version, ""};
  rules.gpu = gpu_rule();
  auto found = storage_.find_unit(key_, rules);
  if (!storage_.refusals().empty()) error_ = storage_.refusals().back();
  if (!found) spdlog::debug("lookup failed: {}", found.error().message);
  if (!found || !*found) {
    tally_.add(cache::Counter::miss);
    return std::nullopt;
  }
  tally_.add(cache::Counter::hit);
  hit_ = std::move(*found);
  if (hit_->controls.empty()) return std::nullopt; // tuned before, the default won
  from_ = From::storage;
  if (auto space = nvcc_space(); space && *space) rendered_ = spaces::render_controls(**space, hit_->controls).options;
  return hit_->controls;
}

// `set` if the running toolkit's nvcc space allows it; else why not in error_.
std::optional<spaces::ControlSet> CiccWrapper::checked(spaces::ControlSet set) {
  auto space = nvcc_space();
  if (!space || !*space) {
    error_ = space ? "no knob space covers the NVVM stage of CUDA " + toolkit_.release : space.error().message;
  } else {
    if (set.space.empty()) set.space = (*space)->name;
    spaces::Policy policy;
    policy.allow_unsafe = unsafe_allowed();
    if (auto valid = spaces::validate_controls(**space, set, policy); !valid) {
      error_ = valid.error().message;
    } else {
      rendered_ = spaces::render_controls(**space, set).options;
      return set;
    }
  }
  spdlog::warn("not applying NVVM-stage controls (controls-file): {}", error_);
  tally_.add(cache::Counter::rejected);
  return std::nullopt;
}

std::optional<RunResult> CiccWrapper::compile(const std::optional<spaces::ControlSet>& controls) {
  std::vector<std::string> argv{real_};
  if (controls) {
    auto tuned = cache::apply_cicc_options(args_, command_, rendered_);
    argv.insert(argv.end(), tuned.begin(), tuned.end());
  } else {
    argv.insert(argv.end(), args_.begin(), args_.end());
  }
  RunOptions options;
  options.argv = argv;
  options.capture_stdout = options.capture_stderr = true;
  spdlog::debug("running: {}", fmt::join(argv, " "));
  auto result = run_real_tool(options);
  if (!result) return pass(cache::Pass::spawn_failed);
  bool applied = controls.has_value();
  if (applied && !result->succeeded()) {
    error_ = "cicc " + result->describe() + " with " + spaces::summarise_control_set(*controls);
    spdlog::warn("{}; running it without them", error_);
    options.argv = {real_};
    options.argv.insert(options.argv.end(), args_.begin(), args_.end());
    auto plain = run_real_tool(options);
    if (!plain) return pass(cache::Pass::spawn_failed);
    if (plain->succeeded()) {
      tally_.add(cache::Counter::controls_failed);
      if (hit_) {
        storage_.quarantine(*hit_, {key_}, error_);
        tally_.add(cache::Counter::quarantined);
      }
    }
    result = std::move(plain);
    applied = false;
  }
  if (applied && from_ == From::controls_file) tally_.add(cache::Counter::tuning_applied);
  else if (applied) tally_.add(reaches_machine_code() ? cache::Counter::applied : cache::Counter::applied_ptx_only);
  give_output(*result, result->err);
  if (!trace_dir_.empty()) trace(*result, applied ? controls : std::nullopt);
  return std::move(*result);
}

// Whether this unit's PTX becomes machine code in the nvcc run that asked
// for it, from that nvcc's plan (`nvcc --dryrun` with the command line
// ciq-nvcc passed in CIQ_NVCC_ARGS; about 15 ms, asked on a hit only).
// With -arch=sm_90a nvcc 13 also compiles the unit for compute_90 and
// embeds that PTX as PTX only, for the driver's JIT on other GPUs: the
// entry is applied (the embedded PTX is the tuned one) but changes no
// machine code in the build, and is counted apart. True when it cannot
// tell (no CIQ_NVCC_ARGS: cicc run by hand, or by another nvcc wrapper).
bool CiccWrapper::reaches_machine_code() const {
  std::string given = env(Env::nvcc_args);
  if (given.empty()) return true;
  auto json = nlohmann::json::parse(given, nullptr, false);
  if (!json.is_array() || json.empty()) return true;
  RunOptions options;
  for (const auto& a : json) {
    if (!a.is_string()) return true;
    options.argv.push_back(a.get<std::string>());
  }
  options.argv.push_back("--dryrun");
  options.capture_stdout = options.capture_stderr = true;
  options.stdin_null = true;
  options.timeout_seconds = 10;
  options.own_process_group = true;  // the timeout reaches what nvcc starts
  pause_watchdog();                  // a slow nvcc is nvcc's time, as cicc's own run is
  auto listing = run_process(options);
  resume_watchdog();
  if (!listing || !listing->succeeded()) return true;
  auto plan = parse_dryrun(listing->err, /*skip_unsplittable=*/true);
  if (!plan) return true;
  auto reaches = wrapper::reaches_machine_code(*plan, command_.target);
  if (reaches && !*reaches) spdlog::debug("unit {} for {}: its PTX is embedded as PTX only, no machine code", key_hex_, command_.target);
  return reaches.value_or(true);
}

void CiccWrapper::trace(const RunResult& run, const std::optional<spaces::ControlSet>& controls) {
  UnitTraceRecord r;
  r.unit = command_.unit;
  r.source_path = command_.source_path;
  r.target = command_.target;
  r.key = key_hex_;
  r.nvcc_version = toolkit_.version;
  r.output = command_.output;
  if (run.succeeded() && !command_.output.empty())
    if (auto ptx = read_file(command_.output)) r.kernels = cache::scan_ptx(*ptx).kernel_names();
  if (controls) r.controls_source = from_ == From::storage ? std::string(cache::tier_name(hit_->tier)) : "controls-file";
  r.controls = controls ? spaces::summarise_control_set(*controls) : "";
  r.controls_applied = controls.has_value();
  r.controls_error = error_;
  r.warnings = compiler_warnings(run.err, "cicc");
  r.exit_status = run.shell_status();
  r.seconds = run.seconds;
  write_unit_trace(trace_dir_, r);
}

} // namespace

// As nvcc's prefix, the first argument is the cicc nvcc meant to run, by
// path ("$CICC_PATH/cicc"); CIQ_REAL_CICC is for runs by hand.
const WrappedTool k_cicc{"ciq-cicc", "cicc", Env::real_cicc, Env::in_cicc,
                         [](std::string_view first) { return base_name(first) == "cicc"; }, false};

void run_ciq_cicc(int argc, char** argv) {
  Started started = start_wrapper(k_cicc, argc, argv);

  std::optional<RunResult> finished;
  cache::Tally tally(cache::Tool::cicc);
  tally.add(cache::Counter::calls);
  if (!ciq_disabled()) {
    CiccWrapper wrapper(started.real, started.args);
    finished = wrapper.run();
    tally.merge(wrapper.tally());
    cache::bump_counters(cache_directory(), tally);
  }
  if (finished) exit_like(*finished);
  exec_real(k_cicc, started.real, started.plain);
}

} // namespace ciq::wrapper
