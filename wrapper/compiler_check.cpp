#include "wrapper/compiler_check.h"

#include "cache/generation.h"
#include "utils/config.h"
#include "utils/files.h"
#include "utils/hash.h"
#include "utils/text.h"

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

void add_setting(std::string& text, Env var) {
  if (std::string value = env(var); !value.empty()) text += std::string(env_name(var)) + "=" + printable(value) + "\n";
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
  for (std::string_view listed : split(env(Env::packs), ':'))
    if (std::string pack(listed); !pack.empty())
      text += "pack " + printable(pack) + " " + file_fingerprint(pack).value_or("absent") + "\n";
  if (std::string remote = env(Env::remote); !remote.empty()) text += "remote " + to_hex(xxh128(remote)) + "\n";
  if (std::string controls = env(Env::controls); !controls.empty()) {
    auto candidate = read_file(controls, 1 << 20);
    text += "candidate " + (candidate ? to_hex(xxh128(*candidate)) : std::string("unreadable")) + "\n";
    add_setting(text, Env::kernels);
  }
  for (Env var : {Env::allow_unsafe, Env::gpu_policy, Env::gpu_model, Env::spaces_dir, Env::real_ptxas})
    add_setting(text, var);
  return text;
}

} // namespace ciq::wrapper
