// Was the candidate compiled as asked? The trace that ciq-ptxas and
// ciq-cicc write for each build says whether the controls were applied
// (and to which kernels and translation units) and which warnings the
// compilers gave; a candidate whose controls were not applied, or that
// drew a warning the default build did not (a directive out of range and
// ignored, an option dropped), is invalid with the reason.
#pragma once

#include "spaces/control_set.h"
#include "tuner/objectives/objectives.h"

#include <map>
#include <mutex>
#include <set>
#include <string>
#include <vector>

namespace ciq::tuner {

/// The start of the reason of a candidate that drew a warning of its own.
inline constexpr const char* k_unhonoured = "not honoured by the compiler: ";

/// Why `trace` (ptxas' records; the NVVM stage's in <dir>/units/, none for
/// a unit whose cicc step the memo answered) shows that `controls` were not
/// compiled as asked: nothing compiled through ciq-ptxas, a control set
/// that did not apply, no kernel matched --kernels, an NVVM-stage control
/// set refused. "" when they were, and always when `compiler` is false
/// (parameters only: nothing to honour).
std::string trace_problem(const std::vector<TracedModule>& trace, const std::string& dir,
                          const spaces::ControlSet& controls, bool compiler);

/// What a warning says, without its numbers: "adjusting per thread register
/// count of 16 to lower bound of 24" is the author's own warning when the
/// default build says it of 8. "" for warnings that report on the compiled
/// code (--warn-on-spills and the like: the user asked for those, and a
/// candidate that spills was still compiled as asked).
std::string warning_kind(const std::string& warning);

/// The first of `warnings` whose kind (warning_kind(), not "") none of
/// `baseline` has; "" if none.
std::string first_added_warning(const std::vector<std::string>& warnings, const std::set<std::string>& baseline);

/// The check, for one run: the default build's warnings, and cicc's
/// warnings per NVVM-stage control set (a build whose cicc step the memo
/// answered writes no unit trace, so they are remembered). Safe to call
/// from several threads.
class HonouredCheck {
public:
  /// `compiler`: the space has compiler knobs; `baseline`: the warnings
  /// ptxas and cicc gave the default build (TuningSetup::baseline_warnings).
  HonouredCheck(bool compiler, std::set<std::string> baseline) : compiler_(compiler), baseline_(std::move(baseline)) {}

  /// Why the build whose trace is `trace` (in `dir`) did not compile
  /// `controls` as asked: trace_problem(), else k_unhonoured and the first
  /// warning (ptxas', then cicc's) the default build did not give. "" when
  /// it did.
  std::string why_not(const std::vector<TracedModule>& trace, const std::string& dir, const spaces::ControlSet& controls);

private:
  std::string added_warning(const std::vector<TracedModule>& trace, const std::string& dir,
                            const spaces::ControlSet& controls);

  const bool compiler_;
  const std::set<std::string> baseline_;
  std::mutex mutex_;
  std::map<std::string, std::vector<std::string>> nvvm_warnings_; // NVVM-stage control set text -> cicc's warnings
};

} // namespace ciq::tuner
