// A program's profile, taken inside its own unmodified run: the build run
// once with CIQ_TRACE, then the program with libciq-inject (loaded by the
// CUDA driver through CUDA_INJECTION64_PATH; tuner/formats reads what it
// writes), and each kernel tied to the build unit and cache key it came
// from. Used by `ciq-tuner profile`, campaigns' --from-profile and
// --check-program (commands/).
#pragma once

#include "tuner/objectives/objectives.h"
#include "tuner/formats/kernel_trace.h"
#include "tuner/rundir/profile_file.h"
#include "utils/result.h"

#include <map>
#include <string>
#include <vector>

namespace ciq::tuner {

/// One row of the table.
struct ProfileRow {
  const formats::KernelSummary* kernel = nullptr;
  double cumulative = 0;              // share of this and every row above
  std::vector<ProfileOrigin> origins;  // the compiles its code came from (profile_file.h); none when the build was not traced
};

/// The rows, largest total time first, each with the compiles its mangled
/// name came from in `build` (a kernel compiled in several modules lists
/// each).
std::vector<ProfileRow> profile_rows(const formats::KernelTrace& trace, const std::vector<TracedModule>& build);

/// The profile as profile.json holds it (rundir/profile_file.h: its text is
/// profile_json(), also `profile --json`).
ProfileFile profile_of(const formats::KernelTrace& trace, const std::vector<ProfileRow>& rows);

/// The kernel's largest launch configuration (the first), or none.
const formats::ConfigSummary* largest_config(const formats::KernelSummary& k);

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
  formats::KernelTrace trace;
  std::vector<TracedModule> build;
};
Result<Profile> read_profile(const std::string& kernel_dir, const std::string& build_dir);

} // namespace ciq::tuner
