// Writing a whole buffer to a descriptor. Position-independent and free of
// other ciq code (libc only): libciq-inject, a shared object inside the
// user's program, writes its traces and captures with it too.
#pragma once

#include <cstddef>
#include <string_view>

namespace ciq {

/// Writes all of `data` to `fd`, retrying short writes and EINTR. False on
/// an error (errno says which) or when write(2) makes no progress (returns
/// 0 for a non-empty buffer), so that a caller never spins.
bool write_all(int fd, std::string_view data);

} // namespace ciq
