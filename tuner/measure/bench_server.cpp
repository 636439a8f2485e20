#include "tuner/measure/bench_server.h"

#include "tuner/measure/bench_protocol.h"
#include "tuner/measure/command.h"
#include "utils/config.h"
#include "utils/files.h"
#include "utils/text.h"

#include <cerrno>
#include <chrono>
#include <cstring>
#include <fcntl.h>
#include <optional>
#include <sys/stat.h>
#include <thread>
#include <unistd.h>

namespace ciq::tuner {

namespace {

/// The last `bytes` of the file at `path` (a log this run writes), or none.
std::optional<std::string> read_file_tail(const std::string& path, std::size_t bytes) {
  int fd = ::open(path.c_str(), O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK);
  if (fd < 0) return std::nullopt;
  struct stat st;
  std::string text;
  if (::fstat(fd, &st) == 0 && S_ISREG(st.st_mode)) {
    off_t from = st.st_size > off_t(bytes) ? st.st_size - off_t(bytes) : 0;
    text.resize(std::size_t(st.st_size - from));
    ssize_t n = ::pread(fd, text.data(), text.size(), from);
    text.resize(n > 0 ? std::size_t(n) : 0);
  }
  ::close(fd);
  return text;
}

/// A server's stderr goes to its log (O_APPEND) for as long as it runs, a
/// whole search: one that prints a progress line per launch would fill the
/// disk. Past k_max_server_log bytes the log keeps only its last
/// k_kept_output_bytes, after a line that says so; the server writes on at
/// the log's new end.
constexpr off_t k_max_server_log = off_t(64) << 20;

void bound_server_log(const std::string& path) {
  struct stat st;
  if (::lstat(path.c_str(), &st) != 0 || !S_ISREG(st.st_mode) || st.st_size <= k_max_server_log) return;
  auto tail = read_file_tail(path, k_kept_output_bytes);
  if (!tail) return;
  // From a line's start, where one starts near (a line of progress that
  // only ever returns the carriage is kept as it is).
  if (auto nl = tail->find('\n'); nl != std::string::npos && nl < 4096) tail->erase(0, nl + 1);
  // O_APPEND: what the server writes meanwhile goes after, not over, this.
  int fd = ::open(path.c_str(), O_WRONLY | O_TRUNC | O_APPEND | O_NOFOLLOW | O_CLOEXEC);
  if (fd < 0) return;
  std::string text = "[ciq-tuner: this log reached " + std::to_string(st.st_size >> 20) + " MiB; what the server wrote before its last " +
                     std::to_string(k_kept_output_bytes >> 20) + " MiB was cut]\n" + *tail;
  (void)write_all(fd, text); // a log: what could not be written is lost, the run goes on
  ::close(fd);
}

std::string last_line(const std::string& text) {
  std::string_view t = trim(text);
  auto nl = t.rfind('\n');
  return std::string(nl == std::string_view::npos ? t : t.substr(nl + 1));
}

} // namespace

BenchServerExecutor::BenchServerExecutor(const TuningSetup& setup, std::shared_ptr<Executor> builds)
    : builds_(std::move(builds)), command_(setup.bench_server), shell_(setup.shell), run_dir_(setup.run_dir),
      server_start_(setup.server_start) {
  for (const auto& g : builds_->slots()) servers_[g]; // every slot exists before threads start
  for (const auto& o : setup.objectives)
    if (o.kind == ObjectiveKind::kernel_time) inject_library_ = setup.inject_library;
}

BenchServerExecutor::~BenchServerExecutor() {
  if (inject_library_.empty()) return;
  for (auto& [gpu, server] : servers_) {
    server.reset();
    ::unlink(control_fifo(gpu).c_str());
    ::unlink((control_fifo(gpu) + ".lock").c_str());
  }
}

Result<void> BenchServerExecutor::check_options(const TuningSetup& setup) {
  if (auto checked = builds_->check_options(setup); !checked) return checked;
  if (setup.bench.empty())
    return make_error("tuner", "--bench-server needs --bench: the request it answers for every candidate (e.g. --bench '--cubin {workdir}/k.cubin')");
  if (setup.build.empty() && setup.compiler)
    return make_error("tuner", "--bench-server needs --build: a resident benchmark loads what the build wrote, it does not compile");
  return {};
}

void BenchServerExecutor::use_run_directory(const std::string& run_dir) {
  run_dir_ = run_dir;
  builds_->use_run_directory(run_dir);
}

Result<void> BenchServerExecutor::start(bool resume) { return builds_->start(resume); }

std::vector<std::string> BenchServerExecutor::slots() const { return builds_->slots(); }

bool BenchServerExecutor::schedules_gpus() const { return builds_->schedules_gpus(); }

Result<StepResult> BenchServerExecutor::run_step(const Step& step) {
  if (step.kind == StepKind::build) return builds_->run_step(step);
  return ask_server(step);
}

std::string BenchServerExecutor::server_log(const std::string& gpu) const {
  return join_path(run_dir_, "bench-server" + std::string(gpu.empty() ? "" : "-gpu" + gpu) + ".log");
}

Result<Coprocess*> BenchServerExecutor::server_for(const std::string& gpu) {
  std::unique_ptr<Coprocess>& server = servers_.at(gpu);
  if (server) return server.get();
  auto argv = command_argv(command_, {{"gpu", gpu}}, shell_);
  if (!argv) return argv.error();
  RunOptions options;
  options.argv = *argv;
  options.capture_head_tail = k_kept_output_bytes;
  if (!gpu.empty()) options.set_env.emplace_back("CUDA_VISIBLE_DEVICES", gpu);
  std::string suffix = gpu.empty() ? "" : "-gpu" + gpu;
  if (!inject_library_.empty()) {
    // Timed per request through its control FIFO; what it times after the
    // last cut goes to its exit trace.
    std::string fifo = control_fifo(gpu);
    struct stat st;
    if (::lstat(fifo.c_str(), &st) == 0 && !S_ISFIFO(st.st_mode)) ::unlink(fifo.c_str());
    if (::mkfifo(fifo.c_str(), 0600) != 0 && errno != EEXIST)
      return make_error("io", "cannot make the kernel-timing control FIFO " + fifo + ": " + std::strerror(errno));
    options.set_env.emplace_back("CUDA_INJECTION64_PATH", inject_library_);
    options.set_env.emplace_back(env_name(Env::kernel_trace), join_path(run_dir_, "bench-server-kernels" + suffix));
    options.set_env.emplace_back(env_name(Env::kernel_control), fifo);
  }
  auto started = Coprocess::start(options, server_log(gpu));
  if (!started) return started.error();
  server = std::move(*started);
  return server.get();
}

void BenchServerExecutor::retire_out_of_step(const Step& step, const std::string& log) {
  // A server that wrote anything since its last answer (a second answer, a
  // late one) is out of step with its requests, and one that exited takes
  // none: either way a fresh server takes this request.
  auto& last = servers_.at(step.gpu);
  if (!last) return;
  if (std::size_t extra = last->waiting_output()) {
    append_log(log, "[benchmark server: it wrote " + std::to_string(extra) + " bytes after its last answer ('" +
                        server_text_excerpt(last->leftover()) + "'): an extra or late answer; a fresh server takes this request]\n");
    last.reset();
  } else if (!last->running()) {
    last.reset();
  }
}

Result<void> BenchServerExecutor::read_status(const Step& step, Coprocess& server, bool fresh, const Result<std::string>& status,
                                              std::uint64_t id, const std::string& log, StepResult& done) {
  RunResult& run = done.run;
  if (status) {
    Result<int> code = read_answer_status(*status, id);
    // An answer is its request's only output: more right after it (a
    // second answer written with the first) garbles this one.
    if (std::size_t extra = code ? server.waiting_output() : 0)
      code = make_error("garbled", "wrote more after its answer (" + std::to_string(extra) + " bytes: '" +
                                       server_text_excerpt(server.leftover()) + "'), an extra or late answer");
    if (!code) {
      servers_.at(step.gpu).reset();
      append_log(done.log, log + "[benchmark server: " + code.error().message + "]\n");
      return make_error("bench", "the benchmark server " + code.error().message);
    }
    run.exit_code = *code;
    return {};
  }
  // A server that answered earlier requests and then exited on its own,
  // status 0, just as this one was sent (its exit was not yet noticed) never
  // saw it: a fresh server takes it, as it would have.
  bool quit_before = !fresh && run.out.empty() && status.error().code == ciq::errc::exited && server.ended_cleanly();
  servers_.at(step.gpu).reset(); // dead or killed: the next request starts a fresh one
  if (quit_before) {
    append_log(done.log, log + "[benchmark server: it " + status.error().message +
                             ", having exited on its own after its last answer; a fresh server takes this request]\n");
    return make_error(k_ask_again, "");
  }
  if (status.error().code == ciq::errc::timeout) {
    run.timed_out = true;
    return {};
  }
  append_log(done.log, log + "[benchmark server: " + status.error().message + "]\n");
  // What it said last on stderr, when it said nothing on stdout: why a
  // server dies at start (no GPU, no driver) is there.
  std::string said = run.out;
  if (said.empty())
    if (auto tail = read_file_tail(server_log(step.gpu), 4096)) said = *tail;
  return make_error("bench", "the benchmark server " + status.error().message +
                                 (trim(said).empty() ? "" : ": " + printable(last_line(said))) + " (see " + server_log(step.gpu) + ")");
}

Result<void> BenchServerExecutor::cut_request_trace(const Step& step, const std::string& log) {
  std::string dir;
  for (const auto& [name, value] : step.env)
    if (name == env_name(Env::kernel_trace)) dir = value;
  bool scratch = dir.empty(); // a check's kernels: cut away, not kept
  if (scratch) dir = join_path(run_dir_, ".kernels-cut" + (step.gpu.empty() ? "" : "-gpu" + step.gpu));
  auto cut = cut_kernel_trace(step.gpu, dir, /*needed=*/!scratch);
  if (scratch) remove_tree(dir);
  if (cut) return {};
  append_log(log, "[" + cut.error().message + "]\n");
  if (cut.error().code == ciq::errc::no_answer)
    servers_.at(step.gpu).reset(); // its timing can no longer be cut per request
  return make_error(ciq::errc::no_timing, cut.error().message);
}

Result<StepResult> BenchServerExecutor::ask_server(const Step& step) {
  // Split into words first, then filled in: a {workdir} with spaces stays one word.
  auto words = command_argv(step.command, step.placeholders, /*shell=*/false);
  if (!words) return words.error();
  std::uint64_t id = next_request_++;
  auto message = encode_request(id, *words);
  if (!message) return make_error(ciq::errc::usage, message.error().message + ": " + step.command);
  std::string shown;
  for (const auto& w : *words) shown += (shown.empty() ? "" : " ") + w;

  StepResult done;
  done.log = join_path(step.workdir, step.log_name);
  retire_out_of_step(step, done.log);
  bool fresh = !servers_.at(step.gpu);
  bound_server_log(server_log(step.gpu)); // before a fresh server too: the log is appended to across restarts
  auto server = server_for(step.gpu);
  if (!server) return server.error();
  auto started = std::chrono::steady_clock::now();
  std::string answer;
  auto sent = (*server)->send(*message);
  // A fresh server answers its first request after its own start-up
  // (imports, CUDA, inputs: seconds for a Python benchmark that imports
  // torch), which --timeout, a limit on the benchmark, does not cover.
  double limit = step.timeout > 0 && fresh ? step.timeout + server_start_ : step.timeout;
  Result<std::string> status =
      sent ? (*server)->receive(k_status_prefix, limit, &answer) : Result<std::string>(sent.error());
  done.started_server = fresh;
  RunResult& run = done.run;
  run.out = answer;
  run.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  std::string log = "> " + shown + "\n" + answer;
  if (std::size_t dropped = (*server)->dropped())
    log += "\n[the middle of its answer was dropped: " + std::to_string(dropped) + " bytes; the first and last " +
           std::to_string(k_kept_output_bytes >> 20) + " MiB are kept]\n";
  if (auto read = read_status(step, **server, fresh, status, id, log, done); !read) {
    if (read.error().code == k_ask_again) return ask_server(step);
    return read.error();
  }
  append_log(done.log, log + "[" + run.describe() + "]\n");
  if (!inject_library_.empty() && servers_.at(step.gpu))
    if (auto cut = cut_request_trace(step, done.log); !cut) return cut.error();
  return done;
}

std::string BenchServerExecutor::control_fifo(const std::string& gpu) const {
  return join_path(run_dir_, gpu.empty() ? "kernel-control.fifo" : "kernel-control-gpu" + gpu + ".fifo");
}

Result<void> BenchServerExecutor::cut_kernel_trace(const std::string& gpu, const std::string& dir, bool needed) {
  std::string fifo = control_fifo(gpu);
  remove_tree(dir);
  if (auto made = make_dirs(dir); !made) return made.error();
  // No reader: the library is not listening (CUDA never started in the
  // server, or not with the library).
  auto opened = open_own_fifo(fifo, O_WRONLY);  // never a FIFO someone else put there
  if (!opened && !needed) return {};
  if (!opened && opened.error().code == ciq::errc::unsafe) return make_error(ciq::errc::no_timing, "no kernel timing: " + opened.error().message);
  if (!opened)
    return make_error(ciq::errc::no_timing, "no kernel timing: the benchmark server's libciq-inject is not listening on " + fifo +
                                       " (the server never initialised CUDA, or CUDA_INJECTION64_PATH did not reach the "
                                       "process that did)");
  int fd = *opened;
  std::string command = "cut " + dir + "\n";
  bool sent = ::write(fd, command.data(), command.size()) == ssize_t(command.size()); // < PIPE_BUF: all or nothing
  ::close(fd);
  if (!sent) return make_error(ciq::errc::no_timing, "cannot write to the kernel-timing control FIFO " + fifo + ": " + std::strerror(errno));
  // The library flushes CUPTI and renames the file into place: its
  // appearance is the answer.
  auto until = std::chrono::steady_clock::now() + std::chrono::seconds(20);
  while (std::chrono::steady_clock::now() < until) {
    if (auto names = list_directory(dir))
      for (const auto& n : *names)
        if (n.rfind("kernels-", 0) == 0) return {};
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
  return make_error(ciq::errc::no_answer, "the benchmark server's kernel timing (libciq-inject) did not answer `cut` within 20 s on " + fifo);
}

} // namespace ciq::tuner
