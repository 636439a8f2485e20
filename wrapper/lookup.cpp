#include "wrapper/lookup.h"

#include "utils/files.h"
#include "utils/text.h"

#include <spdlog/spdlog.h>

namespace ciq::wrapper {

cache::GpuRule gpu_rule() {
  std::string why;
  auto rule = cache::gpu_rule_from_environment(why);
  if (!why.empty()) spdlog::warn("{}", why);
  return rule;
}

std::optional<spaces::ControlSet> read_controls_file(const std::string& path, std::string* error) {
  auto text = read_file(path, 16 << 20); // never a FIFO's reader
  auto parsed = text ? spaces::parse_control_set(*text, path) : Result<spaces::ControlSet>(text.error());
  if (parsed) return std::move(*parsed);
  *error = parsed.error().message;
  spdlog::error("CIQ_CONTROLS: {}", *error);
  return std::nullopt;
}

spaces::ControlSet target_kernels(const spaces::ControlSet& set, const cache::PtxModule& module,
                                 const std::string& glob) {
  if (glob.empty()) return set;
  spaces::ControlSet out;
  out.space = set.space;
  bool matched = false;
  for (const auto& kernel : module.kernel_names()) {
    if (!glob_match(glob, kernel)) continue;
    matched = true;
    if (auto it = set.kernels.find(kernel); it != set.kernels.end()) out.kernels[kernel] = it->second;
  }
  if (matched) {
    out.options = set.options;
    out.acf = set.acf;
  }
  return out;
}

} // namespace ciq::wrapper
