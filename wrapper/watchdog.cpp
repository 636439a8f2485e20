#include "wrapper/watchdog.h"

#include "utils/files.h"

#include <csignal>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <sys/time.h>
#include <unistd.h>

namespace ciq::wrapper {

namespace {

// Prepared before anything can go wrong; the handler only uses
// async-signal-safe calls (setitimer, sigaction, sigprocmask, kill,
// execv, _exit).
char* g_real = nullptr;
char** g_argv = nullptr;
volatile sig_atomic_t g_given = 0;       // output given: end like the tool
volatile sig_atomic_t g_exit_code = 0;   // ... with this status
volatile sig_atomic_t g_exit_signal = 0; // ... or by this signal
long g_used_ms = 0;                      // budget spent before the last pause
timespec g_since{};                      // when the clock last started
bool g_running = false;

void arm(long ms) {
  itimerval t{};
  t.it_value.tv_sec = ms / 1000;
  t.it_value.tv_usec = (ms % 1000) * 1000;
  ::setitimer(ITIMER_REAL, &t, nullptr);
}

long since_ms(const timespec& start) {
  timespec now{};
  ::clock_gettime(CLOCK_MONOTONIC, &now);
  return (now.tv_sec - start.tv_sec) * 1000 + (now.tv_nsec - start.tv_nsec) / 1000000;
}

extern "C" void on_fatal_signal(int) {
  arm(0); // a pending timer would otherwise fire in the program we exec
  if (g_given) {
    if (g_exit_signal) {
      struct sigaction dfl {};
      dfl.sa_handler = SIG_DFL;
      ::sigaction(g_exit_signal, &dfl, nullptr);
      sigset_t set;
      sigemptyset(&set);
      sigaddset(&set, g_exit_signal);
      ::sigprocmask(SIG_UNBLOCK, &set, nullptr);
      ::kill(::getpid(), g_exit_signal);
    }
    ::_exit(g_exit_code);
  }
  if (g_real) ::execv(g_real, g_argv);
  ::_exit(127);
}

} // namespace

void start_watchdog(const std::string& real, const std::vector<std::string>& argv) {
  g_real = ::strdup(real.c_str());
  g_argv = static_cast<char**>(std::calloc(argv.size() + 1, sizeof(char*)));
  for (std::size_t i = 0; i < argv.size(); ++i) g_argv[i] = ::strdup(argv[i].c_str());
  struct sigaction sa {};
  sa.sa_handler = on_fatal_signal;
  sigemptyset(&sa.sa_mask);
  sa.sa_flags = SA_RESETHAND | SA_NODEFER;
  for (int sig : {SIGSEGV, SIGBUS, SIGILL, SIGFPE, SIGABRT, SIGALRM}) ::sigaction(sig, &sa, nullptr);
  g_used_ms = 0;
  resume_watchdog();
}

void pause_watchdog() {
  if (!g_running) return;
  arm(0);
  g_used_ms += since_ms(g_since);
  g_running = false;
}

void resume_watchdog() {
  if (g_running) return;
  ::clock_gettime(CLOCK_MONOTONIC, &g_since);
  long left = long(k_watchdog_ms) - g_used_ms;
  arm(left < 250 ? 250 : left);
  g_running = true;
}

void stop_watchdog() {
  arm(0);
  g_running = false;
}

void give_output(const RunResult& result, std::string_view err) {
  pause_watchdog();
  write_all(1, result.out);
  write_all(2, err);
  g_exit_signal = result.signal;
  g_exit_code = result.shell_status();
  g_given = 1;
  resume_watchdog();
}

Result<RunResult> run_real_tool(const RunOptions& options) {
  pause_watchdog();
  auto result = run_process(options);
  resume_watchdog();
  return result;
}

} // namespace ciq::wrapper
