// Kernel capture inside the user's program (CIQ_CAPTURE=<dir>): for each
// kernel named in CIQ_CAPTURE_KERNELS, the first launch of each launch
// configuration (up to CIQ_CAPTURE_CONFIGS per kernel) is recorded whole —
// parameters, and every device allocation a pointer parameter points into,
// before and after the launch — in the format of tuner/formats/capture.h,
// so that ciq-replay can run the kernel alone.
//
// inject.cpp owns CUPTI and hands this every driver-API callback of the
// launch ids launch_callback_ids() names. At API enter of a launch to
// capture it checks what can be checked without waiting (stream capture,
// the parameters, the memory and its size), then synchronises the context,
// copies each allocation to <dir>/<tag>-<n>/mem-<i>.bin in 64 MiB chunks
// (its XXH3-128 digest taken on the way); at API exit it synchronises
// again, digests the allocations anew and writes launch.json atomically.
// The kernel's code is named too (code_xxh128): the module loads are
// followed (cuModuleLoad*: which CUmodule each image became, and the hash
// of each wanted kernel's machine code in it, from CUPTI's module-loaded
// callback), and a launch's function leads to its module
// (cuFuncGetModule). A program that loads one kernel name in several
// modules (Triton's forward and backward graphs) so still says which one
// ran. Runtime launches (CUkernel handles) leave it unknown ("").
// Every launch of a kernel asked for is counted by configuration; at exit
// (or a fatal signal, through inject.cpp) launch.json's config_launches is
// brought up to date and index-<tag>.jsonl says what was captured and why
// anything was not. <tag> is the process' "<pid>-<random>" (inject.cpp): a
// directory is made with mkdir and the index renamed into place without
// replacing (rename_new), so no name another process (another PID
// namespace's process of the same pid) took is ever reused.
//
// Promises (inject.cpp's): the program's output, exit status and memory are
// its own: this only reads device memory and adds synchronisations around
// the captured launches; every failure is a refusal in the index, nothing
// is printed unless the logger is verbose. Our own driver calls inside a
// callback are never captured (a per-thread guard).
#pragma once

#include "tuner/inject/capture_writer.h"
#include "tuner/inject/cuda_loader.h"

#include <cupti_callbacks.h>

#include <atomic>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

namespace ciq::inject {

/// The CUPTI_CB_DOMAIN_DRIVER_API ids capture listens to: the launches it
/// captures and the ones it counts as refused (cooperative, graph), and the
/// module loads (cuModuleLoad*) that tell each kernel's code.
const std::vector<CUpti_CallbackId>& launch_callback_ids();

class LaunchCapture {
public:
  using Logger = std::function<void(const std::string&)>;

  /// `dir` is absolute; nothing is made there until a launch is captured or
  /// the index is written. `pid` is the process' (launch.json, the index);
  /// `tag` begins every name this process makes in `dir` (new_process_tag).
  LaunchCapture(std::string dir, std::int64_t pid, std::string tag, std::string exe, Logger say);

  /// Reads CIQ_CAPTURE_* and loads the driver's calls; the index's status
  /// says what failed ("bad-setting", "no-driver"). True when capturing.
  bool start();
  /// Something outside (CUPTI) keeps capture from working: the index says so.
  void fail(const std::string& status, const std::string& reason);
  const std::string& status() const { return status_; }
  const std::string& dir() const { return dir_; }

  /// A CUPTI_CB_DOMAIN_DRIVER_API callback of one of launch_callback_ids().
  void on_driver_api(CUpti_CallbackId id, const CUpti_CallbackData& data);
  /// CUPTI's CUPTI_CBID_RESOURCE_MODULE_LOADED, with the module's image
  /// (valid during the call only): inside a cuModuleLoad* of this thread,
  /// the code of each wanted kernel in it is noted for that module.
  void on_module_loaded(std::string_view image);

  /// Writes launch counts into the captured launch.json files and
  /// index-<tag>.jsonl (index-<tag>-<k>.jsonl if that is taken); once (later
  /// calls do nothing).
  void finish();

private:
  struct InFlight;
  struct Launch;
  void on_enter(CUpti_CallbackId id, const CUpti_CallbackData& data);
  // The launch a launch API's parameters describe into `launch` (its
  // refusal set when it cannot be captured: cooperative, clusters); false
  // for a callback that is no kernel launch.
  static bool read_launch(CUpti_CallbackId id, const void* params, Launch& launch);
  void on_exit(const CUpti_CallbackData& data);
  void on_module_load(const CUpti_CallbackData& data);
  std::string code_of(const Launch& launch, bool as_kernel);
  std::unique_ptr<InFlight> prepare(const Launch& launch, std::string& why);
  // prepare()'s steps, each false with `why` set when the launch is not
  // captured: not while its stream records a CUDA graph; its parameters
  // (offsets, sizes and bytes); the allocations its pointers reach (none
  // managed or host memory, their total under the cap); the device it runs
  // on; a new directory of its own.
  bool not_in_graph_capture(const Launch& launch, std::string& why);
  bool read_params(const Launch& launch, LaunchRecord& r, std::string& why);
  bool find_memory(LaunchRecord& r, std::string& why);
  void record_device(LaunchRecord& r);
  bool make_capture_directory(InFlight& flight, std::string& why);
  bool copy_allocations(InFlight& flight, std::string& why);
  /// `own_file`: a file of this process' own capture directory, replaced
  /// when there; `never`: a name in the shared directory, which becomes
  /// <stem>-<k>.<extension> while taken. `*written`: the path it got.
  enum class Replace { own_file, never };
  std::string write_atomically(const std::string& dir, const std::string& name, const std::string& text, Replace replace,
                               std::string* written = nullptr);
  void remove_capture(const InFlight& flight);

  std::string dir_;
  std::int64_t pid_;
  std::string tag_;
  std::string exe_;
  Logger say_;
  std::string status_ = "ok", reason_;
  CudaDriver driver_;
  bool capturing_ = false;
  std::unique_ptr<CaptureTable> table_;
  std::timed_mutex lock_;  // guards table_, in_flight_, written_
  std::map<std::uint64_t, std::unique_ptr<InFlight>> in_flight_;  // by the token in correlationData
  std::uint64_t next_token_ = 1;
  struct Written {
    std::string dir;
    LaunchRecord record;
  };
  std::vector<Written> written_;
  // Per CUmodule the program loaded: the code hash (hex) of each wanted
  // kernel in it. Bounded by the modules loaded, a few names each.
  std::map<CUmodule, std::map<std::string, std::string, std::less<>>> module_codes_;
  std::atomic<std::uint32_t> next_capture_{0};
  std::atomic<bool> finished_{false};
};

} // namespace ciq::inject
