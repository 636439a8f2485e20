// The one rule for `unsafe` knobs in ciq-cache: verify, import, merge and
// push judge an entry as the wrappers would apply it, and the wrappers apply
// an unsafe knob only when CIQ_ALLOW_UNSAFE=1 is in their environment
// (utils/config.h). `put --allow-unsafe` may store one; nothing else lets
// one through unless that variable is set.
#pragma once

#include "spaces/space.h"
#include "utils/result.h"

#include <string>

namespace ciq::cache::cli {

/// The wrappers' policy in this environment.
spaces::Policy wrapper_policy();

/// `refusal`'s message, with what to do when an unsafe knob caused it
/// (its code is errc::unsafe, as check_entry() keeps it).
std::string with_unsafe_hint(const Error& refusal);

} // namespace ciq::cache::cli
