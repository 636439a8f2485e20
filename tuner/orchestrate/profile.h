// `ciq-tuner profile`: where a program spends its GPU time, kernel by
// kernel, measured inside its own unmodified run (libciq-inject, loaded by
// the CUDA driver through CUDA_INJECTION64_PATH; tuner/profile reads what
// it writes), and which build unit and cache key each kernel came from (the
// build run once through ciq-nvcc/ciq-ptxas with CIQ_TRACE). The table
// that tells a user where the compiler can still matter.
#pragma once

#include "tuner/objectives/objectives.h"
#include "tuner/profile/kernel_trace.h"
#include "utils/result.h"

#include <map>
#include <string>
#include <vector>

namespace ciq::tuner {

struct ProfileOptions {
  std::string build;              // run first with CIQ_TRACE (optional)
  std::vector<std::string> argv;  // the program, as given after `--`
  bool shell = false;             // build: through /bin/sh -c
  std::string out_dir;            // where the traces go ("" = a scratch one under $TMPDIR, see run_profile)
  bool keep = false;              // keep the scratch directory of out_dir ""
  std::string trace_dir;          // read a recorded kernel trace instead of running
  std::string build_trace_dir;    // ... and its build trace (optional)
  std::string library;            // libciq-inject.so ("" = CIQ_INJECT_LIBRARY, else beside ciq-tuner)
  std::string capture;            // kernels (mangled names, ',') whose launches are captured for replay
  int top = 20;                   // rows shown (0 = all)
  bool json = false;
};

/// Where a kernel's code came from: the ptxas compiles that produced it.
struct KernelOrigin {
  std::string module_key, input, target;
};

/// One row of the table.
struct ProfileRow {
  const profile::KernelSummary* kernel = nullptr;
  double cumulative = 0;              // share of this and every row above
  std::vector<KernelOrigin> origins;  // none when the build was not traced
};

/// The rows, largest total time first, each with the compiles its mangled
/// name came from in `build` (a kernel compiled in several modules lists
/// each).
std::vector<ProfileRow> profile_rows(const profile::KernelTrace& trace, const std::vector<TracedModule>& build);

/// The table as text (what the terminal shows) and as one JSON object.
std::string format_profile(const profile::KernelTrace& trace, const std::vector<ProfileRow>& rows, int top);
std::string profile_json(const profile::KernelTrace& trace, const std::vector<ProfileRow>& rows);

/// libciq-inject.so: `given`, else $CIQ_INJECT_LIBRARY, else lib/ beside
/// the bin/ of this ciq-tuner (the build tree and an install alike).
std::string inject_library(const std::string& given = "");
/// Why inject_library() names no file, and what to do, for an error
/// message: CIQ_INJECT_LIBRARY names a wrong path; or this ciq was
/// configured without CUPTI's headers; or it was, and the library was not
/// built (in a build tree: the command that builds it) or not copied beside
/// this ciq-tuner (an install or a copy of bin/).
std::string inject_library_missing();
/// "; this machine has no NVIDIA driver loaded ..." when it has none, else "".
std::string no_driver_note();

/// Where one profiling run left its traces, and how the program ended.
struct ProfileCapture {
  std::string dir;                    // <out>: out_dir, or the directory made under $TMPDIR
  std::string kernel_dir, build_dir;  // <out>/kernels, <out>/build-trace
  std::string captures_dir;           // <out>/captures when kernels were to be captured, else ""
  int program_status = 0;             // as a shell reports it
  std::string program_describe;       // "exited with status 1", ... ("" when it succeeded)
};

/// Runs `build` (if not empty; a failure is an error) with CIQ_TRACE, then
/// the program once with libciq-inject (and CIQ_TRACE, for a JIT inside
/// it), both under `out_dir` ("" = a new directory under $TMPDIR, said on
/// stderr). The program's own output is the user's to see.
/// `placeholders` fill the build command's {workdir}, {gpu}, ...; with
/// `quiet`, the build's and the program's output go to <out>/profile.log.
Result<ProfileCapture> capture_profile(const std::string& build, const std::vector<std::string>& argv, bool shell,
                                       const std::string& out_dir, const std::string& library = "",
                                       const std::map<std::string, std::string>& placeholders = {}, bool quiet = false,
                                       const std::string& capture_kernels = "");

/// A recorded profile: the kernel trace of `kernel_dir` with the build
/// trace of `build_dir` ("" = none), and its rows. Fails when there is no
/// timing ("no-timing", with the reason).
struct Profile {
  profile::KernelTrace trace;
  std::vector<TracedModule> build;
};
Result<Profile> read_profile(const std::string& kernel_dir, const std::string& build_dir);

/// Runs the build (if any) and the program, or reads recorded traces, and
/// prints the table. The exit status: the program's when it ran and the
/// trace has timing; 1 with "no kernel timing: <why>" when it has none.
/// Without out_dir the traces go to a scratch directory under $TMPDIR,
/// removed once the table is printed; it is kept, and its path said on
/// stderr, with `keep`, with `capture` (the captures are for a later
/// `run --capture`), or when anything failed (the program, the build, the
/// timing), for a look at what went wrong.
Result<int> run_profile(const ProfileOptions& options);

} // namespace ciq::tuner
