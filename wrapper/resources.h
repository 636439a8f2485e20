// What ptxas -v says about each kernel (registers, spills, stack, shared
// memory), for trace records and the tuner's ptxas objectives; and removing
// those lines again when ciq added -v and the caller did not ask for it.
#pragma once

#include "cache/compile_trace.h"

#include <map>
#include <string>
#include <string_view>
#include <vector>

namespace ciq::wrapper {

using cache::KernelResources; // the compile trace's (cache/compile_trace.h)

/// Resources of every entry function named in `verbose_output`.
std::map<std::string, KernelResources> parse_resources(std::string_view verbose_output);

/// The warnings in a compiler's stderr, one per line, as `<tool> warning...`
/// with the location dropped ("ptxas /tmp/x.ptx, line 5; warning : ..."
/// and "ptxas warning : ..." both read "ptxas warning : ..."): temporary
/// paths and line numbers differ from build to build, the message does not.
/// The tuner compares a candidate's with the default build's.
std::vector<std::string> compiler_warnings(std::string_view output, std::string_view tool);

/// `output` without the lines -v adds ("ptxas info ..." and the indented
/// stack-frame lines that follow "Function properties").
std::string strip_verbose_lines(std::string_view output);

} // namespace ciq::wrapper
