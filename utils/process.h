// Running other programs: finding them on PATH without finding ourselves,
// replacing this process with them (the wrappers' pass-through), and running
// them as children with captured output, a timeout and their own process
// group (so that a timeout kills everything they started).
#pragma once

#include "utils/result.h"

#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <sys/types.h>
#include <utility>
#include <vector>

namespace ciq {

/// Canonical path of the running executable.
std::string self_executable();

/// First executable called `name` on $PATH (or on `search_path` when given)
/// whose canonical path is not `exclude`; std::nullopt when none.
std::optional<std::string> find_program(const std::string& name, const std::string& exclude = {},
                                        const char* search_path = nullptr);

/// execv(path, argv). Returns only on failure, with the reason.
Error exec_replace(const std::string& path, const std::vector<std::string>& argv);

struct RunOptions {
  std::vector<std::string> argv;  // argv[0] is the program (a path, or a name found on PATH)
  bool capture_stdout = false;    // otherwise inherited
  bool capture_stderr = false;    // otherwise inherited, or appended to stderr_file
  std::string stderr_file;        // without capture_stderr: the child's stderr goes here as it writes
  bool stdin_null = false;
  double timeout_seconds = 0;     // 0: none. On expiry the whole group gets SIGKILL.
  bool own_process_group = false; // needed for timeouts to reach grandchildren
  std::vector<std::pair<std::string, std::string>> set_env; // added or replaced
  std::string cwd;                // empty: inherit
  int cwd_fd = -1;                // >= 0: a directory the caller opened and checked; the child starts
                                  // there (fchdir), whatever its path names by then; wins over cwd
  // Per captured stream: 0 keeps everything; N keeps the first N and the
  // last N bytes, replaces the middle by a line `[... output dropped ...]`
  // and counts it in RunResult::*_dropped (a program that prints 1 GB must
  // not cost 1 GB of memory).
  std::size_t capture_head_tail = 0;
  // < 0: read the captured streams until every writer closed them. >= 0:
  // once the child itself has exited, stop reading after this many seconds
  // even if a process it started (a daemon) still holds them open. Nothing
  // is killed for it; that process then writes to a closed pipe.
  double exit_grace_seconds = -1;
};

struct RunResult {
  int exit_code = -1;     // valid when signal == 0 and !timed_out
  int signal = 0;         // the signal that ended the child, or 0
  bool timed_out = false;
  std::string out, err;   // captured streams
  std::size_t out_dropped = 0, err_dropped = 0; // bytes dropped from their middles (capture_head_tail)
  bool streams_left_open = false; // the child exited and exit_grace_seconds passed with its streams still open
  double seconds = 0;     // wall time

  bool succeeded() const { return !timed_out && signal == 0 && exit_code == 0; }
  /// The status a shell would report: the exit code, or 128 + signal.
  int shell_status() const { return signal ? 128 + signal : (timed_out ? 124 : exit_code); }
  std::string describe() const;
};

/// Runs a child to completion. Fails only when it cannot be started.
Result<RunResult> run_process(const RunOptions& options);

/// A long-running child the caller talks to: requests go to its stdin (a
/// socket, so that writing to a child that died fails instead of raising
/// SIGPIPE), answers come from its stdout, its stderr is appended to a file.
/// It runs in its own process group (tracked for kill_children_on_interrupt);
/// destroying the object kills the group and reaps the child.
class Coprocess {
public:
  /// Starts options.argv (argv, set_env and cwd are used; the streams are
  /// the ones described above). options.capture_head_tail bounds each
  /// answer the way it bounds run_process' streams.
  static Result<std::unique_ptr<Coprocess>> start(const RunOptions& options, const std::string& stderr_path);
  ~Coprocess();
  Coprocess(const Coprocess&) = delete;
  Coprocess& operator=(const Coprocess&) = delete;

  Result<void> send(std::string_view data);
  /// Reads stdout until a whole line starting with `marker` arrives, within
  /// `timeout_seconds` (0: no limit). Returns everything before that line in
  /// `*text` and the rest of the marker line (without the newline); what
  /// came after it stays for the next call (waiting_output()). Fails with
  /// "timeout"; with "exited" when the child closed its stdout or itself
  /// exited (noticed within k_exit_check_seconds even while a process it
  /// started holds its stdout open); with "garbled" for a marker line
  /// longer than k_max_marker_line. The message completes "the program
  /// ..." ("ended (exit status 3) before answering"). On failure the child
  /// is gone after.
  Result<std::string> receive(std::string_view marker, double timeout_seconds, std::string* text);
  /// Bytes the child wrote after the last answer receive() returned: those
  /// already read, and those it can read now without waiting. An answer
  /// must be the child's only output, so any is a garbled (extra or late)
  /// answer. The bytes are kept (leftover()).
  std::size_t waiting_output();
  const std::string& leftover() const { return pending_; }
  /// Whether the child has not exited yet (it is reaped if it has).
  bool running();
  pid_t pid() const { return pid_; }
  /// Whether the child, gone since a send() or receive() failed, had
  /// exited on its own with status 0 (not killed, not failing).
  bool ended_cleanly() const { return ended_cleanly_; }
  /// Bytes dropped from the middle of the last answer (capture_head_tail).
  std::size_t dropped() const { return dropped_; }

  /// How often receive() looks whether the child itself has exited.
  static constexpr double k_exit_check_seconds = 0.1;
  static constexpr std::size_t k_max_marker_line = 64 * 1024;

private:
  Coprocess() = default;
  /// Closes its streams, waits up to `grace_seconds` for it to exit, then
  /// kills the group and reaps it; says how it ended.
  std::string finish(double grace_seconds = 0.1);

  /// Reads what stdout holds now, at most `max_reads` reads of up to 64 KiB,
  /// without waiting; false at its end.
  bool read_available(int max_reads);

  pid_t pid_ = -1;
  std::optional<int> exit_status_; // waitpid's status, once reaped
  int to_child_ = -1, from_child_ = -1;
  std::string pending_; // read beyond the last answer
  std::size_t limit_ = 0, dropped_ = 0;
  bool ended_cleanly_ = false;
};

/// From now on, SIGINT/SIGTERM/SIGHUP kill the process groups of every child
/// run_process() started with own_process_group (they do not get the
/// terminal's signal themselves), write `message` to stderr, and end this
/// process by the same signal. Without it, an interrupted tuner would leave
/// its benchmark running on the GPU. With `forward`, the children's groups
/// get the same signal first and are waited for (up to 60 s), so that
/// children that clean up after themselves (a ciq-tuner run under a
/// campaign, cancelling its Slurm jobs) can.
void kill_children_on_interrupt(const char* message, bool forward = false);
/// Whether that handler has started: a child that ended after it was ended
/// by the interrupt, and what it did says nothing of its own work (the
/// tuner journals no evaluation then: it is run again on --resume).
bool interrupt_arrived();

/// Kills (SIGKILL) the process groups of the children that run_process()
/// started with own_process_group and that still run: for a process that
/// must stop at once (and then _Exit), as an interrupt would.
void kill_tracked_children();

/// From now on the interrupt handler above first runs `argv` (argv[0] an
/// absolute path) and waits for it, then kills the children: for a command
/// that stops what the children started elsewhere (Slurm's scancel). An
/// empty argv removes it.
void run_on_interrupt(const std::vector<std::string>& argv);

/// Ends this process the way the child ended: same exit code, or the same
/// signal re-raised (default action), so callers see what they would have
/// seen without the wrapper.
[[noreturn]] void exit_like(const RunResult& result);

} // namespace ciq
