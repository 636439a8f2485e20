// `ciq-ptxas --version` (version_line.h).
#include "wrapper/version_line.h"

#include "cache/generation.h"
#include "utils/config.h"
#include "utils/files.h"
#include "utils/hash.h"
#include "utils/process.h"
#include "utils/text.h"

#include <spdlog/spdlog.h>
#include <unistd.h>

namespace ciq::wrapper {

namespace {

constexpr std::uint64_t k_controls_bytes = 1 << 20;  // a control set is a short text file

/// What a setting adds to the state: nothing when unset, so that setting
/// none of them leaves the text ptxas'.
void add_setting(std::string& state, Env var) {
  std::string value = env(var);
  if (!value.empty()) state += std::string(env_name(var)) + "=" + value + "\n";
}

} // namespace

bool asks_version(const std::vector<std::string>& args) {
  return args.size() == 1 && (args[0] == "--version" || args[0] == "-V");
}

std::string entry_sources_state() {
  std::string state;
  // Packs are read-only files: their identity (inode, size, mtime) changes
  // when one is replaced. The remote's entries reach a program through the
  // local copy a read-through makes: a new generation.
  std::string packs = env(Env::packs);
  for (std::string_view listed : split(packs, ':')) {
    std::string pack(listed);
    if (!pack.empty()) state += "pack " + pack + " " + file_fingerprint(pack).value_or("absent") + "\n";
  }
  if (!env(Env::remote).empty()) state += "remote " + to_hex(xxh128(env(Env::remote))) + "\n";
  // A tuning build applies its candidate instead of the cache.
  if (std::string controls = env(Env::controls); !controls.empty()) {
    auto text = read_file(controls, k_controls_bytes);
    state += "candidate " + (text ? to_hex(xxh128(*text)) : std::string("unreadable")) + "\n";
    add_setting(state, Env::kernels);
  }
  return state;
}

std::string entry_choice_settings() {
  std::string state;
  for (Env var : {Env::allow_unsafe, Env::gpu_policy, Env::gpu_model}) add_setting(state, var);
  return state;
}

std::string version_state_line(const std::string& cache_dir) {
  std::string state;
  if (auto id = cache::current_generation(cache_dir)) state += "generation " + *id + "\n";
  state += entry_sources_state();
  if (state.empty()) return "";
  state += entry_choice_settings();
  return "ciq controls state " + to_hex(xxh128(state)) + "\n";
}

void print_version_with(const WrappedTool& tool, const std::string& real, const std::vector<std::string>& plain,
                        const std::string& line) {
  RunOptions options;
  options.argv = plain;
  options.capture_stdout = true;  // stderr stays ptxas' own
  options.timeout_seconds = 120;
  auto run = run_process(options);
  if (!run) {
    spdlog::debug("cannot run {} for its version: {}", real, run.error().message);
    exec_real(tool, real, plain);
  }
  std::string out = run->out;
  if (run->succeeded()) out += line;
  if (!write_all(STDOUT_FILENO, out)) spdlog::debug("cannot write the version text to stdout");
  exit_like(*run);
}

} // namespace ciq::wrapper
