#include "utils/config.h"

#include "utils/files.h"
#include "utils/process.h"

#include <cctype>
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

bool env_flag(const char* name, bool unknown) {
  std::string v = env_or_empty(name);
  for (auto& c : v) c = char(std::tolower(static_cast<unsigned char>(c)));
  if (v == "1" || v == "true" || v == "yes" || v == "on") return true;
  if (v.empty() || v == "0" || v == "false" || v == "no" || v == "off") return false;
  return unknown;
}

bool ciq_disabled() { return env_flag("CIQ_DISABLE", true); }

bool unsafe_allowed() { return env_flag("CIQ_ALLOW_UNSAFE", false); }

std::string spaces_directory() {
  std::string dir = env_or_empty("CIQ_SPACES_DIR");
  if (!dir.empty()) return dir;
  return join_path(dir_name(dir_name(self_executable())), "share/ciq/spaces");
}

} // namespace ciq
