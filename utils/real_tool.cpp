#include "utils/real_tool.h"

#include "utils/files.h"
#include "utils/process.h"

namespace ciq {

Result<FoundTool> find_real_tool(const char* tool, Env setting, const std::string& exclude) {
  std::string named = env(setting);
  if (!named.empty()) {
    std::string said = std::string(env_name(setting)) + "=" + named;
    auto found = find_program(named);
    if (!found) return make_error(ciq::errc::not_found, said + " is not an executable");
    if (!exclude.empty() && real_path(*found) == exclude)
      return make_error("self", said + " is this wrapper; point it at the real " + tool);
    return FoundTool{*found, env_name(setting)};
  }
  auto found = find_program(tool, exclude);
  if (!found)
    return make_error(ciq::errc::not_found, std::string("cannot find the real ") + tool + " on PATH (or set " + env_name(setting) + ")");
  return FoundTool{*found, "PATH"};
}

} // namespace ciq
