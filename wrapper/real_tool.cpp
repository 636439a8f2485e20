#include "wrapper/real_tool.h"

#include "utils/config.h"
#include "utils/files.h"
#include "utils/process.h"

#include <csignal>
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

namespace {
// Prepared before anything can crash; the handler only calls execv/_exit.
char* g_real = nullptr;
char** g_argv = nullptr;

extern "C" void on_fatal_signal(int) {
  ::alarm(0); // a pending watchdog would otherwise kill the real tool after exec
  if (g_real) ::execv(g_real, g_argv);
  ::_exit(127);
}
} // namespace

void exec_on_crash(const std::string& real, const std::vector<std::string>& argv) {
  g_real = ::strdup(real.c_str());
  g_argv = static_cast<char**>(std::calloc(argv.size() + 1, sizeof(char*)));
  for (std::size_t i = 0; i < argv.size(); ++i) g_argv[i] = ::strdup(argv[i].c_str());
  struct sigaction sa {};
  sa.sa_handler = on_fatal_signal;
  sigemptyset(&sa.sa_mask);
  sa.sa_flags = SA_RESETHAND | SA_NODEFER;
  for (int sig : {SIGSEGV, SIGBUS, SIGILL, SIGFPE, SIGABRT, SIGALRM}) ::sigaction(sig, &sa, nullptr);
}

void fatal(const char* tool, const std::string& message) {
  std::fprintf(stderr, "%s: error: %s\n", tool, message.c_str());
  std::exit(127);
}

} // namespace ciq::wrapper
