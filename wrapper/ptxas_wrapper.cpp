#include "wrapper/ptxas_wrapper.h"

#include "cache/counters.h"
#include "cache/key.h"
#include "cache/ptxas_command.h"
#include "cache/ptxas_identity.h"
#include "cache/record.h"
#include "cache/storage.h"
#include "cache/store.h"
#include "spaces/render.h"
#include "spaces/space.h"
#include "utils/config.h"
#include "utils/elf.h"
#include "utils/files.h"
#include "utils/log.h"
#include "utils/process.h"
#include "utils/text.h"
#include "wrapper/deps.h"
#include "wrapper/lookup.h"
#include "wrapper/start_up.h"
#include "wrapper/resources.h"
#include "wrapper/trace.h"
#include "wrapper/version_line.h"
#include "wrapper/watchdog.h"

#include <algorithm>
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
  std::optional<cache::Pass> pass;   // set: exec the real ptxas unchanged
  std::optional<RunResult> finished; // set: exit like this run
};

// The steps of one ciq-ptxas call. Each returns the reason to run ptxas
// unchanged, or nothing to go on; compile() is the one place that runs it.
class PtxasWrapper {
public:
  PtxasWrapper(std::string real, std::vector<std::string> args)
      : real_(std::move(real)), args_(std::move(args)), cache_dir_(cache_directory()),
        controls_file_(env(Env::controls)), trace_dir_(env(Env::trace)),
        storage_(cache::Storage::from_environment(cache_dir_)) {}

  Outcome run();
  /// This call's counts, the storage layer's included.
  cache::Tally tally() const {
    cache::Tally t = tally_;
    cache::count_events(storage_, t);
    return t;
  }

private:
  using Step = std::optional<cache::Pass>;
  Step read_arguments();
  Step identify();
  Step controls_from_file();
  Step controls_from_storage();
  Step check_controls();
  Step render(std::vector<std::string>& argv, std::optional<ScratchDir>& scratch);
  Step attach_acf(std::vector<std::string>& argv, const std::optional<ScratchDir>& scratch);
  Outcome compile();
  Result<RunResult> run_plain(bool add_verbose);
  void trace(const RunResult& run, bool applied, const std::string& error);

  // Where the controls came from.
  enum class From { none, controls_file, storage };

  std::string real_;
  std::vector<std::string> args_;
  std::string cache_dir_, controls_file_, trace_dir_;
  cache::Storage storage_;
  cache::Tally tally_{cache::Tool::ptxas};

  cache::PtxasCommand command_;
  cache::PtxasIdentity identity_;
  std::string ptx_;
  cache::PtxModule module_;
  cache::KeyContext context_;
  std::optional<Result<std::optional<spaces::Space>>> space_; // running_space(), read once
  Result<const spaces::Space*> running_space();

  std::optional<spaces::ControlSet> controls_;
  std::optional<cache::Storage::Hit> hit_;
  From from_ = From::none;
  std::string error_; // why controls meant for this compile were not applied
  std::string controls_summary_;
};

Result<const spaces::Space*> PtxasWrapper::running_space() {
  if (!space_) space_.emplace(spaces::find_space(spaces_directory(), "ptxas", identity_.release));
  if (!*space_) return space_->error();
  return **space_ ? &***space_ : nullptr;
}

PtxasWrapper::Step PtxasWrapper::read_arguments() {
  auto scanned = cache::scan_ptxas_args(args_);
  if (!scanned) {
    spdlog::debug("cannot read the arguments: {}", scanned.error().message);
    return cache::Pass::unparsed_args;
  }
  command_ = std::move(*scanned);
  if (command_.info_only) return cache::Pass::info;
  if (command_.inputs.empty()) return cache::Pass::no_input;
  if (command_.inputs.size() > 1) return cache::Pass::several_inputs;
  if (command_.target.empty()) return cache::Pass::no_target;
  if (starts_with(command_.target, "compute_")) return cache::Pass::virtual_target; // nvcc's syntax check
  // A trace that cannot be written is no reason to run ptxas otherwise
  // (tracing adds -v, which changes the cubin's bytes): drop the trace.
  if (!trace_dir_.empty() && !trace_dir_usable(trace_dir_)) {
    spdlog::warn("CIQ_TRACE={} cannot be written; not tracing this compile", trace_dir_);
    trace_dir_.clear();
  }
  return std::nullopt;
}

PtxasWrapper::Step PtxasWrapper::identify() {
  const auto& input = command_.inputs.front();
  if (input.is_stdin) return cache::Pass::input_not_a_file;
  // A pipe or device given as the input is ptxas' to read: reading it here
  // would leave ptxas an empty stream.
  auto ptx = input.is_string ? Result<std::string>(input.value) : read_file(input.value);
  if (!ptx) {
    spdlog::debug("{}", ptx.error().message);
    return unread_input_pass(ptx.error());
  }
  ptx_ = std::move(*ptx);
  auto identity = cache::identify_ptxas(real_, cache_dir_);
  if (!identity) {
    spdlog::debug("{}", identity.error().message);
    return cache::Pass::unknown_ptxas;
  }
  identity_ = std::move(*identity);
  module_ = cache::scan_ptx(ptx_);
  context_ = cache::KeyContext{command_.target, identity_.version_text, command_.canonical_flags()};
  return std::nullopt;
}

PtxasWrapper::Step PtxasWrapper::controls_from_file() {
  tally_.add(cache::Counter::tuning);
  auto parsed = read_controls_file(controls_file_, &error_);
  if (!parsed) return std::nullopt;
  controls_ = target_kernels(parsed->ptxas_stage(), module_, env(Env::kernels));
  if (controls_->empty()) controls_.reset();
  else from_ = From::controls_file;
  return check_controls();
}

// The local cache, then the packs, then the team's Redis; every entry
// checked against the running ptxas' space on the way (cache/storage.h).
PtxasWrapper::Step PtxasWrapper::controls_from_storage() {
  cache::EntryRules rules;
  rules.running_space = [this] { return running_space(); };
  rules.policy.allow_unsafe = unsafe_allowed();
  rules.key_fields = cache::EntryRules::KeyFields{command_.target, identity_.version, context_.flags};
  rules.gpu = gpu_rule();
  auto found = storage_.find_module(module_, context_, rules);
  if (!storage_.refusals().empty()) error_ = storage_.refusals().back();
  if (!found) {
    spdlog::debug("cache unusable: {}", found.error().message);
    tally_.add(cache::Counter::miss);
    if (trace_dir_.empty()) return cache::Pass::cache_unusable;
    return std::nullopt;
  }
  if (!*found) {
    tally_.add(cache::Counter::miss);
    if (trace_dir_.empty()) return error_.empty() ? cache::Pass::no_entry : cache::Pass::rejected;
    return std::nullopt;
  }
  tally_.add(cache::Counter::hit);
  hit_ = std::move(*found);
  // Tuned before with no gain: the default is what the entry says.
  if (hit_->controls.empty()) return trace_dir_.empty() ? Step(cache::Pass::tuned_default) : std::nullopt;
  spdlog::debug("hit in {} ({} key{}) for {}", hit_->where, cache::kind_name(hit_->matched), hit_->keys.size() > 1 ? "s" : "",
                command_.inputs.front().value);
  controls_ = hit_->controls;
  from_ = From::storage;
  return std::nullopt;
}

// A controls file's knobs must be allowed by the running ptxas' space, as
// a cache entry's are (the storage layer checked those).
PtxasWrapper::Step PtxasWrapper::check_controls() {
  if (!controls_) return std::nullopt;
  auto space = running_space();
  if (!space || !*space) {
    error_ = space ? "no knob space covers ptxas " + identity_.release : space.error().message;
    spdlog::warn("not applying controls: {}", error_);
    controls_.reset();
    return trace_dir_.empty() ? Step(cache::Pass::no_space) : std::nullopt;
  }
  if (controls_->space.empty()) controls_->space = (*space)->name;
  spaces::Policy policy;
  policy.allow_unsafe = unsafe_allowed();
  if (auto valid = spaces::validate_controls(**space, *controls_, policy); !valid) {
    error_ = valid.error().message;
    spdlog::warn("rejected controls (controls-file): {}", error_);
    tally_.add(cache::Counter::rejected);
    controls_.reset();
    return trace_dir_.empty() ? Step(cache::Pass::rejected) : std::nullopt;
  }
  return std::nullopt;
}

Outcome PtxasWrapper::run() {
  if (auto pass = read_arguments()) return {pass, std::nullopt};
  bool tuning = !controls_file_.empty();
  // Asked for dependencies (wrapper/deps.h), a compile with no cache yet
  // still names its keys' stamps: the first entry stored must reach it.
  bool stamping = stamps_wanted();
  if (!tuning && trace_dir_.empty() && !stamping && !storage_.anything_to_read()) {
    tally_.add(cache::Counter::miss);
    return {cache::Pass::no_cache, std::nullopt};
  }
  if (auto pass = identify()) return {pass, std::nullopt};
  std::vector<Hash128> keys;
  std::vector<std::string> seen;
  if (stamping) {
    keys.push_back(cache::module_key(module_, context_));
    for (const auto& kernel : module_.kernel_names()) keys.push_back(cache::kernel_key(module_, kernel, context_));
    seen = local_stamp_texts(storage_, keys);
  }
  auto pass = tuning ? controls_from_file() : controls_from_storage();
  if (stamping) list_stamps(keys, seen, local_stamp_texts(storage_, keys));
  if (pass) return {pass, std::nullopt};
  if (!controls_ && trace_dir_.empty()) return {cache::Pass::no_entry, std::nullopt};
  return compile();
}

// The real ptxas' arguments with the controls in: directives edited into a
// copy of the PTX, options appended, the ACF as a file.
PtxasWrapper::Step PtxasWrapper::render(std::vector<std::string>& argv, std::optional<ScratchDir>& scratch) {
  auto rendered = spaces::render_controls(**running_space(), *controls_);
  bool needs_files = !rendered.directives.empty() || (controls_->acf && !command_.user_controls);
  if (needs_files) { // a temp copy of the PTX, or the ACF blob as a file
    auto made = ScratchDir::create("ciq-ptxas");
    if (!made) {
      spdlog::debug("{}", made.error().message);
      return cache::Pass::no_scratch;
    }
    scratch.emplace(std::move(*made));
  }
  if (!rendered.directives.empty()) {
    auto ptx = spaces::apply_directives(ptx_, rendered.directives, nullptr);
    if (!ptx) {
      spdlog::warn("{}", ptx.error().message);
      return cache::Pass::directive_edit_failed;
    }
    const auto& input = command_.inputs.front();
    std::string& arg = argv[1 + input.arg_index];
    if (input.is_string) {
      // --input-as-string=PTX or --input-as-string PTX: replace the PTX only.
      auto eq = arg.find('=');
      arg = (starts_with(arg, "-") && eq != std::string::npos) ? arg.substr(0, eq + 1) + *ptx : *ptx;
    } else {
      std::string copy = join_path(scratch->path(), base_name(input.value));
      if (auto w = write_file_atomic(copy, *ptx); !w) {
        spdlog::debug("{}", w.error().message);
        return cache::Pass::no_scratch;
      }
      arg = copy;
    }
  }
  argv.insert(argv.end(), rendered.options.begin(), rendered.options.end());
  if (controls_->acf)
    if (auto pass = attach_acf(argv, scratch)) return pass;
  controls_summary_ = spaces::summarise_control_set(*controls_);
  return std::nullopt;
}

// `scratch` exists unless the caller passed --apply-controls (render()).
PtxasWrapper::Step PtxasWrapper::attach_acf(std::vector<std::string>& argv, const std::optional<ScratchDir>& scratch) {
  if (command_.user_controls) {
    spdlog::debug("the caller's --apply-controls wins over the cached ACF");
    return std::nullopt;
  }
  if (!identity_.accepts_controls_file) {
    spdlog::debug("ptxas {} does not take --apply-controls; ACF not applied", identity_.version);
    tally_.add(cache::Counter::acf_unsupported);
    return std::nullopt;
  }
  // The storage layer fetched and checked a hit's blob; a controls file's
  // comes from the cache the tuner filled.
  std::optional<std::string> blob;
  if (hit_) {
    if (auto it = hit_->blobs.find(*controls_->acf); it != hit_->blobs.end()) blob = it->second;
  } else if (auto local = cache::LocalBackend(cache_dir_).get_blob(*controls_->acf); local && *local &&
             sha256(**local) == *controls_->acf) {
    blob = std::move(**local);
  }
  if (!blob) {
    spdlog::warn("ACF blob {} is missing or damaged; not applying these controls", to_hex(*controls_->acf).substr(0, 12));
    return cache::Pass::acf_missing;
  }
  std::string acf_path = join_path(scratch->path(), "controls.acf");
  if (auto w = write_file_atomic(acf_path, *blob); !w) return cache::Pass::no_scratch;
  argv.push_back("--apply-controls");
  argv.push_back(acf_path);
  return std::nullopt;
}

Result<RunResult> PtxasWrapper::run_plain(bool add_verbose) {
  RunOptions plain;
  plain.argv = {real_};
  plain.argv.insert(plain.argv.end(), args_.begin(), args_.end());
  if (add_verbose) plain.argv.push_back("-v");
  plain.capture_stdout = plain.capture_stderr = true;
  return run_real_tool(plain);
}

// Runs ptxas with the controls (or for the trace), holding back its output
// until it is known to be the output the caller gets; controls that break
// the compile are dropped, the module's entries quarantined, and ptxas
// rerun plain.
Outcome PtxasWrapper::compile() {
  std::vector<std::string> argv{real_};
  argv.insert(argv.end(), args_.begin(), args_.end());
  std::optional<ScratchDir> scratch;
  if (controls_)
    if (auto pass = render(argv, scratch)) return {pass, std::nullopt};
  bool applied = controls_.has_value();
  bool add_verbose = !trace_dir_.empty() && !command_.verbose;
  if (add_verbose) argv.push_back("-v");

  RunOptions options;
  options.argv = argv;
  options.capture_stdout = options.capture_stderr = true;
  spdlog::debug("running: {}", fmt::join(argv, " "));
  auto result = run_real_tool(options);
  if (!result) {
    spdlog::debug("{}", result.error().message);
    return {cache::Pass::spawn_failed, std::nullopt};
  }
  if (applied && !result->succeeded()) {
    spdlog::warn("ptxas failed with controls ({}); rerunning it without them", result->describe());
    std::string why = "ptxas " + identity_.version + " " + result->describe() + " with " + controls_summary_;
    if (std::string said = first_error_line(result->err); !said.empty()) why += " (" + said + ")";
    scratch.reset();
    auto rerun = run_plain(add_verbose);
    if (!rerun) return {cache::Pass::spawn_failed, std::nullopt};
    if (rerun->succeeded()) {
      tally_.add(cache::Counter::controls_failed);
      if (hit_) {
        // The entries that made these controls; a module entry with its
        // kernels' (stored with it, they would fail the same way). Not a
        // module entry the kernels' entries answered over: it set nothing.
        std::vector<Hash128> keys = hit_->keys;
        if (hit_->matched == cache::RecordKind::module)
          for (const auto& kernel : module_.kernel_names()) keys.push_back(cache::kernel_key(module_, kernel, context_));
        storage_.quarantine(*hit_, keys, why);
        tally_.add(cache::Counter::quarantined);
      }
    }
    result = std::move(rerun);
    applied = false;
    error_ = why;
  } else if (applied) {
    tally_.add(from_ == From::controls_file ? cache::Counter::tuning_applied : cache::Counter::applied);
  }
  give_output(*result, add_verbose ? strip_verbose_lines(result->err) : result->err);
  if (!trace_dir_.empty()) trace(*result, applied, error_);
  return {std::nullopt, std::move(*result)};
}

void PtxasWrapper::trace(const RunResult& run, bool applied, const std::string& error) {
  TraceRecord r;
  const auto& input = command_.inputs.front();
  r.input = input.is_string ? "<string>" : input.value;
  r.output = command_.output.value_or("");
  r.target = command_.target;
  r.ptxas_path = real_;
  r.ptxas_version = identity_.version;
  r.ptxas_identity = cache::identity_digest(identity_);
  r.accepts_controls_file = identity_.accepts_controls_file;
  r.flags = context_.flags;
  r.module_key = to_hex(cache::module_key(module_, context_));
  for (std::size_t i = 0; i < args_.size(); ++i) {
    bool is_output = std::find(command_.output_args.begin(), command_.output_args.end(), i) != command_.output_args.end();
    if (i != input.arg_index && !is_output) r.args.push_back(args_[i]);
  }
  if (env_flag(Env::trace_ptx, false) && !input.is_string && !input.is_stdin) {
    // For replay: the module recompiled later, with other controls, under this key.
    std::string copy = join_path(join_path(trace_dir_, "ptx"), r.module_key + ".ptx");
    if (path_exists(copy) || (make_dirs(dir_name(copy)) && write_file_atomic(copy, ptx_)))
      r.ptx_copy = "ptx/" + r.module_key + ".ptx";
    else
      spdlog::warn("cannot keep the PTX in {}", copy);
  }
  auto resources = parse_resources(run.err);
  for (const auto& name : module_.kernel_names()) {
    TraceKernel k{name, to_hex(cache::kernel_key(module_, name, context_)), module_.block_threads(name), {}, {}};
    if (auto it = resources.find(name); it != resources.end()) k.resources = it->second;
    r.kernels.push_back(std::move(k));
  }
  if (controls_) r.controls_source = from_ == From::storage ? std::string(cache::tier_name(hit_->tier)) : "controls-file";
  r.controls = controls_summary_;
  r.controls_applied = applied;
  r.controls_error = error;
  r.warnings = compiler_warnings(run.err, "ptxas");
  if (run.succeeded() && command_.output) {
    if (auto image = read_file(*command_.output)) {
      if (auto digest = code_digest(*image)) r.code_digest = to_hex(*digest);
      auto per_kernel = kernel_code_hashes(*image);
      for (auto& k : r.kernels)
        if (auto it = per_kernel.find(k.name); it != per_kernel.end()) k.code = hash_hex(it->second);
    }
  }
  r.exit_status = run.shell_status();
  r.seconds = run.seconds;
  write_trace(trace_dir_, r);
}

} // namespace

// As nvcc's prefix (`ciq-ptxas ptxas <args>`), the first argument is the
// ptxas nvcc meant to run, by name; CIQ_REAL_PTXAS still wins over it.
const WrappedTool k_ptxas{"ciq-ptxas", "ptxas", Env::real_ptxas, Env::in_ptxas,
                          [](std::string_view first) { return base_name(first) == "ptxas"; }, true};

void run_ciq_ptxas(int argc, char** argv) {
  Started started = start_wrapper(k_ptxas, argc, argv);
  const std::string& real = started.real;
  if (ciq_disabled()) exec_real(k_ptxas, real, started.plain);

  Outcome outcome;
  cache::Tally tally(cache::Tool::ptxas);
  tally.add(cache::Counter::calls);
  if (asks_version(started.args)) {
    // Counted as before (a pass for an information-only call); the text
    // gets a line naming what ciq would apply (version_line.h).
    tally.passed(cache::Pass::info);
    cache::bump_counters(cache_directory(), tally);
    std::string line = version_state_line(cache_directory());
    if (line.empty()) exec_real(k_ptxas, real, started.plain);
    print_version_with(k_ptxas, real, started.plain, line);
  }
  {
    PtxasWrapper wrapper(real, started.args);
    outcome = wrapper.run();
    tally.merge(wrapper.tally());
  }
  if (outcome.pass) tally.passed(*outcome.pass);
  cache::bump_counters(cache_directory(), tally);
  if (outcome.finished) exit_like(*outcome.finished);
  spdlog::debug("passing through unchanged ({})", cache::pass_name(outcome.pass.value_or(cache::Pass::no_entry)));
  exec_real(k_ptxas, real, started.plain);
}

} // namespace ciq::wrapper
