#include "cache/cli/entry_policy.h"

#include "utils/config.h"

namespace ciq::cache::cli {

spaces::Policy wrapper_policy() {
  spaces::Policy policy;
  policy.allow_unsafe = unsafe_allowed();
  return policy;
}

std::string with_unsafe_hint(const std::string& message) {
  // spaces::check_knob's wording for an unsafe knob the policy refuses.
  if (message.find("changes program semantics and is not allowed") == std::string::npos) return message;
  return message + " (the wrappers apply 'unsafe' knobs only with CIQ_ALLOW_UNSAFE=1 in their environment; set it "
                   "here too if your builds do)";
}

} // namespace ciq::cache::cli
