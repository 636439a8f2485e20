#include "utils/config.h"

#include "utils/files.h"
#include "utils/process.h"

namespace ciq {

std::string cache_directory() {
  std::string dir = env(Env::cache_dir);
  if (!dir.empty()) return dir;
  std::string xdg = env_or_empty("XDG_CACHE_HOME");
  if (!xdg.empty()) return join_path(xdg, "ciq");
  return join_path(join_path(env_or_empty("HOME"), ".cache"), "ciq");
}

bool ciq_disabled() { return env_flag(Env::disable, true); }

bool unsafe_allowed() { return env_flag(Env::allow_unsafe, false); }

std::string spaces_directory() {
  std::string dir = env(Env::spaces_dir);
  if (!dir.empty()) return dir;
  return join_path(dir_name(dir_name(self_executable())), "share/ciq/spaces");
}

} // namespace ciq
