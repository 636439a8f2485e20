#include "utils/dl.h"

#include <dlfcn.h>

namespace ciq::dl {

std::string resolve(void* handle, const std::vector<Symbol>& table) {
  std::string missing;
  for (const Symbol& s : table) {
    void* address = ::dlsym(handle, s.name);
    if (!address && s.older) address = ::dlsym(handle, s.older);
    s.store(s.slot, address);
    if (!address && s.required) missing += (missing.empty() ? "" : ", ") + std::string(s.name);
  }
  return missing;
}

Library load(const std::vector<std::string>& candidates, const std::vector<Symbol>& table) {
  Library out;
  for (const std::string& path : candidates) {
    out.missing.clear();
    void* handle = ::dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (!handle) {
      const char* why = ::dlerror();
      out.error += (out.error.empty() ? "" : "; ") + (why ? std::string(why) : path + ": cannot be loaded");
      continue;
    }
    out.missing = resolve(handle, table);
    if (!out.missing.empty()) {
      out.error += (out.error.empty() ? "" : "; ") + path + " lacks " + out.missing;
      ::dlclose(handle);
      continue;
    }
    out.handle = handle;
    out.path = path;
    out.error.clear();
    return out;
  }
  return out;
}

bool already_loaded(const char* soname) { return ::dlopen(soname, RTLD_NOW | RTLD_NOLOAD) != nullptr; }

} // namespace ciq::dl
