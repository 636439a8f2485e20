#include "cache/cli/cache_dir.h"

#include "utils/files.h"

#include <cerrno>
#include <cstring>
#include <sys/stat.h>

namespace ciq::cache::cli {

namespace {

const char* k_where = "give --cache-dir DIR or set CIQ_CACHE_DIR";

std::string parent_of(const std::string& dir) {
  std::string d = dir;
  while (d.size() > 1 && d.back() == '/') d.pop_back();
  auto slash = d.rfind('/');
  if (slash == std::string::npos) return ".";
  return slash == 0 ? "/" : d.substr(0, slash);
}

// Empty when `dir` is an existing directory; else why it cannot be used.
std::string unusable(const std::string& dir, bool& missing) {
  struct stat st {};
  missing = false;
  if (::stat(dir.c_str(), &st) == 0) {
    if (S_ISDIR(st.st_mode)) return "";
    return "'" + dir + "' is not a directory: the cache is a directory; " + k_where + " naming one";
  }
  if (errno == ENOENT) {
    missing = true;
    return "no cache at '" + dir + "': the directory does not exist (" + k_where +
           "; a build through ciq-nvcc or ciq-ptxas, or 'ciq-cache put', creates it)";
  }
  if (errno == ENOTDIR)
    return "'" + dir + "' cannot be a cache directory: a part of that path is a file, not a directory; " + k_where;
  return "cannot use the cache directory '" + dir + "': " + std::strerror(errno) + " (check its permissions, or " +
         k_where + ")";
}

} // namespace

Result<void> require_cache_dir(const std::string& dir) {
  bool missing = false;
  if (std::string why = unusable(dir, missing); !why.empty()) return make_error(missing ? ciq::errc::not_found : "io", why);
  return {};
}

Result<bool> check_storing_dir(const std::string& dir, bool named_by_user) {
  bool missing = false;
  std::string why = unusable(dir, missing);
  if (why.empty()) return false;
  if (!missing) return make_error("io", why);
  if (!named_by_user) return true;
  std::string parent = parent_of(dir);
  if (!is_directory(parent))
    return make_error(ciq::errc::not_found, "will not create the cache directory '" + dir + "': its parent '" + parent +
                                       "' does not exist (a typo?). Create it first (mkdir -p " + parent +
                                       ") or fix --cache-dir / CIQ_CACHE_DIR");
  return true;
}

} // namespace ciq::cache::cli
