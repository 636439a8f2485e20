// nvcc's compilation as a list of steps, read from what `nvcc --dryrun`
// prints: `#$ NAME=value` lines that set up the environment of the tools,
// then one `#$ command` line per tool run (cudafe++, cicc, ptxas, fatbinary,
// the host compiler, nvlink, the link), in the order nvcc runs them. nvcc
// runs each line through /bin/sh; we split them with wordexp(3), the libc's
// own shell word expansion (quotes, $VARS), with command substitution off
// and shell operators refused, so a line that needs more than argv is a
// parse failure and the caller runs nvcc itself.
#pragma once

#include "utils/result.h"

#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace ciq::wrapper {

struct NvccPlan {
  /// nvcc's environment assignments with a single-word value, in order
  /// (PATH, LD_LIBRARY_PATH, CICC_PATH, NVVMIR_LIBRARY_DIR, ...).
  std::vector<std::pair<std::string, std::string>> environment;
  std::vector<std::vector<std::string>> steps; // argv of each tool run
};

/// nvcc names its temporaries tmpxft_<pid>_<counter>-N_...; in a private
/// directory they need no pid, and fixed names let the outputs of a step
/// (which mention them) be reused by another build.
inline constexpr std::string_view kFixedTempStem = "tmpxft_00000000_00000000";

/// Parses a --dryrun listing, renaming every temporary to kFixedTempStem.
/// Applies the environment assignments to this process as it goes: later
/// lines refer to them ($CICC_PATH) and the steps must run with them.
/// Fails on a line it cannot turn into argv, or when there is no step;
/// `skip_unsplittable`: such a line (nvcc's `-- Filter Dependencies -- >
/// a.d` of -MD, a warning, a file name a shell would need) is left out
/// instead, for a reader that needs only some steps.
Result<NvccPlan> parse_dryrun(std::string_view listing, bool skip_unsplittable = false);

/// The tool a step runs, by base name ("cicc", "ptxas", "fatbinary", ...):
/// with --ptxas-prefix the step is `ciq-ptxas ptxas ...`, with
/// --cicc-prefix `ciq-cicc .../cicc ...`, and the tool is the prefixed one.
std::string tool_of(const std::vector<std::string>& argv);

/// A step's output (its last `-o` value), or "".
std::string output_of(const std::vector<std::string>& argv);

/// Whether what the cicc step for virtual architecture `arch` (cicc's
/// `-arch`, e.g. compute_90a) writes becomes machine code in `plan`: true
/// when a ptxas step that writes machine code (`-arch=sm_XX` with `-o`)
/// reads it, or when it is not PTX (LTO IR: nvlink compiles it at the
/// link); false when its PTX is only embedded. With `-arch=sm_90a` nvcc 13
/// also runs cicc for compute_90, embeds that PTX as PTX only (for the
/// driver's JIT) and runs ptxas on it only to check it (`-arch=compute_90`,
/// no output). std::nullopt when no cicc step of `plan` is for `arch`. A
/// step behind a prefix (`ciq-cicc cicc ...`, `ciq-ptxas ptxas ...`) counts.
std::optional<bool> reaches_machine_code(const NvccPlan& plan, std::string_view arch);

} // namespace ciq::wrapper
