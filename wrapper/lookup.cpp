#include "wrapper/lookup.h"

#include "utils/text.h"

namespace ciq::wrapper {

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
