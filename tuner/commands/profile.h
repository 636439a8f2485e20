// `ciq-tuner profile`: where a program spends its GPU time, kernel by
// kernel (run/profiling.h takes the profile), and which build unit and
// cache key each kernel came from. The table that tells a user where the
// compiler can still matter.
#pragma once

#include "tuner/run/profiling.h"
#include "utils/result.h"

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

/// The table as text (what the terminal shows).
std::string format_profile(const formats::KernelTrace& trace, const std::vector<ProfileRow>& rows, int top);

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
