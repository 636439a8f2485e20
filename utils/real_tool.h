// Finding the real compiler a wrapper stands in for (ptxas, nvcc) when no
// command line names it: the user's setting (CIQ_REAL_PTXAS, ...) first,
// else the tool's name on PATH, never one of ciq's own wrappers. One
// resolution, shared by the wrappers' start-up and by the tools that run
// a compiler for the user (ciq-tuner's `run --capture`), so that both run
// the binary the user configured, and nothing a file names.
#pragma once

#include "utils/config.h"
#include "utils/result.h"

#include <string>

namespace ciq {

/// A real tool found, and where from ("CIQ_REAL_PTXAS" or "PATH").
struct FoundTool {
  std::string path;
  std::string from;
};

/// The real `tool` ("ptxas"): the program `setting` names when set (a path,
/// or a name looked up on PATH), else `tool` on PATH skipping `exclude` (a
/// wrapper's own executable, links resolved; "" for none). Errors: "self"
/// ("CIQ_REAL_PTXAS=X is this wrapper; point it at the real ptxas": the
/// setting names `exclude`), "not-found" ("CIQ_REAL_PTXAS=X is not an
/// executable", or "cannot find the real ptxas on PATH (or set
/// CIQ_REAL_PTXAS)").
Result<FoundTool> find_real_tool(const char* tool, Env setting, const std::string& exclude = {});

} // namespace ciq
