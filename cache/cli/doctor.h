// `ciq-cache doctor BUILD_DIR`: what would keep tuned results from reaching
// the objects of a build directory, and which of its objects are stale now.
// It reads the directory as the build left it (CMakeCache.txt, the
// generator's files, ninja's dependency log or make's .d files) and the
// compiler cache as configured in this environment:
//   - the CUDA compiler (or launcher) is not ciq-nvcc: nothing is tuned;
//   - a compiler cache that can return an object compiled with other
//     controls: ccache without depend mode, sccache (which keys on the
//     command line and preprocessed source only);
//   - objects whose dependencies name no ciq stamp (compiled before, or
//     not through ciq-nvcc, or without a dependency file): a change of
//     the cache does not reach them;
//   - stamps in another cache directory than this one;
//   - stale objects (cli/build_objects.h): the next build compiles them.
// Each finding says what to do. Exit status 1 when there is a problem.
#pragma once

#include "utils/result.h"

#include <ostream>
#include <string>

namespace ciq::cache::cli {

/// Prints the findings for `build_dir` (text, or with `json` one object);
/// returns whether any is a problem. Fails when the directory cannot be read.
Result<bool> diagnose_build(const std::string& cache_dir, const std::string& build_dir, bool json, std::ostream& out);

} // namespace ciq::cache::cli
