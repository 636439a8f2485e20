#include "cache/cli/entry_policy.h"

#include "utils/config.h"

namespace ciq::cache::cli {

spaces::Policy wrapper_policy() {
  spaces::Policy policy;
  policy.allow_unsafe = unsafe_allowed();
  return policy;
}

std::string with_unsafe_hint(const Error& refusal) {
  const std::string& message = refusal.message;
  if (refusal.code != ciq::errc::unsafe) return message;
  return message + " (the wrappers apply 'unsafe' knobs only with CIQ_ALLOW_UNSAFE=1 in their environment; set it "
                   "here too if your builds do)";
}

} // namespace ciq::cache::cli
