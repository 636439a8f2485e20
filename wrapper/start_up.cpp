#include "wrapper/start_up.h"

#include "utils/config.h"
#include "utils/files.h"
#include "utils/log.h"
#include "utils/process.h"
#include "utils/real_tool.h"
#include "utils/text.h"
#include "wrapper/watchdog.h"

#include <cstdio>
#include <cstdlib>
#include <optional>

namespace ciq::wrapper {

namespace {

bool is_self(const std::string& path, const std::string& self) { return real_path(path) == self; }

/// The real tool of the user's configuration (utils/real_tool.h: the
/// setting, else the tool on PATH, never this wrapper); fatal when there is
/// none or the setting names this wrapper.
std::string configured(const WrappedTool& tool, const std::string& self) {
  auto found = find_real_tool(tool.tool, tool.real_setting, self);
  if (!found) fatal(tool.wrapper, found.error().message);
  return found->path;
}

/// The real tool as the caller's first argument names it: a path, used as
/// it is (fatal when it is this wrapper), or a name, looked up on PATH
/// skipping this executable. Empty when neither gives an executable.
std::string from_argument(const WrappedTool& tool, const std::string& named, const std::string& self) {
  if (named.find('/') == std::string::npos) return find_program(named, self).value_or("");
  if (!is_executable_file(named)) return {};
  if (is_self(named, self))
    fatal(tool.wrapper, named + ", named as the real " + tool.tool + ", is this wrapper (" + self +
                            "); name the real " + tool.tool + " instead");
  return named;
}

/// Ends with "a loop" (fatal) when this wrapper was started, directly or
/// not, by the tool a wrapper of the same kind runs as the real one (two
/// copies of a wrapper under the tool's name on PATH, or the setting a
/// script that runs the wrapper); paths need not match, as the mark
/// travels in the environment. Otherwise marks the environment, so that
/// the real tool and its children carry the mark.
void guard_against_loops(const WrappedTool& tool, const std::string& self, const std::string& real) {
  std::string outer = env(tool.loop_mark);
  if (!outer.empty()) {
    std::string wrapper = tool.wrapper;
    std::string setting = env_name(tool.real_setting);
    fatal(tool.wrapper, "a loop: " + wrapper + " (" + self + ") was started by the tool run as the real one by " +
                            outer + ": two copies of " + wrapper + " on PATH under the tool's name, or " + setting +
                            " running " + wrapper + " again; point " + setting + " at NVIDIA's tool");
  }
  ::setenv(env_name(tool.loop_mark), (self + " -> " + real).c_str(), 1);
}

} // namespace

Started start_wrapper(const WrappedTool& tool, int argc, char** argv) {
  setup_logging(tool.wrapper, "off");
  Started s;
  s.self = self_executable();
  s.args.assign(argv + 1, argv + argc);
  std::optional<std::string> named;
  if (!s.args.empty() && tool.names_tool(s.args[0])) {
    named = s.args[0];
    s.args.erase(s.args.begin());
  }
  bool has_setting = !env(tool.real_setting).empty();
  if (named && !(has_setting && tool.setting_first)) s.real = from_argument(tool, *named, s.self);
  if (s.real.empty()) s.real = configured(tool, s.self);
  guard_against_loops(tool, s.self, s.real);
  s.plain.reserve(s.args.size() + 1);
  s.plain.push_back(s.real);
  s.plain.insert(s.plain.end(), s.args.begin(), s.args.end());
  start_watchdog(s.real, s.plain);
  return s;
}

void exec_real(const WrappedTool& tool, const std::string& real, const std::vector<std::string>& argv) {
  stop_watchdog();
  Error e = exec_replace(real, argv);
  fatal(tool.wrapper, e.message);
}

void fatal(const char* tool, const std::string& message) {
  std::fprintf(stderr, "%s: error: %s\n", tool, printable_lines(message).c_str());
  std::exit(127);
}

} // namespace ciq::wrapper
