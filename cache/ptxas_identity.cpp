#include "cache/ptxas_identity.h"

#include "utils/config.h"
#include "utils/files.h"
#include "utils/hash.h"
#include "utils/process.h"
#include "utils/real_tool.h"
#include "utils/text.h"

#include <spdlog/spdlog.h>

namespace ciq::cache {

bool parse_ptxas_version(const std::string& text, std::string& release, std::string& version) {
  auto pos = text.find("release ");
  if (pos == std::string::npos) return false;
  std::size_t i = pos + 8, j = i;
  while (j < text.size() && (std::isdigit(static_cast<unsigned char>(text[j])) || text[j] == '.')) ++j;
  if (j == i) return false;
  release = text.substr(i, j - i);
  version = release;
  auto v = text.find(", V", j);
  if (v != std::string::npos && v == j) {
    std::size_t k = v + 3, e = k;
    while (e < text.size() && (std::isdigit(static_cast<unsigned char>(text[e])) || text[e] == '.')) ++e;
    if (e > k) version = text.substr(k, e - k);
  }
  return true;
}

static Result<PtxasIdentity> probe(const std::string& path) {
  // One run answers both questions: ptxas that knows --apply-controls
  // ignores the missing file when it only has to print its version.
  RunOptions options;
  options.argv = {path, "--apply-controls", "/nonexistent/ciq-probe.acf", "--version"};
  options.capture_stdout = options.capture_stderr = options.stdin_null = true;
  options.timeout_seconds = 30;
  auto run = run_process(options);
  if (!run) return run.error();
  PtxasIdentity id;
  if (run->succeeded()) {
    id.accepts_controls_file = true;
    id.version_text = run->out;
  } else {
    options.argv = {path, "--version"};
    run = run_process(options);
    if (!run) return run.error();
    if (!run->succeeded())
      return make_error("probe", "'" + path + " --version' failed (" + run->describe() + ")");
    id.version_text = run->out;
  }
  if (!parse_ptxas_version(id.version_text, id.release, id.version))
    return make_error("probe", "'" + path + " --version' printed no 'release X.Y'");
  return id;
}

Result<PtxasIdentity> identify_ptxas(const std::string& path, const std::string& cache_dir) {
  auto fingerprint = file_fingerprint(path);
  if (!fingerprint) return make_error("io", "cannot stat '" + path + "'");
  std::string memo;
  // The memo lives in the user's own cache only: another user's could lie
  // about the version, and a link there would take our write elsewhere.
  if (!cache_dir.empty() && (!path_exists(cache_dir) || check_own_directory(cache_dir))) {
    memo = join_path(join_path(cache_dir, "tools"), to_hex(xxh128(path + "\n" + *fingerprint)));
    if (auto text = read_file(memo)) {
      PtxasIdentity id;
      if (auto kvs = parse_key_values(*text, memo)) {
        for (const auto& kv : *kvs) {
          if (kv.key == "version_text") id.version_text = kv.value;
          if (kv.key == "accepts_controls_file") id.accepts_controls_file = kv.value == "yes";
        }
        if (parse_ptxas_version(id.version_text, id.release, id.version)) return id;
      }
      spdlog::debug("ignoring a damaged memo {}", memo);
    }
  }
  auto id = probe(path);
  if (!id) return id;
  if (!memo.empty()) {
    std::string text = format_key_value("path", path) + "\n" + format_key_value("fingerprint", *fingerprint) + "\n" +
                       format_key_value("version_text", id->version_text) + "\n" +
                       format_key_value("accepts_controls_file", id->accepts_controls_file ? "yes" : "no") + "\n";
    if (make_own_directory(dir_name(memo))) {
      if (auto r = write_file_atomic(memo, text); !r) spdlog::debug("{}", r.error().message);
    }
  }
  return id;
}

std::string identity_digest(const PtxasIdentity& identity) { return to_hex(xxh128(identity.version_text)); }

Result<UserPtxas> find_user_ptxas(const std::string& exclude, const std::string& cache_dir) {
  auto found = find_real_tool("ptxas", Env::real_ptxas, exclude);
  if (!found && found.error().code == ciq::errc::not_found && env(Env::real_ptxas).empty()) {
    std::string home = env_or_empty("CUDA_HOME");
    for (const std::string& dir : {home.empty() ? std::string() : join_path(home, "bin"), std::string("/usr/local/cuda/bin")}) {
      std::string path = join_path(dir, "ptxas");
      if (!dir.empty() && is_executable_file(path) && real_path(path) != exclude) {
        found = FoundTool{path, "the CUDA toolkit"};
        break;
      }
    }
  }
  if (!found) return found.error();
  auto identity = identify_ptxas(found->path, cache_dir);
  if (!identity) return identity.error();
  return UserPtxas{found->path, found->from, std::move(*identity)};
}

} // namespace ciq::cache
