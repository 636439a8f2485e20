#include "wrapper/compiler_check.h"

#include "cache/generation.h"
#include "utils/config.h"
#include "utils/files.h"
#include "utils/text.h"
#include "wrapper/version_line.h"

#include <sys/stat.h>
#include <unistd.h>

namespace ciq::wrapper {

namespace {

// A real directory (not a link to one) this user owns and may write.
bool own_writable_directory(const std::string& path) {
  struct stat st {};
  return ::lstat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode) && st.st_uid == ::geteuid() &&
         ::access(path.c_str(), W_OK | X_OK) == 0;
}

} // namespace

bool asks_compiler_check(const std::vector<std::string>& args) { return args.size() == 1 && args[0] == "--ciq-compiler-check"; }

bool stamps_possible(const std::string& cache_dir) {
  struct stat st {};
  if (::lstat(cache_dir.c_str(), &st) == 0) {
    std::string stamps = join_path(cache_dir, "stamps");
    return own_writable_directory(cache_dir) && (!path_exists(stamps) || own_writable_directory(stamps));
  }
  // Absent: the first compile creates it, where its nearest parent allows.
  for (std::string parent = dir_name(cache_dir); !parent.empty(); parent = dir_name(parent)) {
    if (::stat(parent.c_str(), &st) == 0) return S_ISDIR(st.st_mode) && ::access(parent.c_str(), W_OK | X_OK) == 0;
    if (parent == "/" || parent == ".") break;
  }
  return false;
}

std::string compiler_check_text(const std::string& real_nvcc, const std::string& cache_dir) {
  std::string text = "ciq-nvcc " CIQ_VERSION "\n";
  text += "nvcc " + printable(real_nvcc) + " " + file_fingerprint(real_nvcc).value_or("unreadable") + "\n";
  if (ciq_disabled()) return text + "disabled\n";
  if (stamps_possible(cache_dir)) {
    text += "stamps\n";
  } else {
    auto generation = cache::current_generation(cache_dir);
    text += "no stamps, generation " + generation.value_or("none") + "\n";
  }
  // The same sources and settings `ciq-ptxas --version` names (version_line.h),
  // and where the knob spaces and the real ptxas come from.
  text += entry_sources_state() + entry_choice_settings();
  for (Env var : {Env::spaces_dir, Env::real_ptxas})
    if (std::string value = env(var); !value.empty()) text += std::string(env_name(var)) + "=" + value + "\n";
  return text;
}

} // namespace ciq::wrapper
