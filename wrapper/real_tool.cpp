#include "wrapper/real_tool.h"

#include "utils/config.h"
#include "utils/files.h"
#include "utils/process.h"
#include "utils/text.h"

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <unistd.h>

namespace ciq::wrapper {

Result<std::string> find_real_tool(Env var, const std::string& name) {
  std::string self = self_executable();
  std::string env_var = env_name(var);
  std::string configured = env(var);
  if (!configured.empty()) {
    auto found = find_program(configured);
    if (!found) return make_error("not-found", env_var + "=" + configured + " is not an executable");
    if (real_path(*found) == self)
      return make_error("recursion", env_var + "=" + configured + " is this wrapper; point it at the real " + name);
    return *found;
  }
  auto found = find_program(name, self);
  if (!found) return make_error("not-found", "cannot find the real " + name + " on PATH (or set " + env_var + ")");
  return *found;
}

void guard_against_loops(Env mark, const char* wrapper, const std::string& real) {
  std::string outer = env(mark);
  std::string self = self_executable();
  if (!outer.empty()) {
    const char* setting = env_name(mark == Env::in_ptxas ? Env::real_ptxas
                                   : mark == Env::in_nvcc ? Env::real_nvcc
                                                          : Env::real_cicc);
    fatal(wrapper, std::string("a loop: ") + wrapper + " (" + self + ") was started by the tool run as the real one by " +
                       outer + ": two copies of " + wrapper + " on PATH under the tool's name, or " + setting +
                       " running " + wrapper + " again; point " + setting + " at NVIDIA's tool");
  }
  ::setenv(env_name(mark), (self + " -> " + real).c_str(), 1);
}

void fatal(const char* tool, const std::string& message) {
  std::fprintf(stderr, "%s: error: %s\n", tool, printable_lines(message).c_str());
  std::exit(127);
}

} // namespace ciq::wrapper
