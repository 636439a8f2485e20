// Trace records for the tuner (CIQ_TRACE=<dir>): one JSON file per module
// ciq-ptxas compiled and per unit ciq-cicc compiled, each written
// atomically under a name no other process takes.
#pragma once

#include "cache/compile_trace.h"

#include <map>
#include <string>
#include <vector>

namespace ciq::wrapper {

// The records and their text are the compile trace's (cache/compile_trace.h);
// this file names and places the files.
using cache::TraceKernel;
using cache::TraceRecord;
using cache::UnitTraceRecord;

/// Writes `record` as <dir>/<time>-<pid>-<random>-<n>.json (utils/safe_open.h,
/// new_process_tag), never replacing a file; failures are logged only.
void write_trace(const std::string& dir, const TraceRecord& record);
/// Whether `dir` is (or can be made) a directory this process can write.
bool trace_dir_usable(const std::string& dir);

/// Writes `record` as <dir>/units/<time>-<pid>-<random>-<n>.json (apart from the
/// ptxas records, which readers of the trace take from <dir> itself).
void write_unit_trace(const std::string& dir, const UnitTraceRecord& record);

/// Writes `record` (a memoised tuning build's steps) as
/// <dir>/steps/<time>-<pid>-<random>-<n>.json.
void write_steps_trace(const std::string& dir, const cache::StepsRecord& record);

} // namespace ciq::wrapper
