#include "tuner/measure/honoured.h"

#include <algorithm>
#include <cctype>

namespace ciq::tuner {

std::string trace_problem(const std::vector<TracedModule>& trace, const std::string& dir,
                          const spaces::ControlSet& controls, bool compiler) {
  if (!compiler) return "";
  if (trace.empty())
    return "no kernels were compiled through ciq-ptxas (build with CUDACXX=ciq-nvcc or TRITON_PTXAS_PATH=ciq-ptxas, "
           "and make the build recompile: e.g. build into {workdir})";
  for (const auto& m : trace)
    if (!m.controls_error.empty()) return "controls not applied: " + m.controls_error;
  if (!controls.ptxas_stage().empty() &&
      std::none_of(trace.begin(), trace.end(), [](const auto& m) { return m.controls_applied; }))
    return "no compiled kernel matched --kernels, so the controls were not applied";
  if (!controls.nvcc.empty()) {
    auto units = read_unit_trace(dir);
    if (!units) return units.error().message;
    for (const auto& u : *units)
      if (!u.controls_error.empty()) return "NVVM-stage controls not applied to " + u.unit + ": " + u.controls_error;
  }
  return "";
}

std::string warning_kind(const std::string& warning) {
  for (const char* report : {"Registers are spilled to local memory", "Local memory used for function", "Double is being used"})
    if (warning.find(report) != std::string::npos) return "";
  std::string kind;
  for (char ch : warning)
    if (!std::isdigit(static_cast<unsigned char>(ch))) kind += ch;
    else if (kind.empty() || kind.back() != '#') kind += '#';
  return kind;
}

std::string first_added_warning(const std::vector<std::string>& warnings, const std::set<std::string>& baseline) {
  for (const auto& w : warnings) {
    std::string kind = warning_kind(w);
    if (kind.empty()) continue;
    if (std::none_of(baseline.begin(), baseline.end(), [&](const std::string& b) { return warning_kind(b) == kind; })) return w;
  }
  return "";
}

std::string HonouredCheck::why_not(const std::vector<TracedModule>& trace, const std::string& dir,
                                   const spaces::ControlSet& controls) {
  if (auto problem = trace_problem(trace, dir, controls, compiler_); !problem.empty()) return problem;
  if (auto warning = added_warning(trace, dir, controls); !warning.empty()) return k_unhonoured + warning;
  return "";
}

std::string HonouredCheck::added_warning(const std::vector<TracedModule>& trace, const std::string& dir,
                                         const spaces::ControlSet& controls) {
  if (!compiler_) return "";
  for (const auto& m : trace)
    if (auto w = first_added_warning(m.warnings, baseline_); !w.empty()) return w;
  spaces::ControlSet nvvm = controls.nvcc_stage();
  if (nvvm.options.empty()) return "";
  std::string stage = spaces::format_control_set(nvvm);
  auto units = read_unit_trace(dir);
  std::vector<std::string> warnings;
  if (units && !units->empty()) {
    for (const auto& u : *units) warnings.insert(warnings.end(), u.warnings.begin(), u.warnings.end());
    std::lock_guard lock(mutex_);
    nvvm_warnings_[stage] = warnings;
  } else {
    std::lock_guard lock(mutex_);
    if (auto it = nvvm_warnings_.find(stage); it != nvvm_warnings_.end()) warnings = it->second;
  }
  return first_added_warning(warnings, baseline_);
}

} // namespace ciq::tuner
