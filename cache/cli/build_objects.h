// What a build directory's objects were compiled against, as its build tool
// recorded it: for Ninja, its dependency log (`ninja -t deps`, the files
// nvcc's dependency files named, ciq's stamps among them); for make (and
// anything else that keeps nvcc's .d files), the first rule of each .d file
// under the directory. From that, which objects are stale: compiled with
// other controls than the cache applies now (a stamp newer than the object,
// a stamp gone, or the mark of a tuning build), which the next build
// compiles again.
#pragma once

#include "utils/result.h"

#include <cstdint>
#include <string>
#include <vector>

namespace ciq::cache::cli {

/// One object of a CUDA source, with what its dependencies say about ciq.
struct BuildObject {
  std::string path;                 // as the build tool names it
  std::vector<std::string> stamps;  // ciq's stamps (and pack files) among its dependencies
  enum class State { current, stale, no_stamps } state = State::no_stamps;
  std::string why;                  // for a stale object: which stamp, and how
};

struct BuildObjects {
  std::string source;  // "ninja's dependency log" or "N dependency files"
  std::vector<BuildObject> objects;
};

/// The CUDA objects (those with a .cu among their dependencies) of the build
/// in `build_dir`: from `ninja -t deps` where build.ninja is, else from the
/// .d files below it (at most a bounded number, and depth). Fails when the
/// directory cannot be read or ninja's log cannot be listed.
Result<BuildObjects> read_build_objects(const std::string& build_dir);

} // namespace ciq::cache::cli
