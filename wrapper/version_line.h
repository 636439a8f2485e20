// `ciq-ptxas --version`: ptxas' own text, then one line more whenever ciq
// may apply controls, naming the state of what it would apply (the cache's
// generation, cache/generation.h; the packs, the remote, a tuning
// candidate and the settings that choose among entries). Programs that key
// their compiled kernels on the compiler's version text see a new compiler
// whenever that state changes: Triton's NVIDIA backend hashes the whole
// stdout of `$TRITON_PTXAS_PATH --version` into every kernel's cache key
// (docs/builds.md, "Triton and Inductor"), so a shipped or removed entry
// reaches the next run of a Triton program without clearing its cache.
//
// This is the one place a wrapper writes to stdout: the line follows
// ptxas' text, never replaces it, and holds no "release" (Triton reads the
// toolkit release from the first such line). With nothing ciq could apply
// (no store, no packs, no remote, no candidate) the text is ptxas' own,
// byte for byte: caches keyed on it are shared with plain ptxas, rightly,
// since every compile then is plain ptxas'.
#pragma once

#include "wrapper/start_up.h"

#include <string>
#include <vector>

namespace ciq::wrapper {

/// Whether `args` (after the tool's name) only ask for the version.
bool asks_version(const std::vector<std::string>& args);

/// Where entries may come from besides the local cache, as text that
/// changes when they do: each pack of CIQ_PACKS (its file identity), the
/// remote, a tuning candidate (its controls' digest, with CIQ_KERNELS);
/// "" when none.
std::string entry_sources_state();

/// The settings that choose among entries (CIQ_ALLOW_UNSAFE,
/// CIQ_GPU_POLICY, CIQ_GPU_MODEL), one "NAME=value" line each that is set.
std::string entry_choice_settings();

/// The line `ciq-ptxas --version` adds for the cache in `cache_dir` and
/// this environment, "\n"-terminated; "" when ciq could apply nothing.
/// Never fails: a part it cannot read is named as unreadable.
std::string version_state_line(const std::string& cache_dir);

/// Runs `plain` (the real ptxas asked for its version), copies its stdout
/// and adds `line` when it succeeded, and ends as it ended. When it cannot
/// be run, replaces this process with it, as if ciq were not there.
[[noreturn]] void print_version_with(const WrappedTool& tool, const std::string& real,
                                     const std::vector<std::string>& plain, const std::string& line);

} // namespace ciq::wrapper
