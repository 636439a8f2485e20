// What a candidate is scored on: numbers the user's benchmark prints
// (--metric REGEX, first capture group), or numbers ptxas reports for the
// compiled kernels, read from ciq-ptxas' trace records (no GPU needed).
#pragma once

#include "tuner/formats/kernel_trace.h"
#include "utils/result.h"

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

namespace re2 {
class RE2;
}

namespace ciq::tuner {

// energy: joules per benchmark run; power: mean watts over it (NVML's
// energy counter on the run's GPU, read by the tuner around the run).
enum class ObjectiveKind { metric, spill_stores, registers, stack, compile_time, kernel_time, energy, power };

struct Objective {
  ObjectiveKind kind = ObjectiveKind::metric;
  std::string name;     // "metric:<regex>", "ptxas:spill-stores", ...
  std::string pattern;  // metric: the regex; kernel-time: the kernels' glob ("" = all)
  // RE2 (linear time, no recursion): a benchmark's output is untrusted text,
  // and a user's pattern must not be able to hang or crash the tuner on it.
  std::shared_ptr<const re2::RE2> regex;
  bool maximize = false;

  /// Same code, same value: one evaluation suffices and no significance test.
  bool deterministic() const {
    return kind == ObjectiveKind::spill_stores || kind == ObjectiveKind::registers || kind == ObjectiveKind::stack;
  }
  /// Read from what a benchmark run did (its output, its kernel trace, the
  /// GPU's energy counter).
  bool needs_benchmark() const {
    return kind == ObjectiveKind::metric || kind == ObjectiveKind::kernel_time || needs_energy();
  }
  bool needs_energy() const { return kind == ObjectiveKind::energy || kind == ObjectiveKind::power; }
};

/// "ptxas:spill-stores", "ptxas:registers", "ptxas:stack", "compile-time",
/// "kernel-time[:GLOB]", "energy", "power".
Result<Objective> builtin_objective(const std::string& spec);

/// How many times each kernel ran in one benchmark run, by mangled name.
using LaunchCounts = std::map<std::string, std::uint64_t>;

/// The launches of the kernels `objective` times in `trace`.
LaunchCounts launch_counts(const Objective& objective, const formats::KernelTrace& trace);

/// kernel-time[:GLOB]: the GPU time, in ms, that the kernels matching GLOB
/// (their mangled or demangled names; all kernels when none is given) took
/// in one benchmark run of the unmodified program, summed over every launch
/// and every process of that run, as libciq-inject recorded it. One run is
/// one sample (the median of --repeats runs scores the candidate, and the
/// verification compares runs): a program launches the same kernels the
/// same number of times whatever the candidate, so its total is the time the
/// user pays, and launches of different sizes are not mixed as samples of
/// one quantity.
///
/// Except where the compiled code decides how often a kernel runs: an
/// autotuner in the program (Inductor adds a reduction config when a
/// kernel's registers limit its occupancy, then times both) launches it more
/// often while it compiles, and once per compile, not per run. With
/// `reference` (the default's first run: launch_counts()), a kernel that ran
/// another number of times than there counts as the reference's launches,
/// each configuration at this run's median duration for it (a
/// configuration this run lacks: the kernel's median); `scaled` (when given)
/// then names each such kernel with both counts. Fails ("no-timing") when
/// the run has no timing, or when no kernel matching GLOB ran (the kernels
/// that did are named).
struct ScaledKernel {
  std::string kernel;                       // mangled
  std::uint64_t launches = 0, reference = 0;  // in this run; in the default's first
  /// "KERNEL ran N times, M in the default's first run".
  std::string text() const;
};
Result<double> kernel_time_ms(const Objective& objective, const formats::KernelTrace& trace,
                              const LaunchCounts* reference = nullptr, std::vector<ScaledKernel>* scaled = nullptr);

/// Whether the kernel-time `objective` times `kernel`: its glob ("" = all)
/// matches the mangled or the demangled name.
bool times_kernel(const Objective& objective, const formats::KernelSummary& kernel);

/// The first kernel-time objective of `objectives`; null when none is.
const Objective* kernel_time_objective(const std::vector<Objective>& objectives);

/// The metric objective for `pattern` (RE2 syntax: Perl-like, no
/// backreferences or lookaround). Fails on a pattern RE2 refuses or one
/// without a capture group.
Result<Objective> metric_objective(const std::string& pattern);

/// The first capture group of the objective's regex in `output` (the last
/// match if it occurs several times), as a number. Fails ("unparsable") when
/// nothing matches, or the match is not a finite number (20,000 digits
/// overflow a double to inf: refused, not scored as inf). Matching takes time
/// linear in output.size().
Result<double> extract_metric(const Objective& objective, const std::string& output);

/// One kernel in a trace record.
struct TracedKernel {
  std::string name, key;
  std::string code;       // hex hash of its machine code (utils/elf.h); "" when unknown
  double registers = 0, spill_stores = 0, spill_loads = 0, stack = 0, shared = 0;
  long block_threads = 0; // declared in the PTX (.reqntid/.maxntid); 0 = unknown
};

/// One trace record (one module ciq-ptxas compiled).
struct TracedModule {
  std::string file, input, output, target, ptxas_version, flags, module_key, controls, controls_error, code_digest;
  bool controls_applied = false;
  bool accepts_controls_file = false; // the ptxas takes --apply-controls
  int exit_status = 0;
  double seconds = 0;
  std::vector<TracedKernel> kernels;
  std::vector<std::string> warnings; // ptxas' warnings, normalised ("ptxas warning : ...")
  std::vector<std::string> args;     // ptxas' arguments without the input and -o (how to compile it again)
  std::string ptxas_path;            // the real ptxas that compiled it
  std::string ptxas_identity;        // its identity (cache::identity_digest); "" in traces of older ciq
  std::string ptx_copy;              // the module's PTX kept with CIQ_TRACE_PTX=1, relative to the trace dir; or ""
};

/// Every trace record under `dir`, oldest first; an absent dir gives none.
Result<std::vector<TracedModule>> read_trace(const std::string& dir);

/// One translation unit ciq-cicc compiled (the NVVM stage): <trace>/units/.
struct TracedUnit {
  std::string unit, target, key, nvcc_version;
  std::vector<std::string> kernels; // the kernels of the PTX it produced
  std::string controls_error;       // why controls meant for it were not applied
  std::vector<std::string> warnings; // cicc's warnings, normalised ("cicc warning ...")
};

/// Every unit record under `dir`/units; none when ciq-cicc did not run.
Result<std::vector<TracedUnit>> read_unit_trace(const std::string& dir);

/// The value of a ptxas objective over the traced kernels matching `glob`
/// (all when empty): summed over kernels (for registers: the maximum).
double trace_objective(const Objective& objective, const std::vector<TracedModule>& modules, const std::string& glob);

} // namespace ciq::tuner
