// libciq-inject: kernel timing inside the user's own, unmodified program.
//
// The CUDA driver loads the library named by CUDA_INJECTION64_PATH into
// every process at cuInit and calls its InitializeInjection(). With
// CIQ_KERNEL_TRACE=<dir> set, this records every kernel execution through
// CUPTI's activity API (CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL: the kind that
// does not serialise kernels) and, at the end, writes
// <dir>/kernels-<tag>.jsonl (format: tuner/formats/kernel_trace.h). With
// CIQ_CAPTURE=<dir> set (alone or as well), it captures launches of the
// kernels named in CIQ_CAPTURE_KERNELS for replay (capture.h: the format is
// tuner/formats/capture.h) and writes <dir>/index-<tag>.jsonl at the same
// moments as the trace. <tag> is "<pid>-<16 random hex digits>", drawn once
// at start (utils/safe_open.h, new_process_tag): processes in different PID
// namespaces (containers) can share a pid and a directory, and no file or
// directory of one process ever replaces another's; a name that is taken
// all the same gets "-1", "-2", ... added, never overwritten. CUPTI allows one callback subscriber per process:
// this file's on_callback() is it, and hands modules loaded to the trace
// and driver-API launch calls to capture. Without either variable, nothing
// happens.
//
// Promises, because this runs inside someone else's program:
// - It never changes the program's output or exit status. Nothing goes to
//   stdout or stderr unless CIQ_KERNEL_TRACE_VERBOSE=1; every failure is a
//   status in the trace or the capture index, not a crash.
//   InitializeInjection always reports success to the driver.
// - libcupti is not linked but loaded with dlopen (cupti_loader.h): a
//   missing or mismatched CUPTI must never make cuInit fail; it becomes
//   status "no-cupti" or "cupti-version" with the reason.
// - Memory is bounded (kernel_table.h; capture_writer.h's table, and
//   capture copies device memory through a 64 MiB buffer).
// - The trace and the capture index are written once: at exit() (atexit,
//   after a forced flush of CUPTI's buffers), or on SIGINT, SIGTERM, SIGHUP
//   or SIGQUIT when that
//   signal's disposition was the default at InitializeInjection (then the
//   signal is re-raised with the default action, so the exit status is the
//   signal's). A program that handles a signal itself exits through exit()
//   and atexit. Written atomically: a hidden temporary file in <dir>, then
//   a rename that never replaces (rename_new).
//
// A resident program (a --bench-server: one process, many requests) is
// timed per request: with CIQ_KERNEL_CONTROL=<fifo> also set, a thread of
// this library reads commands from that FIFO, one a line:
//   cut DIR   flush CUPTI's buffers, write the launches since the last cut
//             to DIR/kernels-<tag>.jsonl (same format, same atomic write;
//             the modules loaded so far are in every cut), forget them
// The file's appearance is the answer. Only the first process to start
// CUDA with the variable set takes the channel (an flock on <fifo>.lock,
// released when it dies); its CUDA children write their trace at exit
// only. The thread blocks every signal and ends with the process.
//
// Not covered: _exit(), abort(), SIGKILL and crashes write nothing; a fork
// child writes nothing (its parent's kernels are the parent's); exec
// replaces the library (the new program, if it uses CUDA, is injected
// afresh). Writing from a signal handler is not async-signal-safe (it
// allocates and calls CUPTI): a bounded wait for the table's lock keeps it
// from hanging on a lock its own thread holds, and a trace that could not
// take it says "interrupted". A program that runs its own CUPTI client
// (torch.profiler, Nsight) competes with this one: CUPTI allows one
// callback subscriber and one set of activity buffers.
#include "tuner/inject/capture.h"
#include "tuner/inject/control_channel.h"
#include "tuner/inject/cupti_loader.h"
#include "tuner/inject/kernel_table.h"
#include "tuner/formats/kernel_trace_lines.h"
#include "utils/env_table.h"
#include "utils/safe_open.h"
#include "utils/write_all.h"

#include <atomic>
#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fcntl.h>
#include <mutex>
#include <pthread.h>
#include <string>
#include <sys/file.h>
#include <sys/stat.h>
#include <thread>
#include <unistd.h>

namespace ciq::inject {
namespace {

constexpr std::size_t buffer_bytes = std::size_t(4) << 20;
constexpr unsigned max_name_tries = 1000;         // kernels-<tag>-<n>.jsonl taken before giving up
constexpr int fatal_signals[] = {SIGINT, SIGTERM, SIGHUP, SIGQUIT};

/// Everything the library knows. Allocated once and never freed: CUPTI may
/// deliver a buffer after static destructors have run.
struct Injection {
  std::string dir;  // absolute; empty without CIQ_KERNEL_TRACE (then no timing is recorded)
  bool verbose = false;
  pid_t pid = 0;
  std::string tag;  // "<pid>-<random>": this process' file names (new_process_tag)
  Cupti cupti;
  bool cupti_loaded = false;
  std::timed_mutex lock;  // guards table, facts and closed
  KernelTable table;
  ProcessFacts facts;
  bool closed = false;  // rendered: later records are dropped
  std::atomic<bool> writing{false};
  LaunchCapture* capture = nullptr;  // with CIQ_CAPTURE; never freed, like this
};

Injection* injection = nullptr;

/// Verbose mode's one line on stderr. Paths and commands in it come from the
/// environment and the control FIFO: control characters are shown as \xNN,
/// never sent to the terminal.
void say(const std::string& message) {
  if (!injection || !injection->verbose) return;
  std::string shown;
  for (unsigned char c : message) {
    if (c >= 0x20 && c < 0x7f) {  // ASCII only: no C1 control, no byte a terminal could take for one
      shown += char(c);
    } else {
      char escaped[5];
      std::snprintf(escaped, sizeof escaped, "\\x%02x", c);
      shown += escaped;
    }
  }
  std::fprintf(stderr, "ciq-inject: %s\n", shown.c_str());
}

void CUPTIAPI buffer_requested(uint8_t** buffer, size_t* size, size_t* max_records) {
  // CUPTI wants 8-byte alignment; malloc gives 16. No buffer: CUPTI drops
  // the records and counts them.
  *buffer = static_cast<uint8_t*>(std::malloc(buffer_bytes));
  *size = *buffer ? buffer_bytes : 0;
  *max_records = 0;
}

void CUPTIAPI buffer_completed(CUcontext context, uint32_t stream, uint8_t* buffer, size_t size, size_t valid) {
  Injection& in = *injection;
  try {
    std::lock_guard<std::timed_mutex> hold(in.lock);
    if (!in.closed) {
      CUpti_Activity* record = nullptr;
      while (in.cupti.activity_get_next_record(buffer, valid, &record) == CUPTI_SUCCESS) {
        if (record->kind != CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL) continue;
        const auto* k = reinterpret_cast<const CUpti_ActivityKernel10*>(record);
        KernelLaunch launch;
        launch.name = k->name ? k->name : "";
        launch.device = k->deviceId;
        launch.grid = {k->gridX, k->gridY, k->gridZ};
        launch.block = {k->blockX, k->blockY, k->blockZ};
        launch.dynamic_smem = k->dynamicSharedMemory;
        launch.static_smem = k->staticSharedMemory;
        launch.registers = k->registersPerThread;
        launch.local_bytes = k->localMemoryPerThread;
        launch.start_ns = k->start;
        launch.end_ns = k->end;
        in.table.add_launch(launch);
      }
      size_t dropped = 0;
      if (in.cupti.activity_get_num_dropped_records(context, stream, &dropped) == CUPTI_SUCCESS)
        in.table.add_dropped_records(dropped);
    }
  } catch (...) {
    // Out of memory: these records are lost, the program goes on.
  }
  std::free(buffer);
}

void module_loaded(CUpti_CallbackId id, const void* data) {
  if (id != CUPTI_CBID_RESOURCE_MODULE_LOADED || !data) return;
  const auto* module = static_cast<const CUpti_ModuleResourceData*>(
      static_cast<const CUpti_ResourceData*>(data)->resourceDescriptor);
  if (!module || !module->pCubin) return;
  // The image is valid only during this call: hash it now.
  if (injection->capture) injection->capture->on_module_loaded(std::string_view(module->pCubin, module->cubinSize));
  if (injection->dir.empty()) return;
  try {
    std::lock_guard<std::timed_mutex> hold(injection->lock);
    if (!injection->closed) injection->table.add_module(module->moduleId, std::string_view(module->pCubin, module->cubinSize));
  } catch (...) {
    // Out of memory: the module goes unrecorded.
  }
}

/// CUPTI's one subscriber of the process, for both: modules loaded (the
/// trace) and the driver's launch calls (capture).
void CUPTIAPI on_callback(void*, CUpti_CallbackDomain domain, CUpti_CallbackId id, const void* data) {
  if (domain == CUPTI_CB_DOMAIN_RESOURCE) module_loaded(id, data);
  else if (domain == CUPTI_CB_DOMAIN_DRIVER_API && injection->capture && data)
    injection->capture->on_driver_api(id, *static_cast<const CUpti_CallbackData*>(data));
}

/// Hands every completed record to buffer_completed, on this thread: call
/// it without holding our lock.
void flush_cupti(Injection& in) {
  if (!in.cupti_loaded || in.dir.empty() || in.facts.status != ciq::formats::k_status_ok) return;
  CUptiResult flushed = in.cupti.activity_flush_all(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
  if (flushed != CUPTI_SUCCESS) say(in.cupti.describe("cuptiActivityFlushAll", flushed));
}

/// Writes `text` as <dir>/kernels-<tag>.jsonl: a new private temporary
/// file, then a rename that never replaces (safe_open.h: <dir> must be the
/// user's own, made here or not writable by anyone else; nothing there is
/// followed or opened). A name already taken (another process' trace, or an
/// earlier cut of this one into the same DIR) gets "-1", "-2", ... added.
/// When it cannot write safely it writes nothing, and says why when verbose.
void write_file(const std::string& dir, const std::string& tag, const std::string& text) {
  std::string path = dir + "/kernels-" + tag + ".jsonl";
  if (auto made = ciq::make_own_directory(dir); !made) {
    say("not writing " + path + ": " + made.error().message);
    return;
  }
  std::string temporary = dir + "/.kernels-" + tag + ".XXXXXX";
  int fd = ::mkstemp(temporary.data());  // O_CREAT|O_EXCL: never a planted link or FIFO
  bool ok = fd >= 0 && ::fchmod(fd, 0644) == 0 && write_all(fd, text);
  if (fd >= 0) ok = ::close(fd) == 0 && ok;
  if (!ok) {
    say("cannot write " + path + ": " + std::strerror(errno));
    if (fd >= 0) ::unlink(temporary.c_str());
    return;
  }
  for (unsigned taken = 0;; ++taken) {
    if (taken) path = dir + "/kernels-" + tag + "-" + std::to_string(taken) + ".jsonl";
    auto renamed = ciq::rename_new(temporary, path);
    if (renamed) {
      say("wrote " + path);
      return;
    }
    if (renamed.error().code != ciq::errc::exists || taken >= max_name_tries) {
      say("cannot write " + path + ": " + renamed.error().message);
      ::unlink(temporary.c_str());
      return;
    }
  }
}

/// Flushes CUPTI, renders the table and writes the file; once per process,
/// and never in a fork child.
void write_trace() {
  Injection& in = *injection;
  if (in.dir.empty() || in.writing.exchange(true) || ::getpid() != in.pid) return;
  flush_cupti(in);
  std::string text;
  if (in.lock.try_lock_for(std::chrono::seconds(2))) {
    in.closed = true;
    text = in.table.render(in.facts);
    in.lock.unlock();
  } else {
    ProcessFacts facts = in.facts;
    facts.status = "interrupted";
    facts.reason = "a signal arrived while the kernel table was being updated; its kernels are lost";
    text = KernelTable().render(facts);
  }
  write_file(in.dir, in.tag, text);
}

/// `cut DIR`: the launches since the last cut, written to DIR, then forgotten.
void cut(const std::string& dir) {
  Injection& in = *injection;
  flush_cupti(in);
  std::string text;
  {
    std::lock_guard<std::timed_mutex> hold(in.lock);
    if (in.closed) return;  // exiting: the exit trace has them
    text = in.table.render(in.facts);
    in.table.clear_launches();
  }
  write_file(dir, in.tag, text);
}

/// The trace, then the capture index: each once, whichever comes first
/// (exit or a signal).
void write_trace_safely() {
  try {
    write_trace();
  } catch (...) {
    say("cannot write the trace: out of memory");
  }
  try {
    if (injection->capture) injection->capture->finish();
  } catch (...) {
    say("cannot write the capture index: out of memory");
  }
}

void write_at_exit() { write_trace_safely(); }

void write_on_signal(int signal) {
  int saved = errno;
  write_trace_safely();
  std::signal(signal, SIG_DFL);
  errno = saved;
  std::raise(signal);  // delivered with the default action once we return
}

/// Sets in.facts.status: "ok" when kernel activity is being recorded (with
/// CIQ_KERNEL_TRACE), and makes capture's status say why it cannot
/// capture (with CIQ_CAPTURE). One CUPTI subscriber serves both.
void start_recording(Injection& in) {
  std::string reason;
  auto failed = [&](const std::string& status, const std::string& why) {
    in.facts.status = status;
    in.facts.reason = why;
    if (in.capture) in.capture->fail(status, why);
  };
  if (!load_cupti(in.cupti, reason)) {
    failed("no-cupti", reason);
    in.facts.module_identity = "no CUPTI";
    return;
  }
  in.cupti_loaded = true;
  uint32_t version = 0;
  CUptiResult result = in.cupti.get_version(&version);
  if (result != CUPTI_SUCCESS || version / 10000 != CUPTI_API_VERSION / 10000) {
    // Activity records and callback data change layout between major
    // versions; reading them with the wrong struct would give garbage.
    failed("cupti-version", in.cupti.path + ": CUPTI API version " + std::to_string(version) +
                                "; this library reads the records of version " + std::to_string(CUPTI_API_VERSION / 10000) + ".x");
    in.facts.module_identity = "CUPTI version";
    return;
  }
  CUpti_SubscriberHandle subscriber = nullptr;
  CUptiResult subscribed = in.cupti.subscribe(&subscriber, on_callback, nullptr);
  if (in.capture && in.capture->start()) {
    result = subscribed;
    for (CUpti_CallbackId id : launch_callback_ids())
      if (result == CUPTI_SUCCESS) result = in.cupti.enable_callback(1, subscriber, CUPTI_CB_DOMAIN_DRIVER_API, id);
    // The modules' images name each captured kernel's code (capture.h).
    if (result == CUPTI_SUCCESS)
      result = in.cupti.enable_callback(1, subscriber, CUPTI_CB_DOMAIN_RESOURCE, CUPTI_CBID_RESOURCE_MODULE_LOADED);
    if (result != CUPTI_SUCCESS) in.capture->fail("cupti-error", in.cupti.describe("cuptiSubscribe/cuptiEnableCallback(DRIVER_API)", result));
  }
  if (in.dir.empty()) return;
  result = subscribed;
  if (result == CUPTI_SUCCESS)
    result = in.cupti.enable_callback(1, subscriber, CUPTI_CB_DOMAIN_RESOURCE, CUPTI_CBID_RESOURCE_MODULE_LOADED);
  if (result != CUPTI_SUCCESS) in.facts.module_identity = in.cupti.describe("cuptiSubscribe/cuptiEnableCallback", result);
  result = in.cupti.activity_register_callbacks(buffer_requested, buffer_completed);
  if (result != CUPTI_SUCCESS) {
    in.facts.status = "cupti-error";
    in.facts.reason = in.cupti.describe("cuptiActivityRegisterCallbacks", result);
    return;
  }
  result = in.cupti.activity_enable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL);
  if (result != CUPTI_SUCCESS) {
    in.facts.status = "cupti-error";
    in.facts.reason = in.cupti.describe("cuptiActivityEnable(CONCURRENT_KERNEL)", result);
    return;
  }
  in.facts.status = ciq::formats::k_status_ok;
}

/// `path` made absolute against the directory where the program started
/// CUDA, not where it is at exit.
std::string absolute(const std::string& path) {
  if (path.empty() || path[0] == '/') return path;
  char cwd[4096];
  return ::getcwd(cwd, sizeof cwd) ? std::string(cwd) + "/" + path : path;
}

std::string self_exe() {
  char buffer[4096];
  ssize_t n = ::readlink("/proc/self/exe", buffer, sizeof buffer);
  return n > 0 ? std::string(buffer, std::size_t(n)) : std::string();
}

} // namespace
} // namespace ciq::inject

/// The driver's hook, called once from cuInit. Always 1 (success): nothing
/// here may make the program's CUDA initialisation fail.
extern "C" __attribute__((visibility("default"))) int InitializeInjection(void) {
  using namespace ciq::inject;
  static std::atomic<bool> initialised{false};
  if (initialised.exchange(true)) return 1;
  const char* dir = std::getenv(ciq::env_name(ciq::Env::kernel_trace));
  const char* capture_dir = std::getenv(ciq::env_name(ciq::Env::capture));
  bool tracing = dir && *dir, capturing = capture_dir && *capture_dir;
  if (!tracing && !capturing) return 1;
  try {
    auto* in = new Injection;
    in->verbose = [] { const char* v = std::getenv(ciq::env_name(ciq::Env::kernel_trace_verbose)); return v && std::strcmp(v, "1") == 0; }();
    if (tracing) in->dir = absolute(dir);
    in->pid = ::getpid();
    in->tag = ciq::new_process_tag();
    in->facts.pid = in->pid;
    in->facts.exe = self_exe();
    injection = in;
    if (capturing) in->capture = new LaunchCapture(absolute(capture_dir), in->pid, in->tag, in->facts.exe, say);
    std::atexit(write_at_exit);
    for (int signal : fatal_signals) {
      struct sigaction current;
      if (sigaction(signal, nullptr, &current) != 0 || current.sa_handler != SIG_DFL || (current.sa_flags & SA_SIGINFO))
        continue;
      struct sigaction ours = {};
      ours.sa_handler = write_on_signal;
      sigemptyset(&ours.sa_mask);
      for (int other : fatal_signals) sigaddset(&ours.sa_mask, other);
      ours.sa_flags = SA_RESTART;
      sigaction(signal, &ours, nullptr);
    }
    start_recording(*in);
    if (tracing) {
      if (const char* control = std::getenv(ciq::env_name(ciq::Env::kernel_control)); control && *control == '/') start_control(control, in->pid, cut, say);
      say("status " + in->facts.status + (in->facts.reason.empty() ? "" : ": " + in->facts.reason) + "; trace in " + in->dir);
    }
    if (capturing)
      say("capture status " + in->capture->status() + "; captures in " + in->capture->dir());
  } catch (...) {
    // Out of memory at start-up: record nothing rather than disturb cuInit.
  }
  return 1;
}
