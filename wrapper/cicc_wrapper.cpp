#include "wrapper/cicc_wrapper.h"

#include "cache/cicc_command.h"
#include "cache/counters.h"
#include "cache/ptx.h"
#include "cache/ptxas_identity.h"
#include "cache/record.h"
#include "cache/store.h"
#include "spaces/render.h"
#include "spaces/space.h"
#include "utils/config.h"
#include "utils/files.h"
#include "utils/log.h"
#include "utils/process.h"
#include "utils/text.h"
#include "wrapper/lookup.h"
#include "wrapper/pack_index.h"
#include "wrapper/real_tool.h"
#include "wrapper/remote_lookup.h"
#include "wrapper/trace.h"

#include <optional>
#include <spdlog/spdlog.h>
#include <unistd.h>

namespace ciq::wrapper {

namespace {

// Where the controls came from, for counters and the trace.
enum class From { none, cache, pack, controls_file };

std::string_view from_name(From from) {
  switch (from) {
  case From::cache: return "cache";
  case From::pack: return "pack";
  case From::controls_file: return "controls-file";
  case From::none: break;
  }
  return "";
}

class CiccWrapper {
public:
  CiccWrapper(std::string real, std::vector<std::string> args)
      : real_(std::move(real)), args_(std::move(args)), cache_dir_(cache_directory()),
        controls_file_(env_or_empty("CIQ_CONTROLS")), trace_dir_(env_or_empty("CIQ_TRACE")) {}

  /// The result of a cicc run this wrapper made (the caller exits like it),
  /// or std::nullopt: exec cicc unchanged.
  std::optional<RunResult> run();
  std::vector<std::string> counters;

private:
  std::optional<RunResult> pass(const std::string& reason) {
    counters.push_back("unit.passthrough." + reason);
    spdlog::debug("running cicc unchanged ({})", reason);
    return std::nullopt;
  }
  std::optional<spaces::ControlSet> find_controls();
  std::optional<spaces::ControlSet> checked(spaces::ControlSet set);
  Result<std::optional<spaces::Space>>& nvcc_space();
  bool fetch_remote_record(const std::string& remote);
  std::optional<RunResult> compile(const std::optional<spaces::ControlSet>& controls);
  void quarantine(const std::string& why);
  void trace(const RunResult& run, const std::optional<spaces::ControlSet>& controls);

  std::string real_;
  std::vector<std::string> args_;
  std::string cache_dir_, controls_file_, trace_dir_;
  cache::CiccCommand command_;
  cache::PtxasIdentity toolkit_;
  Hash128 key_{};
  std::string key_hex_;
  From from_ = From::none;
  std::string store_dir_; // the cache, or the pack index the hit came from
  std::string error_;     // why controls meant for this unit were not applied
  std::vector<std::string> rendered_; // the options for cicc's command line
  std::optional<Result<std::optional<spaces::Space>>> space_; // nvcc_space(), read once
};

// The nvcc space of the running toolkit (std::nullopt: none covers it),
// read from the spaces directory the first time it is needed.
Result<std::optional<spaces::Space>>& CiccWrapper::nvcc_space() {
  if (!space_) space_.emplace(spaces::find_space(spaces_directory(), "cicc", toolkit_.release));
  return *space_;
}

std::optional<RunResult> CiccWrapper::run() {
  auto scanned = cache::scan_cicc_args(args_);
  if (!scanned) return pass("unparsed-args");
  command_ = std::move(*scanned);
  for (const auto& f : command_.flags)
    if (f == "-g" || f == "--debug_mode") return pass("debug"); // -G: optimisation is off on purpose

  bool tuning = !controls_file_.empty();
  if (!tuning && trace_dir_.empty() && env_or_empty("CIQ_PACKS").empty() && env_or_empty("CIQ_REMOTE").empty() &&
      !cache::Store::exists(cache_dir_))
    return pass("no-cache");

  auto input = read_file(command_.input);
  if (!input) return pass("unreadable-input");
  // cicc lives in <toolkit>/nvvm/bin; the toolkit's nvcc says its version.
  std::string nvcc = join_path(dir_name(dir_name(dir_name(real_))), "bin/nvcc");
  auto toolkit = cache::identify_ptxas(nvcc, cache_dir_); // same "release X.Y, VX.Y.Z" text as ptxas
  if (!toolkit) return pass("unknown-nvcc");
  toolkit_ = std::move(*toolkit);
  key_ = cache::unit_key(cache::normalise_cicc_input(*input), command_, toolkit_.version_text);
  key_hex_ = to_hex(key_);
  input->clear();

  auto controls = find_controls();
  if (!controls && trace_dir_.empty()) return pass(error_.empty() ? "no-entry" : "rejected");
  return compile(controls);
}

std::optional<spaces::ControlSet> CiccWrapper::find_controls() {
  if (!controls_file_.empty()) {
    auto text = read_file(controls_file_);
    auto parsed = text ? spaces::parse_control_set(*text, controls_file_) : Result<spaces::ControlSet>(text.error());
    if (!parsed) {
      error_ = parsed.error().message;
      spdlog::error("CIQ_CONTROLS: {}", error_);
      return std::nullopt;
    }
    std::string units = env_or_empty("CIQ_UNITS");
    bool listed = units.empty();
    for (auto u : split(units, ','))
      listed = listed || trim(u) == key_hex_;
    if (parsed->nvcc.empty() || !listed) return std::nullopt;
    from_ = From::controls_file;
    return checked(parsed->nvcc_stage());
  }
  auto look = [&](const cache::Store& store) -> std::optional<cache::Record> {
    auto found = lookup_record(store, key_);
    if (!found) {
      spdlog::debug("lookup failed: {}", found.error().message);
      return std::nullopt;
    }
    if (*found && (*found)->kind != "unit") {
      spdlog::warn("record {} is a {} record, not a unit record; ignoring it", key_hex_, (*found)->kind);
      return std::nullopt;
    }
    return std::move(*found);
  };
  std::optional<cache::Record> hit;
  if (auto store = cache::Store::open_for_reading(cache_dir_); store && *store) {
    hit = look(**store);
    if (hit) from_ = From::cache, store_dir_ = cache_dir_;
  }
  std::string packs = env_or_empty("CIQ_PACKS");
  for (auto pack : split(packs, ':')) {
    if (hit || pack.empty()) break;
    auto index = open_pack_index(cache_dir_, std::string(pack));
    if (!index) {
      spdlog::warn("ignoring pack {}: {}", pack, index.error().message);
      continue;
    }
    hit = look(index->store);
    if (hit) from_ = From::pack, store_dir_ = index->directory;
  }
  // The team's Redis last, as for ptxas: a usable record is copied into
  // the local cache and found there.
  if (std::string remote = env_or_empty("CIQ_REMOTE"); !hit && !remote.empty() && fetch_remote_record(remote))
    if (auto store = cache::Store::open_for_reading(cache_dir_); store && *store) {
      hit = look(**store);
      if (hit) from_ = From::cache, store_dir_ = cache_dir_, counters.push_back("unit.remote-hit");
    }
  if (!hit) {
    counters.push_back("unit.miss");
    return std::nullopt;
  }
  counters.push_back("unit.hit");
  if (hit->controls.empty()) return std::nullopt; // tuned before, the default won
  return checked(std::move(hit->controls));
}

// Asks CIQ_REMOTE for this unit's record; true when one was copied locally.
bool CiccWrapper::fetch_remote_record(const std::string& remote) {
  auto fail = [&](const std::string& why) {
    spdlog::warn("CIQ_REMOTE: {}", why);
    counters.push_back("unit.remote-error");
    return false;
  };
  auto config = cache::remote_config(remote, env_or_empty("CIQ_REMOTE_TIMEOUT_MS"));
  if (!config) return fail(config.error().message);
  auto& space = nvcc_space();
  if (!space || !*space) return false; // nothing could be applied anyway
  spaces::Policy policy;
  policy.allow_unsafe = unsafe_allowed();
  auto fetched = fetch_remote_unit(*config, key_, **space, policy, cache_dir_);
  if (!fetched) return fail(fetched.error().message);
  if (fetched->refused) counters.push_back("unit.remote-refused");
  return fetched->copied > 0;
}

// `set` if the running toolkit's nvcc space allows it; else why not in error_.
std::optional<spaces::ControlSet> CiccWrapper::checked(spaces::ControlSet set) {
  auto& space = nvcc_space();
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
  spdlog::warn("not applying NVVM-stage controls ({}): {}", from_name(from_), error_);
  counters.push_back("unit.rejected");
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
  ::alarm(0); // cicc may take as long as it needs
  auto result = run_process(options);
  if (!result) return pass("spawn-failed");
  bool applied = controls.has_value();
  if (applied && !result->succeeded()) {
    error_ = "cicc " + result->describe() + " with " + spaces::summarise_control_set(*controls);
    spdlog::warn("{}; running it without them", error_);
    options.argv = {real_};
    options.argv.insert(options.argv.end(), args_.begin(), args_.end());
    auto plain = run_process(options);
    if (!plain) return pass("spawn-failed");
    if (plain->succeeded()) {
      counters.push_back("unit.controls-failed");
      if (from_ == From::cache || from_ == From::pack) quarantine(error_);
    }
    result = std::move(plain);
    applied = false;
  }
  if (applied) counters.push_back("unit.applied");
  write_all(1, result->out);
  write_all(2, result->err);
  if (!trace_dir_.empty()) trace(*result, applied ? controls : std::nullopt);
  return std::move(*result);
}

void CiccWrapper::quarantine(const std::string& why) {
  auto store = cache::Store::open_for_writing(store_dir_);
  if (!store) {
    spdlog::warn("cannot quarantine: {}", store.error().message);
    return;
  }
  if (auto r = store->put(cache::Table::quarantine, digest_bytes(key_), cache::utc_now() + " " + why); !r)
    spdlog::warn("cannot quarantine {}: {}", key_hex_, r.error().message);
  counters.push_back("unit.quarantined");
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
  r.controls_source = controls ? std::string(from_name(from_)) : "";
  r.controls = controls ? spaces::summarise_control_set(*controls) : "";
  r.controls_applied = controls.has_value();
  r.controls_error = error_;
  r.exit_status = run.shell_status();
  r.seconds = run.seconds;
  write_unit_trace(trace_dir_, r);
}

} // namespace

void run_ciq_cicc(int argc, char** argv) {
  setup_logging("ciq-cicc", "off");
  std::vector<std::string> args(argv + 1, argv + argc);
  // As nvcc's prefix, the first argument is the cicc nvcc meant to run.
  std::string real;
  if (!args.empty() && base_name(args[0]) == "cicc" && is_executable_file(args[0])) {
    real = args[0];
    args.erase(args.begin());
  } else {
    auto found = find_real_tool("CIQ_REAL_CICC", "cicc");
    if (!found) fatal("ciq-cicc", found.error().message);
    real = *found;
  }
  std::vector<std::string> plain{real};
  plain.insert(plain.end(), args.begin(), args.end());
  exec_on_crash(real, plain);
  ::alarm(k_watchdog_seconds);

  std::optional<RunResult> finished;
  std::vector<std::string> counters{"unit.calls"};
  if (!ciq_disabled()) {
    CiccWrapper wrapper(real, args);
    finished = wrapper.run();
    counters.insert(counters.end(), wrapper.counters.begin(), wrapper.counters.end());
    ::alarm(k_watchdog_seconds); // what is left (the counters) is ours
    cache::bump_counters(cache_directory(), counters);
  }
  if (finished) exit_like(*finished);
  ::alarm(0); // alarms survive exec
  Error e = exec_replace(real, plain);
  fatal("ciq-cicc", e.message);
}

} // namespace ciq::wrapper
