#include "wrapper/ptxas_wrapper.h"

#include "cache/counters.h"
#include "cache/key.h"
#include "cache/ptxas_command.h"
#include "cache/ptxas_identity.h"
#include "cache/record.h"
#include "cache/store.h"
#include "spaces/render.h"
#include "spaces/space.h"
#include "utils/config.h"
#include "utils/elf.h"
#include "utils/files.h"
#include "utils/log.h"
#include "utils/process.h"
#include "utils/text.h"
#include "wrapper/lookup.h"
#include "wrapper/pack_index.h"
#include "wrapper/real_tool.h"
#include "wrapper/remote_lookup.h"
#include "wrapper/trace.h"

#include <chrono>
#include <cstdio>
#include <optional>
#include <spdlog/spdlog.h>
#include <unistd.h>

namespace ciq::wrapper {

namespace {

// ptxas' own word on why it failed: its first `fatal` or `error` line,
// blanks collapsed, at most 200 characters; "" when it said none.
std::string first_error_line(std::string_view err) {
  while (!err.empty()) {
    std::size_t end = err.find('\n');
    std::string_view line = err.substr(0, end);
    err = end == std::string_view::npos ? std::string_view{} : err.substr(end + 1);
    if (line.find("fatal") == std::string_view::npos && line.find("error") == std::string_view::npos) continue;
    std::string out;
    for (char c : line) {
      if (c == '\r') continue;
      if (c == ' ' || c == '\t') {
        if (!out.empty() && out.back() != ' ') out += ' ';
      } else {
        out += c;
      }
    }
    while (!out.empty() && out.back() == ' ') out.pop_back();
    return out.size() > 200 ? out.substr(0, 200) : out;
  }
  return "";
}

// What the wrapper decided: run the real ptxas unchanged (and why), or it
// already ran ptxas and must end the way that run ended.
struct Outcome {
  std::string pass_reason;           // non-empty: exec the real ptxas unchanged
  std::optional<RunResult> finished; // set: exit like this run
  std::vector<std::string> counters;

  static Outcome pass(std::string reason, std::vector<std::string> counters = {}) {
    counters.push_back("passthrough." + reason);
    return Outcome{std::move(reason), std::nullopt, std::move(counters)};
  }
};

class PtxasWrapper {
public:
  PtxasWrapper(std::string real, std::vector<std::string> args)
      : real_(std::move(real)), args_(std::move(args)), cache_dir_(cache_directory()),
        controls_file_(env_or_empty("CIQ_CONTROLS")), trace_dir_(env_or_empty("CIQ_TRACE")),
        store_dir_(cache_dir_), remote_(env_or_empty("CIQ_REMOTE")) {
    std::string packs = env_or_empty("CIQ_PACKS");
    for (auto p : split(packs, ':'))
      if (!p.empty()) packs_.emplace_back(p);
  }

  Outcome run();
  const std::vector<std::string>& extra_counters() const { return counters_; }

private:
  Result<std::string> read_input(const cache::PtxasInput& input) const;
  Outcome compile(const std::optional<spaces::ControlSet>& controls, const std::string& source,
                  std::string controls_error);
  void quarantine(const std::string& why);
  std::optional<LookupResult> lookup_packs();
  std::optional<LookupResult> lookup_remote();
  void trace(const RunResult& run, bool applied, const std::string& error);

  std::string real_;
  std::vector<std::string> args_;
  std::string cache_dir_, controls_file_, trace_dir_;
  std::string store_dir_;          // where store_ lives: the cache, or a pack's index
  std::vector<std::string> packs_; // CIQ_PACKS
  std::string remote_;             // CIQ_REMOTE
  std::vector<std::string> counters_;

  cache::PtxasCommand command_;
  cache::PtxasIdentity identity_;
  std::string ptx_;
  cache::PtxModule module_;
  cache::KeyContext context_;
  std::optional<cache::Store> store_;
  std::optional<spaces::Space> space_;
  std::string controls_source_, controls_summary_;
};

Result<std::string> PtxasWrapper::read_input(const cache::PtxasInput& input) const {
  if (input.is_string) return input.value;
  return read_file(input.value);
}

std::optional<LookupResult> PtxasWrapper::lookup_packs() {
  for (const auto& pack : packs_) {
    auto index = open_pack_index(cache_dir_, pack);
    if (!index) {
      spdlog::warn("ignoring pack {}: {}", pack, index.error().message);
      counters_.push_back("pack-refused");
      continue;
    }
    auto found = lookup_controls(index->store, module_, context_);
    if (!found) {
      spdlog::warn("ignoring pack {}: {}", pack, found.error().message);
      continue;
    }
    if (*found) {
      spdlog::debug("hit in pack {}", pack);
      counters_.push_back("pack-hit");
      store_.reset();
      store_.emplace(std::move(index->store));
      store_dir_ = index->directory;
      return std::move(*found);
    }
  }
  return std::nullopt;
}

std::optional<LookupResult> PtxasWrapper::lookup_remote() {
  auto fail = [&](const std::string& why) -> std::optional<LookupResult> {
    spdlog::warn("CIQ_REMOTE: {}", why);
    counters_.push_back("remote-error");
    return std::nullopt;
  };
  auto config = cache::remote_config(remote_, env_or_empty("CIQ_REMOTE_TIMEOUT_MS"));
  if (!config) return fail(config.error().message);
  auto space = spaces::find_space(spaces_directory(), "ptxas", identity_.release);
  if (!space || !*space) return std::nullopt; // nothing could be applied anyway
  spaces::Policy policy;
  policy.allow_unsafe = unsafe_allowed();
  // fetch_remote opens the cache to write what it copies: one LMDB
  // environment per process, so close ours (reopened below on a hit).
  store_.reset();
  auto fetched = fetch_remote(*config, module_, context_, **space, policy, cache_dir_);
  if (!fetched) return fail(fetched.error().message);
  if (fetched->refused) counters_.push_back("remote-refused");
  if (!fetched->copied) return std::nullopt;
  auto store = cache::Store::open_for_reading(cache_dir_);
  if (!store || !*store) return fail("cannot reopen the local cache after copying");
  store_.reset();
  store_.emplace(std::move(**store));
  store_dir_ = cache_dir_;
  auto found = lookup_controls(*store_, module_, context_);
  if (!found || !*found) return std::nullopt;
  spdlog::debug("hit in {} (copied {} record{})", remote_, fetched->copied, fetched->copied == 1 ? "" : "s");
  counters_.push_back("remote-hit");
  return std::move(*found);
}

Outcome PtxasWrapper::run() {
  auto scanned = cache::scan_ptxas_args(args_);
  if (!scanned) {
    spdlog::debug("cannot read the arguments: {}", scanned.error().message);
    return Outcome::pass("unparsed-args");
  }
  command_ = std::move(*scanned);
  if (command_.info_only) return Outcome::pass("info");
  if (command_.inputs.empty()) return Outcome::pass("no-input");
  if (command_.inputs.size() > 1) return Outcome::pass("several-inputs");
  if (command_.target.empty()) return Outcome::pass("no-target");
  if (starts_with(command_.target, "compute_")) return Outcome::pass("virtual-target"); // nvcc's syntax check
  // A trace that cannot be written is no reason to run ptxas otherwise
  // (tracing adds -v, which changes the cubin's bytes): drop the trace.
  if (!trace_dir_.empty() && !trace_dir_usable(trace_dir_)) {
    spdlog::warn("CIQ_TRACE={} cannot be written; not tracing this compile", trace_dir_);
    trace_dir_.clear();
  }

  bool tuning = !controls_file_.empty();
  if (!tuning) {
    auto store = cache::Store::open_for_reading(cache_dir_);
    if (!store) {
      spdlog::debug("cache unusable: {}", store.error().message);
      if (trace_dir_.empty()) return Outcome::pass("cache-unusable");
    } else if (*store) {
      store_.emplace(std::move(**store));
    } else if (trace_dir_.empty() && packs_.empty() && remote_.empty()) {
      return Outcome::pass("no-cache", {"miss"});
    }
  }

  auto ptx = read_input(command_.inputs.front());
  if (!ptx) {
    spdlog::debug("{}", ptx.error().message);
    return Outcome::pass("unreadable-input");
  }
  ptx_ = std::move(*ptx);
  auto identity = cache::identify_ptxas(real_, cache_dir_);
  if (!identity) {
    spdlog::debug("{}", identity.error().message);
    return Outcome::pass("unknown-ptxas");
  }
  identity_ = std::move(*identity);
  module_ = cache::scan_ptx(ptx_);
  context_ = cache::KeyContext{command_.target, identity_.version_text, command_.canonical_flags()};

  std::optional<spaces::ControlSet> controls;
  std::string source, error;
  if (tuning) {
    source = "controls-file";
    auto text = read_file(controls_file_);
    auto parsed = text ? spaces::parse_control_set(*text, controls_file_) : Result<spaces::ControlSet>(text.error());
    if (!parsed) {
      error = parsed.error().message;
      spdlog::error("CIQ_CONTROLS: {}", error);
    } else {
      controls = target_kernels(parsed->ptxas_stage(), module_, env_or_empty("CIQ_KERNELS"));
      if (controls->empty()) controls.reset();
    }
  } else if (store_ || !packs_.empty() || !remote_.empty()) {
    // The local cache first, then the packs, then the team's Redis (only
    // when the cache answered).
    std::optional<LookupResult> hit;
    bool cache_answered = true;
    if (store_) {
      auto local = lookup_controls(*store_, module_, context_);
      if (!local) {
        spdlog::debug("lookup failed: {}", local.error().message);
        if (trace_dir_.empty()) return Outcome::pass("cache-unusable");
        cache_answered = false;
      } else {
        hit = std::move(*local);
      }
    }
    if (!hit && cache_answered) hit = lookup_packs();
    if (!hit && cache_answered && !remote_.empty()) hit = lookup_remote();
    if (hit && hit->controls.empty()) {
      // Tuned before with no gain: the default is what the entry says.
      if (trace_dir_.empty()) return Outcome::pass("tuned-default", {"hit"});
    } else if (hit) {
      source = "cache";
      spdlog::debug("hit ({} key{}) for {}", hit->matched, hit->keys.size() > 1 ? "s" : "", command_.inputs.front().value);
      controls = std::move(hit->controls);
    }
  }
  if (!controls && trace_dir_.empty()) return Outcome::pass("no-entry", {"miss"});

  if (controls) {
    auto space = spaces::find_space(spaces_directory(), "ptxas", identity_.release);
    if (!space || !*space) {
      error = space ? "no knob space covers ptxas " + identity_.release : space.error().message;
      spdlog::warn("not applying controls: {}", error);
      controls.reset();
      if (trace_dir_.empty()) return Outcome::pass("no-space", {source == "cache" ? "hit" : "tuning"});
    } else {
      space_ = std::move(**space);
      if (controls->space.empty()) controls->space = space_->name;
      spaces::Policy policy;
      policy.allow_unsafe = unsafe_allowed();
      if (auto valid = spaces::validate_controls(*space_, *controls, policy); !valid) {
        error = valid.error().message;
        spdlog::warn("rejected controls ({}): {}", source, error);
        controls.reset();
        if (trace_dir_.empty()) return Outcome::pass("rejected", {source == "cache" ? "hit" : "tuning", "rejected"});
      }
    }
  }
  controls_source_ = controls ? source : "";
  return compile(controls, source, std::move(error));
}

Outcome PtxasWrapper::compile(const std::optional<spaces::ControlSet>& controls, const std::string& source,
                              std::string controls_error) {
  std::vector<std::string> counters;
  if (source == "cache") counters.push_back(controls ? "hit" : "rejected");
  else if (source.empty()) counters.push_back("miss");
  else counters.push_back("tuning");

  std::vector<std::string> argv{real_};
  argv.insert(argv.end(), args_.begin(), args_.end());
  std::optional<ScratchDir> scratch;
  bool applied = false;

  if (controls) {
    auto rendered = spaces::render_controls(*space_, *controls);
    bool needs_files = !rendered.directives.empty() || (controls->acf && !command_.user_controls);
    if (needs_files) { // a temp copy of the PTX, or the ACF blob as a file
      auto made = ScratchDir::create("ciq-ptxas");
      if (!made) {
        spdlog::debug("{}", made.error().message);
        return Outcome::pass("no-scratch", counters);
      }
      scratch.emplace(std::move(*made));
    }
    if (!rendered.directives.empty()) {
      std::vector<std::string> edited;
      auto ptx = spaces::apply_directives(ptx_, rendered.directives, &edited);
      if (!ptx) {
        spdlog::warn("{}", ptx.error().message);
        return Outcome::pass("directive-edit-failed", counters);
      }
      const auto& input = command_.inputs.front();
      if (input.is_string) {
        // --input-as-string=PTX or --input-as-string PTX: replace the PTX only.
        std::string& arg = argv[1 + input.arg_index];
        auto eq = arg.find('=');
        arg = (starts_with(arg, "-") && eq != std::string::npos) ? arg.substr(0, eq + 1) + *ptx : *ptx;
      } else {
        std::string copy = join_path(scratch->path(), base_name(input.value));
        if (auto w = write_file_atomic(copy, *ptx); !w) {
          spdlog::debug("{}", w.error().message);
          return Outcome::pass("no-scratch", counters);
        }
        argv[1 + input.arg_index] = copy;
      }
    }
    argv.insert(argv.end(), rendered.options.begin(), rendered.options.end());
    if (controls->acf) {
      if (command_.user_controls) {
        spdlog::debug("the caller's --apply-controls wins over the cached ACF");
      } else if (!identity_.accepts_controls_file) {
        spdlog::debug("ptxas {} does not take --apply-controls; ACF not applied", identity_.version);
        counters.push_back("acf-unsupported");
      } else {
        if (!store_) {
          if (auto opened = cache::Store::open_for_reading(cache_dir_); opened && *opened) store_.emplace(std::move(**opened));
        }
        auto blob = store_ ? store_->get(cache::Table::blobs, hex_to_bytes(*controls->acf, 32).value_or(""))
                           : Result<std::optional<std::string>>(std::optional<std::string>{});
        if (!blob || !*blob || to_hex(sha256(**blob)) != *controls->acf) {
          spdlog::warn("ACF blob {} is missing or damaged; not applying these controls", controls->acf->substr(0, 12));
          return Outcome::pass("acf-missing", counters);
        }
        std::string acf_path = join_path(scratch->path(), "controls.acf");
        if (auto w = write_file_atomic(acf_path, **blob); !w) return Outcome::pass("no-scratch", counters);
        argv.push_back("--apply-controls");
        argv.push_back(acf_path);
      }
    }
    controls_summary_ = spaces::summarise_control_set(*controls);
    applied = true;
  }

  bool add_verbose = !trace_dir_.empty() && !command_.verbose;
  if (add_verbose) argv.push_back("-v");

  // Run with controls (or for the trace), holding back the output until we
  // know whether it is the output the caller gets.
  RunOptions options;
  options.argv = argv;
  options.capture_stdout = options.capture_stderr = true;
  spdlog::debug("running: {}", fmt::join(argv, " "));
  ::alarm(0); // ptxas may take as long as it needs
  auto result = run_process(options);
  if (!result) {
    spdlog::debug("{}", result.error().message);
    return Outcome::pass("spawn-failed", counters);
  }
  if (applied && !result->succeeded()) {
    // The controls broke the compile (or ptxas failed anyway): run plain.
    spdlog::warn("ptxas failed with controls ({}); rerunning it without them", result->describe());
    std::string why = "ptxas " + identity_.version + " " + result->describe() + " with " + controls_summary_;
    if (std::string said = first_error_line(result->err); !said.empty()) why += " (" + said + ")";
    scratch.reset();
    RunOptions plain;
    plain.argv = {real_};
    plain.argv.insert(plain.argv.end(), args_.begin(), args_.end());
    if (add_verbose) plain.argv.push_back("-v");
    plain.capture_stdout = plain.capture_stderr = true;
    auto rerun = run_process(plain);
    if (!rerun) return Outcome::pass("spawn-failed", counters);
    if (rerun->succeeded()) {
      counters.push_back("controls-failed");
      if (source == "cache") {
        quarantine(why);
        counters.push_back("quarantined");
      }
    }
    result = std::move(rerun);
    applied = false;
    controls_error = why;
  } else if (applied) {
    counters.push_back("applied");
  }
  write_all(1, result->out);
  write_all(2, add_verbose ? strip_verbose_lines(result->err) : result->err);
  if (!trace_dir_.empty()) trace(*result, applied, controls_error);
  return Outcome{"", std::move(*result), std::move(counters)};
}

void PtxasWrapper::quarantine(const std::string& why) {
  // Every entry of this module goes: the module's own and each kernel's,
  // since they were stored together and would fail the same way.
  std::vector<Hash128> keys{cache::module_key(module_, context_)};
  for (const auto& kernel : module_.kernel_names()) keys.push_back(cache::kernel_key(module_, kernel, context_));
  store_.reset(); // one environment per process: reopen it writable
  auto store = cache::Store::open_for_writing(store_dir_);
  if (!store) {
    spdlog::warn("cannot quarantine: {}", store.error().message);
    return;
  }
  for (const auto& key : keys) {
    std::string k = digest_bytes(key);
    auto present = store->get(cache::Table::records, k);
    if (!present || !*present) continue;
    if (auto r = store->put(cache::Table::quarantine, k, cache::utc_now() + " " + why); !r)
      spdlog::warn("cannot quarantine {}: {}", to_hex(key), r.error().message);
  }
}

void PtxasWrapper::trace(const RunResult& run, bool applied, const std::string& error) {
  TraceRecord r;
  const auto& input = command_.inputs.front();
  r.input = input.is_string ? "<string>" : input.value;
  r.output = command_.output.value_or("");
  r.target = command_.target;
  r.ptxas_path = real_;
  r.ptxas_version = identity_.version;
  r.accepts_controls_file = identity_.accepts_controls_file;
  r.flags = context_.flags;
  r.module_key = to_hex(cache::module_key(module_, context_));
  auto resources = parse_resources(run.err);
  for (const auto& name : module_.kernel_names()) {
    TraceKernel k{name, to_hex(cache::kernel_key(module_, name, context_)), module_.block_threads(name), {}};
    if (auto it = resources.find(name); it != resources.end()) k.resources = it->second;
    r.kernels.push_back(std::move(k));
  }
  r.controls_source = controls_source_;
  r.controls = controls_summary_;
  r.controls_applied = applied;
  r.controls_error = error;
  if (run.succeeded() && command_.output) {
    if (auto image = read_file(*command_.output))
      if (auto digest = code_digest(*image)) r.code_digest = to_hex(*digest);
  }
  r.exit_status = run.shell_status();
  r.seconds = run.seconds;
  write_trace(trace_dir_, r);
}

} // namespace

void run_ciq_ptxas(int argc, char** argv) {
  setup_logging("ciq-ptxas", "off");
  std::vector<std::string> args(argv + 1, argv + argc);
  // As nvcc's prefix, the first argument is the program nvcc meant to run.
  std::string wanted = "ptxas";
  if (!args.empty() && base_name(args[0]) == "ptxas") {
    wanted = args[0];
    args.erase(args.begin());
  }
  std::string real;
  if (!env_or_empty("CIQ_REAL_PTXAS").empty()) {
    auto found = find_real_tool("CIQ_REAL_PTXAS", "ptxas");
    if (!found) fatal("ciq-ptxas", found.error().message);
    real = *found;
  } else {
    auto found = find_program(wanted, self_executable());
    if (!found && wanted != "ptxas") found = find_program("ptxas", self_executable());
    if (!found) fatal("ciq-ptxas", "cannot find the real ptxas on PATH (or set CIQ_REAL_PTXAS)");
    real = *found;
  }
  std::vector<std::string> plain{real};
  plain.insert(plain.end(), args.begin(), args.end());
  exec_on_crash(real, plain);
  // Watchdog for ciq's own work (the lookup takes milliseconds); disarmed
  // before ptxas runs, and before any exec (alarms survive exec).
  ::alarm(k_watchdog_seconds);

  if (ciq_disabled()) {
    ::alarm(0);
    Error e = exec_replace(real, plain);
    fatal("ciq-ptxas", e.message);
  }

  Outcome outcome;
  {
    PtxasWrapper wrapper(real, args);
    outcome = wrapper.run();
    outcome.counters.insert(outcome.counters.end(), wrapper.extra_counters().begin(), wrapper.extra_counters().end());
  }
  // ptxas ran with the watchdog off; what is left (the counters) is ours.
  // Should it hang, the plain ptxas rewrites the output: unchanged, not stuck.
  ::alarm(k_watchdog_seconds);
  cache::bump_counters(cache_directory(), [&] {
    auto c = outcome.counters;
    c.push_back("calls");
    return c;
  }());
  if (outcome.finished) exit_like(*outcome.finished);
  spdlog::debug("passing through unchanged ({})", outcome.pass_reason);
  ::alarm(0);
  Error e = exec_replace(real, plain);
  fatal("ciq-ptxas", e.message);
}

} // namespace ciq::wrapper
