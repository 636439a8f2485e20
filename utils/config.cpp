#include "utils/config.h"

#include "utils/files.h"
#include "utils/process.h"

#include <cstdlib>

namespace ciq {

std::string env_or_empty(const char* name) {
  const char* v = std::getenv(name);
  return v ? v : "";
}

std::string cache_directory() {
  std::string dir = env_or_empty("CIQ_CACHE_DIR");
  if (!dir.empty()) return dir;
  std::string xdg = env_or_empty("XDG_CACHE_HOME");
  if (!xdg.empty()) return join_path(xdg, "ciq");
  return join_path(join_path(env_or_empty("HOME"), ".cache"), "ciq");
}

bool ciq_disabled() {
  std::string v = env_or_empty("CIQ_DISABLE");
  return !(v.empty() || v == "0" || v == "false" || v == "no");
}

std::string spaces_directory() {
  std::string dir = env_or_empty("CIQ_SPACES_DIR");
  if (!dir.empty()) return dir;
  return join_path(dir_name(dir_name(self_executable())), "share/ciq/spaces");
}

} // namespace ciq
